"""The selector call: what it is shown, and how its answer is validated (SPEC §2.5)."""

from __future__ import annotations

import asyncio

import pytest
from _session_world import make_world

from memeval.selectors.base import SelectionResult
from memeval.selectors.testing import (
    AdversarialSelector,
    EverythingSelector,
    FixedSelector,
    Move,
    ScriptedSelector,
)
from memeval.session import ToolEvent, recent_successful_tools
from memeval.usage import Usage


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path)
    for i in range(8):
        w.write(w.project_dir, f"m{i}.md", age_days=i)
    return w


# --- recently used tools: success and failure windows -----------------------------
def ev(tool, ok=True):
    return ToolEvent(tool, ok)


@pytest.mark.parametrize(("events", "expected"), [
    ([], ()),
    ([ev("Bash"), ev("Read"), ev("Grep")], ("Grep", "Read", "Bash")),  # most recent first
    ([ev("Bash"), ev("Read"), ev("Bash")], ("Bash", "Read")),  # deduplicated at latest use
    ([ev("Bash"), ev("Bash", False), ev("Read")], ("Read",)),  # one error excludes
    ([ev("Bash", False), ev("Bash")], ()),  # even an earlier one
    ([ev("Bash", None)], ()),  # no result yet: outcome unknown
    ([ev("Read"), ev("Bash", None)], ("Read",)),
    ([ev("Bash"), ev("Read"), ev("Bash", None)], ("Read", "Bash")),  # resultless use ignored
])
def test_recent_tools_have_a_result_and_no_error_most_recent_first(events, expected):
    assert recent_successful_tools(events) == expected


def test_the_selector_is_told_the_recent_tools_of_the_window(world):
    selector = EverythingSelector()
    session = world.session(selector)
    session.turn("first question here", tool_events=[
        {"tool": "Bash"}, {"tool": "mcp__db__query", "ok": False}, {"tool": "Grep"}])
    session.turn("second question here")  # a new window: no tools
    assert [r.recent_tools for r in selector.requests] == [("Grep", "Bash"), ()]


def test_the_request_carries_query_manifest_candidates_and_surfaced(world):
    selector = FixedSelector(["m0.md"])
    session = world.session(selector)
    session.turn("first question", turn_id="t1", repeat=2)
    session.turn("second question", turn_id="t2")
    first, second = selector.requests
    assert first.query == "first question" and first.turn_id == "t1" and first.repeat == 2
    assert first.manifest.splitlines()[0].startswith("- m0.md (")
    assert first.filenames == tuple(f"m{i}.md" for i in range(8))
    assert second.already_surfaced == frozenset({str(world.project_dir / "m0.md")})
    assert "m0.md" not in second.filenames


def test_the_session_never_hands_labels_to_a_selector(world):
    selector = EverythingSelector()
    world.session(selector).turn("a question")
    request = selector.requests[0]
    assert not any("gold" in name or "relevant" in name
                   for name in request.__dataclass_fields__)


# --- validation of the answer ----------------------------------------------------
def test_names_keep_the_selector_order_and_unknown_names_are_dropped(world):
    record = world.session(FixedSelector(["m3.md", "nope.md", "m1.md"])).turn("a question")
    assert record.surfaced_keys == ("m3.md", "m1.md")
    assert [(d.name, d.reason) for d in record.dropped] == [("nope.md", "not-a-candidate")]
    assert record.errors == ()


def test_more_than_five_names_are_capped_at_five(world):
    record = world.session(EverythingSelector()).turn("a question")
    assert len(record.surfaced) == 5
    assert [d.name for d in record.dropped if d.reason == "over-cap"] == ["m5.md", "m6.md", "m7.md"]


def test_an_empty_answer_is_not_an_error(world):
    record = world.session(FixedSelector([])).turn("a question")
    assert record.surfaced == () and record.errors == () and record.skipped is None
    assert record.dirs[0].called and record.dirs[0].error is None


def test_a_raising_selector_is_an_error_not_an_empty_pick(world):
    record = world.session(ScriptedSelector({}, default=RuntimeError("API down"))).turn("a b")
    assert record.surfaced == ()
    assert record.dirs[0].error == "RuntimeError: API down"
    assert len(record.errors) == 1 and "API down" in record.errors[0]


def test_a_failure_result_is_an_error(world):
    failure = SelectionResult.failure("timeout", raw_output="{")
    record = world.session(ScriptedSelector({}, default=failure)).turn("a question")
    assert record.dirs[0].error == "timeout" and record.dirs[0].raw_output == "{"


@pytest.mark.parametrize("names", ["m0.md", {"m0.md": 1}, 42])
def test_names_that_are_not_a_list_are_an_error(world, names):
    bad = SelectionResult(names=names)  # type: ignore[arg-type]
    record = world.session(ScriptedSelector({}, default=bad)).turn("a question")
    assert record.surfaced == ()
    assert record.dirs[0].error is not None and record.errors


def test_non_string_names_are_dropped_and_the_string_names_kept(world):
    # The system filters the answer's list by known filenames, so a stray non-string
    # costs only itself; the answer is not an error.
    record = world.session(FixedSelector(["m0.md", 7, None, "m2.md"])).turn("a question")
    assert record.surfaced_keys == ("m0.md", "m2.md")
    assert record.dirs[0].error is None and record.errors == ()
    assert record.dirs[0].valid == ("m0.md", "m2.md")
    assert [(d.name, d.reason) for d in record.dropped] == [
        ("7", "not-a-string"), ("None", "not-a-string")]
    assert record.dirs[0].raw_names == ("m0.md", "7", "None", "m2.md")


def test_an_answer_of_only_non_strings_is_an_empty_pick_not_an_error(world):
    record = world.session(FixedSelector([["m0.md"], 1.5])).turn("a question")
    assert record.surfaced == () and record.dirs[0].error is None
    assert {d.reason for d in record.dropped} == {"not-a-string"}


def test_adversarial_names_never_reach_a_file_outside_the_manifest(world):
    moves = [Move("literal", "MEMORY.md"), Move("literal", "../secret.md"),
             Move("absolute", 0), Move("parent", 1), Move("case", 2), Move("pick", 3)]
    record = world.session(AdversarialSelector(moves)).turn("a question")
    assert record.surfaced_keys == ("m3.md",)
    assert {d.reason for d in record.dropped} == {"not-a-candidate"}


def test_usage_is_summed_over_dirs(tmp_path):
    w = make_world(tmp_path, {"a": "user", "b": "user"})
    w.write(w.agent_dir("a"), "x.md")
    w.write(w.agent_dir("b"), "y.md")
    usage = Usage(calls=1, input_tokens=100, output_tokens=5, cost_usd=0.01)
    selector = ScriptedSelector(lambda r: SelectionResult(names=(), usage=usage))
    record = w.session(selector).turn("@agent-a @agent-b go")
    assert record.usage.calls == 2 and record.usage.input_tokens == 200


def test_aturn_gives_the_same_record_as_turn(world):
    sync = world.session(FixedSelector(["m2.md", "m0.md"])).turn("a question", turn_id="t")
    async_ = asyncio.run(
        world.session(FixedSelector(["m2.md", "m0.md"])).aturn("a question", turn_id="t"))
    assert async_.to_dict() == sync.to_dict()


def test_aturn_records_an_async_failure(world):
    class Broken(EverythingSelector):
        async def aselect(self, request):
            raise ValueError("boom")

    record = asyncio.run(world.session(Broken()).aturn("a question"))
    assert record.dirs[0].error == "ValueError: boom"


def test_a_huge_raw_answer_is_kept_cut_with_a_note(world):
    from memeval.selectors.base import SelectionResult, SyncSelector
    from memeval.session.session import MAX_RAW_OUTPUT_CHARS

    class Verbose(SyncSelector):
        name = "verbose"

        def select(self, request):
            return SelectionResult(names=("m1.md",), raw_output="x" * 10_000_000)

    record = world.session(Verbose()).turn("a question")
    raw = record.dirs[0].raw_output
    assert record.surfaced_keys == ("m1.md",)
    assert len(raw) < MAX_RAW_OUTPUT_CHARS + 100 and raw.endswith("characters not kept]")
