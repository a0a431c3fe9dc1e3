"""Local models as a laptop serves them (issue 38): one slot, slow answers, servers
that go on computing for a client that left, and structured modes honoured unevenly.
Each case runs the real `openai` SDK against the loopback server acting out what
llama-server and llama-cpp-python were seen to do."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.llm import CallTiming, DoorConfig, LLMClient, LLMRequest, ModelAccess
from memeval.llm.endpoint import Endpoint
from memeval.run.sweep import load_sweep
from memeval.selectors.claude import OpenAISelector
from memeval.testing import FakeMessagesServer
from tests._doors import open_door
from tests.test_openai_transport import MODEL, ask

QUICK = ("--scenario", "a-dbt-warehouse", "--limit", "2")  # the quick check of docs/models.md
ANSWER_S = 3.0  # a CPU model's answer time, scaled down


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    for name in ("MEMEVAL_MAX_CONCURRENCY", "MEMEVAL_TIMEOUT", "MEMEVAL_DEADLINE",
                 "MEMEVAL_REPLAY", "MEMEVAL_RECORD"):
        monkeypatch.delenv(name, raising=False)


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", "--quiet", "--out", str(tmp_path / "r"),
                                      *QUICK, "-j", "gold", *args])
    return result.exit_code, result.output


def rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in
            (tmp_path / "r" / "results.jsonl").read_text().splitlines()]


def config_json(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "r" / "config.json").read_text())


def llama_cpp_python(**kwargs) -> FakeMessagesServer:
    """One slot, slow, and computing on for clients that left."""
    return FakeMessagesServer(slots=1, latency=ANSWER_S, cancels_on_disconnect=False,
                              **kwargs)


# -- one slot, slow answers ------------------------------------------------------------

def test_a_one_slot_server_that_takes_3s_gets_one_call_at_a_time_and_the_run_succeeds(
        tmp_path):
    with llama_cpp_python() as server:
        code, output = run(tmp_path, "-s", f"openai:{MODEL}?base_url={server.url}/v1")
        held = server.peak_held
    assert code == 0, output
    assert "at most 1 at a time (the server's /props says total_slots=1)" in output
    assert held == 1  # the run's 16 units never queued more than the server's slot
    assert len(rows(tmp_path)) == 2 and not [r for r in rows(tmp_path) if r["selector_error"]]
    endpoint = config_json(tmp_path)["selectors"][0]
    assert (endpoint["timeout"], endpoint["deadline"], endpoint["concurrency"]) == (60, 80, 1)


def test_a_2s_deadline_fails_every_turn_naming_the_option_and_never_piles_up(tmp_path):
    with llama_cpp_python() as server:
        code, _ = run(tmp_path, "--deadline", "2", "-s", f"openai:{MODEL}?base_url={server.url}/v1")
        held, sent, left = server.peak_held, len(server.chat_requests()), server.abandoned
        busy = server.held  # still computing when the run returned?
    errors = [r["selector_error"] for r in rows(tmp_path)]
    assert code == 3 and len(errors) == 2
    assert all("deadline (2 s, retries included) passed" in e and "--deadline" in e
               for e in errors), errors
    assert held == 1, "an abandoned request kept its slot until the server finished it"
    assert sent == 2  # no retry of a timed-out call to a local server
    assert left == busy == 0  # the last one was waited out: nothing spills into the next run
    assert config_json(tmp_path)["config"]["llm"]["deadline"] == 2


def test_a_spec_sets_its_own_time_limits_and_concurrency(tmp_path):
    with llama_cpp_python() as server:
        spec = f"openai:{MODEL}?base_url={server.url}/v1&deadline=2&timeout=1.5&concurrency=1"
        code, output = run(tmp_path, "-s", spec)
    errors = [r["selector_error"] for r in rows(tmp_path)]
    assert code == 3 and all("per-attempt timeout (1.5 s)" in e and "--timeout" in e
                             for e in errors), errors
    assert "at most 1 at a time (concurrency=1 in the spec)" in output
    selector = config_json(tmp_path)["selectors"][0]
    assert (selector["timeout"], selector["deadline"]) == (1.5, 2)


def test_a_timed_out_call_to_a_local_server_is_not_sent_again():
    with llama_cpp_python() as server:
        door = open_door(Endpoint("openai", f"{server.url}/v1"), timeout=1.0, deadline=30)
        chosen = OpenAISelector(MODEL, client=door)
        result = asyncio.run(chosen.aselect(ask()))
        sent = len(server.chat_requests())
    assert not result.ok and "per-attempt timeout (1 s)" in result.error
    assert sent == 1  # the SDK would have tried five times


def test_time_limits_come_from_a_sweep_file(tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('selectors = ["bm25"]\n[llm]\ntimeout = 300\ndeadline = 900\n')
    options = load_sweep(sweep)["llm"]
    assert (options.timeout, options.deadline) == (300, 900)
    sweep.write_text("[llm]\ndeadline = -1\n")
    with pytest.raises(MemevalError, match=r"llm\.deadline = -1 must be a positive number"):
        load_sweep(sweep)


# -- identical requests ------------------------------------------------------------------

def test_identical_requests_in_flight_are_sent_once():
    request = LLMRequest(model=MODEL, max_tokens=50,
                         messages=({"role": "user", "content": "hello"},))
    with FakeMessagesServer(latency=0.3) as server:
        access = ModelAccess(DoorConfig(timing=CallTiming(max_retries=0)))
        client = LLMClient.of(access, Endpoint("openai", f"{server.url}/v1"))

        async def both():
            return await asyncio.gather(client.acomplete(request), client.acomplete(request))

        first, second = asyncio.run(both())
        sent = len(server.chat_requests())
    assert sent == 1 and first.ok and second.ok and first.text == second.text
    assert sorted(r.source for r in access.records) == ["api", "shared"]
    assert access.usage.calls == 1


def test_a_request_waiting_on_a_cancelled_identical_call_asks_itself():
    request = LLMRequest(model=MODEL, max_tokens=50,
                         messages=({"role": "user", "content": "hello again"},))
    with FakeMessagesServer(latency=0.5) as server:
        access = ModelAccess(DoorConfig(timing=CallTiming(max_retries=0)))
        client = LLMClient.of(access, Endpoint("openai", f"{server.url}/v1"))

        async def leader_cancelled():
            leader = asyncio.ensure_future(client.acomplete(request))
            await asyncio.sleep(0.1)
            follower = asyncio.ensure_future(client.acomplete(request))
            await asyncio.sleep(0.1)
            leader.cancel()
            return await follower

        answer = asyncio.run(leader_cancelled())
    assert answer.ok and answer.record.source == "api"


# -- structured modes that explain themselves ------------------------------------------

def test_a_server_that_rejects_json_schema_with_a_500_is_told_at_once(tmp_path):
    with FakeMessagesServer(reject_json_schema=True) as server:
        _, output = run(tmp_path, "-s", f"openai:{MODEL}?base_url={server.url}/v1")
        sent = len(server.chat_requests())
    errors = [r["selector_error"] for r in rows(tmp_path)]
    assert sent == len(errors) == 2  # one request per turn: a refusal is not retried
    assert all("rejected structured=json_schema" in e and "structured=tool" in e
               for e in errors)
    assert "structured=tool" in output and "Input should be 'text' or 'json_object'" in output


def test_a_server_that_drops_the_tool_is_said_to_ignore_it(tmp_path):
    with FakeMessagesServer(slots=1, drop_tools=True) as server:
        code, output = run(tmp_path, "-s",
                           f"openai:{MODEL}?base_url={server.url}/v1&structured=tool")
    assert code == 3
    assert "supports_tool_calls: false" in output  # told before the first call
    assert "ignored the forced tool and answered prose" in output
    assert all("ignored the forced tool" in r["selector_error"] for r in rows(tmp_path))


def test_a_prose_answer_names_its_reason_in_the_cli_output(tmp_path):
    with FakeMessagesServer(lambda body: "The testing memory looks right to me.") as server:
        code, output = run(tmp_path, "-s", f"openai:{MODEL}?base_url={server.url}/v1")
    assert code == 3
    listed = output[output.index("errors by cause"):]
    assert re.search(r"2× project: openai selector: invalid output .*answer is not JSON",
                     listed)
    assert listed.count("first error in full") == 1
    assert "The testing memory looks right to me." in listed  # the whole first error


def test_a_tool_call_cut_at_max_tokens_reads_as_a_cut_answer():
    def cut(body):
        return {"content": [{"type": "tool_use", "id": "c1", "name": "answer",
                             "input": '{"selected_memories": ["test'}],
                "stop_reason": "max_tokens", "usage": {"output_tokens": 256}}

    with FakeMessagesServer(cut, cut_tool_calls_as="tool_calls") as server:
        door = open_door(Endpoint("openai", f"{server.url}/v1"), max_retries=0)
        result = OpenAISelector(MODEL, structured="tool", client=door).select(ask())
        (sent,) = server.chat_requests()
    assert sent.body.get("tool_choice")
    assert not result.ok and "stop_reason max_tokens" in result.error
    assert "cut at max_tokens=256" in result.error and "tool_use" not in result.error


# -- the quick check is quick --------------------------------------------------------------

def test_the_quick_check_of_the_docs_runs_two_turns(tmp_path):
    docs = (Path(__file__).parents[1] / "docs" / "models.md").read_text()
    assert " ".join(QUICK) in docs and "--limit 5" not in docs
    code, output = run(tmp_path, "-s", "bm25")
    assert code == 0 and len(rows(tmp_path)) == 2, output


def test_a_messages_server_refusing_structured_output_is_told_once_through_anthropic():
    from memeval.selectors.claude import ClaudeSelector

    with FakeMessagesServer(reject_json_schema=True) as server:
        door = open_door(server.url, api_key="test-key-not-secret")
        result = ClaudeSelector(client=door).select(ask())  # the sync path
        fallback = ClaudeSelector(client=door, structured="tool").select(ask())
        sent = len(server.message_requests())
    assert not result.ok and "rejected structured=json_schema" in result.error
    assert "structured=tool" in result.error and "Extra inputs" in result.error
    assert fallback.ok and sent == 2  # the refusal was not retried; tool mode works
