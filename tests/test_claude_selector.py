"""The Claude side-query selector, driven through the real SDK against the fake server."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise
from pathlib import Path

import pytest

from memeval.llm.templates import PromptTemplateError
from memeval.selectors.base import SelectionRequest, Selector
from memeval.selectors.claude import (
    DEFAULT_SELECTOR_MODEL,
    SELECTION_SCHEMA,
    ClaudeSelector,
    build_user_message,
    manifest_filename,
    removed_lines,
)
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door

KEY = "test-key-not-secret"
MANIFEST = ("- [feedback] testing.md (2026-11-30T12:00:00.000Z): run tests against a real db\n"
            "- [user] role.md (2026-11-29T12:00:00.000Z): user is a data scientist\n"
            "- deploy.md (2026-11-28T12:00:00.000Z): deploy steps for the staging database")


def ask(query: str = "how do I run the tests?", *, tools: tuple[str, ...] = (),
        manifest: str = MANIFEST, memdir: str = "/tmp/mem", repeat: int = 0) -> SelectionRequest:
    return SelectionRequest(query=query, manifest=manifest, candidates=(),
                            memory_dir=Path(memdir), recent_tools=tools, repeat=repeat)


def selector(server: FakeMessagesServer | None, **kwargs) -> ClaudeSelector:
    client = open_door(server.url if server else "http://127.0.0.1:9", api_key=KEY,
                     max_retries=kwargs.pop("max_retries", 2),
                    record=kwargs.pop("record", None), replay=kwargs.pop("replay", None),
                    cache=kwargs.pop("cache", None), batches=kwargs.pop("batches", False),
                    poll_interval=0.01)
    return ClaudeSelector(client=client, **kwargs)


def test_is_a_selector_with_the_reference_defaults(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_DEFAULT_SONNET_MODEL", raising=False)
    chosen = ClaudeSelector()
    assert isinstance(chosen, Selector)
    assert chosen.model == DEFAULT_SELECTOR_MODEL == "claude-sonnet-4-6"
    assert chosen.name == "claude:claude-sonnet-4-6"
    monkeypatch.setenv("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-9")
    assert ClaudeSelector().model == "claude-sonnet-9"
    assert ClaudeSelector("claude-haiku-4-5").model == "claude-haiku-4-5"


def test_request_shape_on_the_wire():
    with FakeMessagesServer() as server:
        chosen = selector(server)
        chosen.select(ask())
    (sent,) = server.message_requests()
    body = sent.body
    assert body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 256
    assert "temperature" not in body
    assert body["output_config"] == {"format": {"type": "json_schema",
                                                "schema": SELECTION_SCHEMA}}
    assert SELECTION_SCHEMA["required"] == ["selected_memories"]
    assert SELECTION_SCHEMA["additionalProperties"] is False
    assert body["system"] == chosen.system_prompt
    assert body["messages"] == [{"role": "user", "content":
                                 f"Query: how do I run the tests?\n\nAvailable memories:\n"
                                 f"{MANIFEST}"}]


def test_tools_line_only_when_tools_exist():
    assert build_user_message("q", "m") == "Query: q\n\nAvailable memories:\nm"
    assert build_user_message("q", "m", ("Bash", "Read")) == (
        "Query: q\n\nAvailable memories:\nm\n\nRecently used tools: Bash, Read")
    with FakeMessagesServer() as server:
        selector(server).select(ask(tools=("Bash", "Read")))
    content = server.message_requests()[0].body["messages"][0]["content"]
    assert content.endswith("\n\nRecently used tools: Bash, Read")


def test_names_kept_in_model_order_unfiltered():
    answer = '{"selected_memories": ["role.md", "nope.md", "role.md", "testing.md"]}'
    with FakeMessagesServer(lambda body: answer) as server:
        result = selector(server).select(ask())
    assert result.ok and result.names == ("role.md", "nope.md", "role.md", "testing.md")
    assert result.raw_output == answer and result.usage.calls == 1


def test_keyword_model_gives_a_meaningful_pick_and_an_empty_one():
    with FakeMessagesServer() as server:
        chosen = selector(server)
        picked = chosen.select(ask("deploy to staging"))
        empty = chosen.select(ask("what's the weather like"))
    assert picked.names == ("deploy.md",)
    assert empty.ok and empty.names == () and empty.error is None


@pytest.mark.parametrize(("answer", "fragment"), [
    ("sure, testing.md", "not JSON"),
    ('["testing.md"]', "expected an object"),
    ('{"memories": ["testing.md"]}', "lacks 'selected_memories'"),
    ('{"selected_memories": "testing.md"}', "expected a list"),
    ('{"selected_memories": ["test', "not JSON"),
])
def test_malformed_output_is_a_recorded_error_not_an_empty_pick(answer, fragment):
    with FakeMessagesServer(lambda body: answer) as server:
        result = selector(server).select(ask())
    assert not result.ok and result.names == ()
    assert fragment in result.error and result.error.startswith("claude selector:")
    assert result.raw_output == answer and result.usage.calls == 1


def test_api_failure_is_a_recorded_error():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(500))
        result = selector(server, max_retries=0).select(ask())
    assert not result.ok and "HTTP 500" in result.error and result.names == ()


def test_refusal_is_a_recorded_error():
    def refuse(body):
        return {"content": [{"type": "text", "text": ""}], "stop_reason": "refusal"}

    with FakeMessagesServer(refuse) as server:
        result = selector(server).select(ask())
    assert not result.ok and "refused" in result.error


def test_retry_then_success_on_529():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(529))
        result = selector(server).select(ask())
    assert result.ok and result.names == ("testing.md",)
    assert len(server.message_requests()) == 2


def test_cache_hit_on_rerun_server_sees_nothing(tmp_path):
    with FakeMessagesServer() as server:
        first = selector(server, cache=tmp_path / "c.sqlite").select(ask())
        calls = len(server.requests)
        again = selector(server, cache=tmp_path / "c.sqlite").select(ask())  # same endpoint
        assert len(server.requests) == calls and again.names == first.names
    assert again.usage.calls == 0 and again.usage.cached == 1


def test_malformed_answer_is_not_cached(tmp_path):
    with FakeMessagesServer(lambda body: "oops") as server:
        selector(server, cache=tmp_path / "c.sqlite").select(ask())
    with FakeMessagesServer() as server:
        result = selector(server, cache=tmp_path / "c.sqlite").select(ask())
    assert result.ok and len(server.message_requests()) == 1


def test_replay_with_no_server(tmp_path):
    tape = tmp_path / "selector.jsonl"
    with FakeMessagesServer() as server:
        live = selector(server, record=tape).select(ask())
    replayed = selector(server, replay=tape).select(ask())  # it is down
    assert replayed.names == live.names == ("testing.md",)
    missed = selector(server, replay=tape).select(ask("something new"))
    assert not missed.ok and "CassetteMiss" in missed.error


def test_aselect_matches_select():
    with FakeMessagesServer() as server:
        chosen = selector(server)
        result = asyncio.run(chosen.aselect(ask("who is the user, a scientist?")))
    assert result.names == ("role.md",)


def test_select_many_through_message_batches():
    requests = [ask(), ask("deploy to staging"), ask("what's the weather like")]
    with FakeMessagesServer() as server:
        results = selector(server, batches=True).select_many(requests)
    assert [r.names for r in results] == [("testing.md",), ("deploy.md",), ()]
    assert server.requests[0].path == "/v1/messages/batches"
    assert not server.message_requests()


def test_prompt_variants_user_template_and_hash(tmp_path):
    hashes = {name: ClaudeSelector(prompt=name).prompt_hash
              for name in ("conservative", "recall", "staleness")}
    assert len(set(hashes.values())) == 3
    assert "5" in ClaudeSelector().system_prompt
    own = tmp_path / "mine.j2"
    own.write_text("Pick up to {{ max_memories }} memories.")
    mine = ClaudeSelector(prompt=str(own))
    assert mine.system_prompt == "Pick up to 5 memories."
    assert mine.config()["prompt"] == mine.prompt_name == str(own)
    assert mine.config()["prompt_hash"].startswith("sha256:")
    assert ClaudeSelector(prompt="recall").name == "claude:claude-sonnet-4-6?prompt=recall"
    with pytest.raises(PromptTemplateError, match="neither a bundled prompt"):
        ClaudeSelector(prompt="no-such-prompt")
    broken = tmp_path / "broken.j2"
    broken.write_text("{{ unknown_value }}")
    with pytest.raises(PromptTemplateError, match="unknown_value"):
        ClaudeSelector(prompt=str(broken))


def test_stateful_one_conversation_per_memdir_with_cached_manifest():
    with FakeMessagesServer() as server:
        chosen = selector(server, stateful=True)
        first = chosen.select(ask("run the tests"))
        second = chosen.select(ask("deploy to staging", tools=("Bash",)))
        other = chosen.select(ask("run the tests", memdir="/tmp/other"))
    assert chosen.name.endswith("?stateful=1")
    assert (first.names, second.names, other.names) == (("testing.md",), ("deploy.md",),
                                                        ("testing.md",))
    one, two, three = (r.body for r in server.message_requests())
    opening = one["messages"][0]["content"]
    assert opening[0] == {"type": "text", "text": f"Available memories:\n{MANIFEST}",
                          "cache_control": {"type": "ephemeral"}}
    assert opening[1]["text"] == "Query: run the tests"
    assert [m["role"] for m in two["messages"]] == ["user", "assistant", "user"]
    assert two["messages"][1]["content"] == first.raw_output
    assert two["messages"][2]["content"] == [
        {"type": "text", "text": "Query: deploy to staging\n\nRecently used tools: Bash",
         "cache_control": {"type": "ephemeral"}}]
    assert second.usage.cache_read_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert len(three["messages"]) == 1


def breakpoints(body: dict) -> list[tuple[int, int]]:
    """(message, block) positions carrying cache_control in a request body."""
    return [(m, b) for m, message in enumerate(body["messages"])
            if isinstance(message["content"], list)
            for b, block in enumerate(message["content"]) if "cache_control" in block]


def test_stateful_names_removed_files_instead_of_restating():
    smaller = MANIFEST.split("\n", 1)[1]  # testing.md surfaced and left the manifest
    smallest = smaller.split("\n", 1)[1]
    with FakeMessagesServer() as server:
        chosen = selector(server, stateful=True)
        chosen.select(ask("run the tests"))
        second = chosen.select(ask("deploy to staging", manifest=smaller))
        chosen.select(ask("who is the user", manifest=smallest))
    _, two, three = (r.body for r in server.message_requests())
    (block,) = two["messages"][-1]["content"]
    assert "Available memories" not in block["text"] and "role.md" not in block["text"]
    assert block["text"] == ("These memories are no longer available and cannot be selected:\n"
                             "- testing.md\n\nQuery: deploy to staging")
    # the manifest's breakpoint and the newest turn's; from turn 3 the previous turn's too
    assert breakpoints(two) == [(0, 0), (2, 0)]
    assert breakpoints(three) == [(0, 0), (2, 0), (4, 0)]
    assert three["messages"][2]["content"][0]["text"] == block["text"]
    assert three["messages"][-1]["content"][0]["text"] == (
        "These memories are no longer available and cannot be selected:\n"
        "- role.md\n\nQuery: who is the user")
    assert second.usage.cache_read_input_tokens > 0


def test_stateful_restates_a_manifest_with_an_added_or_changed_file_and_resets():
    added = "- [project] new.md (2026-12-01T12:00:00.000Z): the new plan\n" + MANIFEST
    changed = MANIFEST.replace("user is a data scientist", "user is a data engineer")
    with FakeMessagesServer() as server:
        chosen = selector(server, stateful=True)
        chosen.select(ask("run the tests"))
        chosen.select(ask("deploy to staging", manifest=added))
        chosen.select(ask("who is the user", manifest=changed))
        chosen.reset()
        chosen.select(ask("run the tests"))
    _, grown, edited, fresh = (r.body for r in server.message_requests())
    assert grown["messages"][-1]["content"] == [
        {"type": "text", "text": build_user_message("deploy to staging", added),
         "cache_control": {"type": "ephemeral"}}]
    assert edited["messages"][-1]["content"][0]["text"] == build_user_message(
        "who is the user", changed)
    assert breakpoints(edited) == [(0, 0), (2, 0), (4, 0)]
    assert len(fresh["messages"]) == 1


def test_stateful_long_conversation_keeps_three_breakpoints_and_reads_its_history():
    with FakeMessagesServer() as server:
        chosen = selector(server, stateful=True)
        results = [chosen.select(ask(f"run the tests, take {n}")) for n in range(6)]
    last = server.message_requests()[-1].body
    assert breakpoints(last) == [(0, 0), (8, 0), (10, 0)]  # the API allows four
    reads = [r.usage.cache_read_input_tokens for r in results]
    assert reads[0] == 0 and all(a < b for a, b in pairwise(reads))


def test_removed_lines_only_for_a_pure_removal():
    lines = MANIFEST.split("\n")
    assert removed_lines(MANIFEST, "\n".join(lines[::2])) == [lines[1]]
    assert removed_lines(MANIFEST, MANIFEST) == []
    assert removed_lines(MANIFEST, "") == lines
    assert removed_lines(MANIFEST, "\n".join(reversed(lines))) is None  # reordered
    assert removed_lines(MANIFEST, MANIFEST + "\n- x.md (2026-01-01T00:00:00.000Z)") is None
    assert removed_lines("", MANIFEST) is None


@pytest.mark.parametrize(("line", "name"), [
    ("- [feedback] testing.md (2026-11-30T12:00:00.000Z): run tests", "testing.md"),
    ("- notes/a b (draft).md (2026-11-30T12:00:00.000Z)", "notes/a b (draft).md"),
    ("- x.md (+275760-09-13T00:00:00.000Z): far future", "x.md"),
    ("not a manifest line", "not a manifest line"),
])
def test_manifest_filename(line, name):
    assert manifest_filename(line) == name


def test_stateful_failed_turn_does_not_join_the_conversation():
    with FakeMessagesServer() as server:
        chosen = selector(server, stateful=True, max_retries=0)
        chosen.select(ask("run the tests"))
        server.inject(Fault.http(500))
        failed = chosen.select(ask("deploy to staging"))
        chosen.select(ask("who is the user"))
    assert not failed.ok
    last = server.message_requests()[-1].body["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert json.loads(last[1]["content"]) == {"selected_memories": ["testing.md"]}


def test_through_the_session_invalid_names_are_dropped_and_errors_recorded(tmp_path):
    from memeval.session import Session

    answer = '{"selected_memories": ["testing.md", "ghost.md", "MEMORY.md"]}'
    with FakeMessagesServer(lambda body: answer) as server:
        session = Session(tmp_path / "base", "/home/dev/shop", selector=selector(server),
                          now_ms=1_800_000_000_000)
        memdir = session.project_memory_dir
        memdir.mkdir(parents=True)
        (memdir / "MEMORY.md").write_text("- [testing](testing.md)\n")
        (memdir / "testing.md").write_text(
            "---\nname: testing\ndescription: run tests against a real db\ntype: feedback\n"
            "---\nAlways use the real database.\n")
        (memdir / "ci.md").write_text("---\ndescription: the CI pipeline runs nightly\n---\nx\n")
        record = session.turn("how do I run the tests?", turn_id="t1")
        server.inject(Fault.http(500), Fault.http(500), Fault.http(500))
        failed = session.turn("and the integration tests?", turn_id="t2")
    assert record.surfaced_keys == ("testing.md",)
    assert {d.name for d in record.dropped} >= {"ghost.md", "MEMORY.md"}
    sent = server.message_requests()[0].body["messages"][0]["content"]
    assert "testing.md" in sent and "MEMORY.md" not in sent.split("Available memories:")[1]
    assert failed.selector_called and failed.surfaced == ()  # ci.md was still a candidate
    assert any("HTTP 500" in e for e in failed.errors)


def test_temperature_from_the_spec_reaches_the_request():
    from memeval.selectors import resolve_selector

    with FakeMessagesServer() as server:
        chosen = resolve_selector("claude?temperature=0.3")
        chosen._client = selector(server)._client
        chosen.select(ask())
        plain = resolve_selector("claude")
        plain._client = chosen._client
        plain.select(ask("another question"))
    bodies = [r.body for r in server.message_requests()]
    assert bodies[0]["temperature"] == 0.3 and "temperature" not in bodies[1]
    assert chosen.name == "claude:claude-sonnet-4-6?temperature=0.3"
