"""Any model as selector or judge: the Chat Completions path, through the real `openai` SDK.

Every case talks to our loopback server's `/v1/chat/completions` (the same keyword
model and faults as its Messages API), so what is tested is the code a user runs
against Ollama, vLLM or OpenAI: translation at the edge, the three structured-output
modes, retries, server-scoped cache and cassette keys, and keys kept out of files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.judges import resolve_judge
from memeval.judges.base import JudgeRequest
from memeval.llm import LLMClient, LLMRequest
from memeval.llm.config import default_cache_path
from memeval.llm.endpoint import Endpoint
from memeval.llm.openai_chat import chat_body, message_body
from memeval.run.config import bundled_fixtures_dir
from memeval.selectors import resolve_selector
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import OpenAISelector
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door

MODEL = "qwen3:8b"
MANIFEST = ("- [project] testing.md (2026-01-01T00:00:00.000Z): how to run the test suite\n"
            "- [project] deploy.md (2026-01-01T00:00:00.000Z): release checklist for prod")
SCENARIO = str(bundled_fixtures_dir() / "scenarios" / "a-dbt-warehouse.yaml")


def ask(query: str = "how do I run the tests?") -> SelectionRequest:
    return SelectionRequest(query=query, manifest=MANIFEST, candidates=(),
                            memory_dir=Path("/tmp/mem"))


def door(server: FakeMessagesServer, **kwargs) -> LLMClient:
    return open_door(Endpoint("openai", f"{server.url}/v1"), max_retries=2,
                     cache=kwargs.pop("cache", None), **kwargs)


def selector(server: FakeMessagesServer, structured: str = "json_schema",
             **kwargs) -> OpenAISelector:
    return OpenAISelector(MODEL, structured=structured, client=door(server, **kwargs))


@pytest.mark.parametrize("structured", ["json_schema", "tool", "prompt"])
def test_each_structured_mode_gets_the_same_picks_through_the_openai_sdk(structured):
    with FakeMessagesServer() as server:
        result = selector(server, structured).select(ask())
        (sent,) = server.chat_requests()
    assert result.ok and result.names == ("testing.md",)
    body = sent.body
    assert body["model"] == MODEL and body["messages"][0]["role"] == "system"
    assert ("response_format" in body) == (structured == "json_schema")
    assert ("tools" in body) == (structured == "tool")
    assert ("JSON schema" in body["messages"][0]["content"]) == (structured == "prompt")
    assert sent.header("authorization") == "<redacted>"  # a placeholder key was sent


def test_a_server_that_drops_response_format_fails_json_schema_but_scores_in_prompt_mode():
    with FakeMessagesServer(honour_response_format=False) as server:
        strict = selector(server, "json_schema").select(ask())
        lenient = selector(server, "prompt").select(ask())
    assert not strict.ok and "invalid output" in strict.error
    assert lenient.ok and lenient.names == ("testing.md",)


def test_faults_are_retried_as_for_claude():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(429), Fault.http(500))
        result = selector(server).select(ask())
        assert result.ok and len(server.chat_requests()) == 3


def test_an_unrecoverable_error_is_recorded_not_raised():
    with FakeMessagesServer() as server:
        server.inject(*[Fault.http(500)] * 3)
        result = selector(server).select(ask())
    assert not result.ok and "HTTP 500" in result.error


def test_the_judge_grades_through_chat_completions(monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    monkeypatch.delenv("MEMEVAL_MAX_COST", raising=False)
    with FakeMessagesServer() as server:
        judge = resolve_judge(f"openai:{MODEL}?base_url={server.url}/v1&structured=tool")
        judgement = judge.score(JudgeRequest(
            turn_id="t1", query="how do I run the tests?", manifest=MANIFEST,
            selected=("testing.md",),
            contents={"testing.md": "run the test suite with pytest"}, candidates=()))
    assert judgement.error is None
    assert [v.verdict for v in judgement.verdicts] == ["relevant"]


def test_a_cache_never_serves_one_servers_answer_for_another_with_the_same_model(tmp_path):
    cache = tmp_path / "c.sqlite"
    with FakeMessagesServer() as first, FakeMessagesServer() as second:
        assert selector(first, cache=cache).select(ask()).ok
        again = selector(first, cache=cache).client.complete(
            selector(first).build_request(ask()))
        assert again.record.source == "cache"
        elsewhere = selector(second, cache=cache).select(ask())
        assert elsewhere.ok and len(second.chat_requests()) == 1  # 0 cache hits there


def test_loopback_test_answers_never_enter_the_users_default_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with FakeMessagesServer() as server:
        assert selector(server, cache=default_cache_path()).select(ask()).ok
        assert selector(server, cache=tmp_path / "mine.sqlite").select(ask()).ok
    from memeval.llm import ResponseCache

    assert len(ResponseCache(default_cache_path())) == 0
    assert len(ResponseCache(tmp_path / "mine.sqlite")) == 1


def test_a_cassette_replays_only_for_the_server_it_was_recorded_from(tmp_path):
    tape = tmp_path / "tape.jsonl"
    with FakeMessagesServer() as server, FakeMessagesServer() as other:
        live = selector(server, record=tape).select(ask())
        again = selector(server, replay=tape).select(ask())
        elsewhere = selector(other, replay=tape).select(ask())
        assert other.chat_requests() == []  # replay never calls out
    assert live.ok and again.names == live.names
    assert not elsewhere.ok and server.url in elsewhere.error and other.url in elsewhere.error
    line = json.loads(tape.read_text().splitlines()[0])
    assert line["endpoint"] == f"openai {server.url}/v1"


def test_api_key_env_names_the_variable_and_the_key_lands_nowhere(tmp_path, monkeypatch):
    secret = "sk-" + "local-0123456789abcdef"  # built, so scanners see no key
    monkeypatch.setenv("MY_LOCAL_KEY", secret)
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer() as server:
        spec = f"openai:{MODEL}?base_url={server.url}/v1&api_key_env=MY_LOCAL_KEY"
        code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "r"),
                                "--scenarios", SCENARIO, "-s", spec)
        assert server.chat_requests()
    assert code == 0, output
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    (chosen,) = [s for s in config["selectors"] if s["name"].startswith("openai:")]
    assert chosen["api_key_env"] == "MY_LOCAL_KEY" and chosen["transport"] == "openai"
    for path in (tmp_path / "r").rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path


def test_one_run_puts_a_claude_judge_over_a_local_selector(tmp_path, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer() as local, FakeMessagesServer() as claude:
        code, output = _memeval(
            "run", "--quiet", "--out", str(tmp_path / "r"), "--scenarios", SCENARIO,
            "-s", f"openai:{MODEL}?base_url={local.url}/v1",
            "-j", f"claude:claude-sonnet-4-6?base_url={claude.url}", "-j", "gold")
        chat, messages = len(local.chat_requests()), len(claude.message_requests())
    assert code == 0, output
    assert chat > 0 and messages > 0 and local.message_requests() == [] \
        and claude.chat_requests() == []
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    judged = [r for r in summary["overall"] if r["judge"].startswith("claude:")]
    assert judged and judged[0]["selector_error_rate"] == 0 and judged[0]["judge_error_rate"] == 0


def test_a_public_endpoint_without_its_key_stops_before_any_call(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMEVAL_REPLAY"):
        monkeypatch.delenv(name, raising=False)
    code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "r"),
                            "-s", "openai:gpt-5-mini")
    assert code == 2 and "$OPENAI_API_KEY" in output and "Traceback" not in output
    assert not (tmp_path / "r" / "results.jsonl").exists()


@pytest.mark.parametrize(("spec", "says"), [
    ("claude:qwen3", "openai:qwen3?base_url"),
    ("openai", "needs its model"),
    ("claude:claude-sonnet-4-6?seed=3", "no sampling seed"),
    ("openai:m?structured=xml", "json_schema, tool, prompt"),
    ("openai:m?base_url=ftp://host", "http(s)://host"),
    ("openai:m?api_key_env=sk-live-123", "NAME of an environment variable"),
])
def test_a_spec_that_cannot_work_fails_before_any_call(spec, says, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(MemevalError) as caught:
        resolve_selector(spec)
    assert says in str(caught.value)
    assert "sk-live-123" not in str(caught.value)


def test_sampling_params_are_sent_and_keyed():
    with FakeMessagesServer() as server:
        spec = f"openai:{MODEL}?base_url={server.url}/v1&temperature=0&top_p=0.9&seed=7"
        chosen = resolve_selector(spec)
        request = chosen.build_request(ask())
        assert chosen.select(ask()).ok
        (sent,) = server.chat_requests()
    assert (sent.body["temperature"], sent.body["top_p"], sent.body["seed"]) == (0, 0.9, 7)
    plain = resolve_selector(f"openai:{MODEL}?base_url=http://127.0.0.1:9/v1")
    assert request.key() != plain.build_request(ask()).key()


def test_chat_translation_both_ways():
    request = LLMRequest(model="gpt-5-mini", max_tokens=64, system="be brief",
                         messages=({"role": "user", "content": [
                             {"type": "text", "text": "a", "cache_control": {"type": "x"}},
                             {"type": "text", "text": "b"}]},),
                         output_schema={"type": "object"})
    official = chat_body(request.to_params(), official=True)
    local = chat_body(request.to_params(), official=False)
    assert official["max_completion_tokens"] == 64 and "max_tokens" not in official
    assert local["max_tokens"] == 64
    assert official["messages"] == [{"role": "system", "content": "be brief"},
                                    {"role": "user", "content": "a\n\nb"}]
    assert official["response_format"]["json_schema"]["schema"] == {"type": "object"}
    back = message_body({"id": "c1", "model": "m", "choices": [
        {"message": {"content": None, "refusal": "no"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2,
                  "prompt_tokens_details": {"cached_tokens": 4}}})
    assert back["stop_reason"] == "refusal" and back["content"] == []
    assert back["usage"] == {"input_tokens": 6, "output_tokens": 2,
                             "cache_read_input_tokens": 4, "cache_creation_input_tokens": 0}
    broken = message_body({"choices": [{"message": {"tool_calls": [
        {"function": {"name": "answer", "arguments": "{not json"}}]},
        "finish_reason": "tool_calls"}]})
    assert broken["content"] == [{"type": "text", "text": "{not json"}]
    assert broken["stop_reason"] == "tool_use"


def _memeval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_an_unpriced_model_costs_unknown_not_zero_and_a_cached_rerun_says_so(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    with FakeMessagesServer() as server:
        spec = f"openai:{MODEL}?base_url={server.url}/v1"
        first = CliRunner().invoke(cli, ["run", "--quiet", "--out", str(tmp_path / "a"),
                                         "--scenarios", SCENARIO, "-s", spec])
        again = CliRunner().invoke(cli, ["run", "--quiet", "--out", str(tmp_path / "b"),
                                         "--scenarios", SCENARIO, "-s", spec])
        calls = len(server.chat_requests())
    assert first.exit_code == 0 and again.exit_code == 0, first.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["llm"]["unpriced"] == calls > 0 and summary["llm"]["cost_usd"] == 0
    assert "cost is unknown" in first.output and "--prices" in first.output
    html = (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    door = html[html.index("Model door:"):].split("</p>")[0]
    assert f"cost unknown ({calls} unpriced calls)" in door and "$" not in door
    assert "no model was called" in again.output and "no model was called" not in first.output


def test_the_structured_output_failure_rate_is_a_figure_per_selector(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer(honour_response_format=False) as server:
        code, output = _memeval(
            "run", "--quiet", "--out", str(tmp_path / "r"), "--scenarios", SCENARIO,
            "-s", f"openai:{MODEL}?base_url={server.url}/v1",
            "-s", f"openai:{MODEL}?base_url={server.url}/v1&structured=prompt")
    assert code == 3, output  # every turn of the first selector errored
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    rates = {r["selector"].endswith("structured=prompt"): r["selector_invalid_output_rate"]
             for r in summary["overall"]}
    assert rates == {False: 1.0, True: 0.0}
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "not the JSON asked for: selector 100 %" in html


def test_max_cost_with_an_unpriced_local_model_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer() as server:
        code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "r"),
                                "--scenarios", SCENARIO, "--max-cost", "1",
                                "-s", f"openai:{MODEL}?base_url={server.url}/v1")
        assert server.chat_requests() == []
    assert code == 2 and f"no price for {MODEL}" in output and "--prices" in output
    assert output.count("\n") == 1
    prices = tmp_path / "local.json"
    prices.write_text(json.dumps({"models": {MODEL: {"input": 0, "output": 0}}}))
    with FakeMessagesServer() as server:
        code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "priced"),
                                "--scenarios", SCENARIO, "--max-cost", "1",
                                "--prices", str(prices),
                                "-s", f"openai:{MODEL}?base_url={server.url}/v1")
    assert code == 0, output


def _digest(value: str) -> str:
    import hashlib

    return hashlib.sha256(value.encode()).hexdigest()


def test_the_async_path_works_too():
    import asyncio

    with FakeMessagesServer() as server:
        result = asyncio.run(selector(server, "tool").aselect(ask()))
    assert result.ok and result.names == ("testing.md",)


def test_a_dummy_key_of_a_local_server_does_not_corrupt_answers(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "ollama")  # what Ollama's docs suggest
    request = SelectionRequest(
        query="how do I set up ollama?", candidates=(), memory_dir=Path("/tmp/mem"),
        manifest="- [project] ollama-setup.md (2026-01-01T00:00:00.000Z): ollama setup")
    with FakeMessagesServer() as server:
        result = selector(server).select(request)
    assert result.ok and result.names == ("ollama-setup.md",)


def test_a_key_the_server_echoes_is_redacted_everywhere(tmp_path, monkeypatch):
    secret = "sk-" + "or-v1-0123456789abcdef0123"
    monkeypatch.setenv("ROUTER_KEY", secret)
    echo = json.dumps({"selected_memories": [f"{secret}.md", "testing.md"]})
    tape = tmp_path / "tape.jsonl"
    with FakeMessagesServer(lambda body: echo) as server:
        chosen = OpenAISelector(MODEL, api_key_env="ROUTER_KEY", client=open_door(
            Endpoint("openai", f"{server.url}/v1", "ROUTER_KEY"),
            cache=tmp_path / "c.sqlite", record=tape))
        result = chosen.select(ask())
        (sent,) = server.chat_requests()
    assert sent.auth_sha256 == _digest(f"Bearer {secret}")  # the named key was sent
    assert result.ok and secret not in "".join(result.names)
    for path in (tape, tmp_path / "c.sqlite"):
        assert secret.encode() not in path.read_bytes()


def test_a_named_but_unset_key_variable_sends_a_placeholder_not_another_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "personal-account-0123456789")
    monkeypatch.delenv("WORK_KEY", raising=False)
    with FakeMessagesServer() as server:
        door = open_door(Endpoint("openai", f"{server.url}/v1", "WORK_KEY"))
        OpenAISelector(MODEL, client=door).select(ask())
        (sent,) = server.chat_requests()
    assert sent.auth_sha256 == _digest("Bearer no-key-needed")


@pytest.mark.parametrize("spec", [
    "openai:m?base_url=https://openrouter.ai/api/v1&api_key_env=ROUTER_KEY_UNSET",
    "openai:m?base_url=https://gpu-box.example.org/v1",
])
def test_a_remote_server_without_its_key_stops_before_any_call(spec, tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "ROUTER_KEY_UNSET", "MEMEVAL_REPLAY"):
        monkeypatch.delenv(name, raising=False)
    code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "r"), "-s", spec)
    assert code == 2 and "is not set" in output and "Traceback" not in output


def test_a_200_without_choices_is_an_unusable_answer_not_invalid_output():
    with FakeMessagesServer() as server:
        server.inject(Fault("empty"))
        result = selector(server).select(ask())
    assert not result.ok and "unusable answer" in result.error
    assert "invalid output" not in result.error


@pytest.mark.parametrize(("base_url", "hidden"), [
    ("https://x.openai.azure.com/openai/v1?api-key=SECRET123", "SECRET123"),
    ("ftp://user:pw@h/", "pw"),
])
def test_a_url_with_credentials_is_refused_without_echoing_them(base_url, hidden):
    with pytest.raises(MemevalError) as caught:
        Endpoint("openai", base_url)
    assert hidden not in str(caught.value)


def test_a_key_given_as_api_key_env_is_refused():
    with pytest.raises(MemevalError) as caught:
        Endpoint("openai", None, "gsk_AbCdEf0123456789")
    assert "AbCdEf" not in str(caught.value)


def test_a_missing_openai_extra_is_a_spec_error_naming_the_install(monkeypatch):
    import memeval.llm.openai_chat as chat

    def absent(name: str):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(chat.importlib, "import_module", absent)
    with pytest.raises(MemevalError) as caught:
        resolve_selector("openai:m?base_url=http://localhost:11434/v1")
    assert "pip install 'openai>=1.40'" in str(caught.value)


def test_spec_prices_make_a_local_model_budgetable_and_costed(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer() as server:
        spec = f"openai:{MODEL}?base_url={server.url}/v1&price_in=1&price_out=2"
        code, output = _memeval("run", "--quiet", "--out", str(tmp_path / "r"),
                                "--scenarios", SCENARIO, "--max-cost", "5", "-s", spec)
    assert code == 0, output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    usage = summary["llm"]
    expected = (usage["input_tokens"] * 1 + usage["output_tokens"] * 2) / 1e6
    assert usage["unpriced"] == 0 and expected > 0
    assert usage["cost_usd"] == pytest.approx(expected)
    with pytest.raises(MemevalError) as caught:
        resolve_selector(f"openai:{MODEL}?base_url=http://127.0.0.1:9/v1&price_in=1")
    assert "both price_in and price_out" in str(caught.value)
