"""The per-turn gate (SPEC §2.1) and the two modes (SPEC §0)."""

from __future__ import annotations

import pytest
from _session_world import make_world, memory_text

from memeval.memdir import MAX_SESSION_BYTES
from memeval.selectors.testing import EverythingSelector


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "testing.md")
    return w


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "gate:empty"),
        ("   \n\t ", "gate:empty"),
        ("\u3000\ufeff", "gate:empty"),  # JavaScript trims these too
        ("deploy", "gate:single-word"),
        ("  deploy  ", "gate:single-word"),  # trimmed first
        ("deploy\x85now", "gate:single-word"),  # U+0085 is not JavaScript whitespace
        ("deploy\x1fnow", "gate:single-word"),  # nor are the separators U+001C..U+001F
    ],
)
def test_gate_skips_empty_and_single_word_queries(world, query, reason):
    selector = EverythingSelector()
    record = world.session(selector).turn(query)
    assert record.skipped == reason
    assert selector.requests == []
    assert record.surfaced == ()


@pytest.mark.parametrize("query", ["deploy now", "deploy\u3000now", "deploy\u00a0now", "a\nb"])
def test_gate_passes_any_javascript_whitespace_inside(world, query):
    record = world.session(EverythingSelector()).turn(query)
    assert record.skipped is None
    assert record.surfaced_keys == ("testing.md",)


def test_auto_memory_disabled_wins_over_everything(world):
    selector = EverythingSelector()
    record = world.session(selector, auto_memory_enabled=False, recall_mode=False).turn("x")
    assert record.skipped == "gate:auto-memory-disabled"
    assert selector.requests == []


def test_recall_off_does_no_recall_and_exposes_the_startup_context(world):
    selector = EverythingSelector()
    session = world.session(selector, recall_mode=False, startup_context="Contents of MEMORY.md")
    record = session.turn("how do I run the tests")
    assert record.skipped == "gate:recall-off"
    assert record.recall_mode is False
    assert selector.requests == []
    assert session.startup_context == "Contents of MEMORY.md"


def test_prefetch_disabled_skips(world):
    record = world.session(EverythingSelector(), prefetch_enabled=False).turn("run the tests")
    assert record.skipped == "gate:prefetch-disabled"


def test_nothing_to_select_makes_no_selector_call(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "MEMORY.md", "- [a](a.md) hook\n")
    w.write(w.project_dir, "notes.txt", "not markdown\n")
    selector = EverythingSelector()
    record = w.session(selector).turn("run the tests")
    assert record.skipped == "nothing-to-select"
    assert selector.requests == []
    assert record.dirs[0].called is False


def test_missing_memdir_is_nothing_to_select(tmp_path):
    w = make_world(tmp_path)
    w.project_dir.rmdir()
    assert w.session(EverythingSelector()).turn("run the tests").skipped == "nothing-to-select"


def test_budget_stops_recall_once_reached_but_one_turn_may_overshoot(tmp_path):
    w = make_world(tmp_path)
    # Each file surfaces ~4.2 K units (byte cap plus note); 5 per turn ≈ 21 K, so the
    # 60 K budget is crossed by the 3rd turn, which still surfaces in full.
    line = "x" * 99 + "\n"
    for i in range(40):
        w.write(w.project_dir, f"m{i:02d}.md", memory_text(f"memory {i}", line * 45))
    session = w.session(EverythingSelector())
    records = [session.turn(f"question number {i}") for i in range(6)]
    ran = [r for r in records if r.skipped is None]
    assert len(ran) == 3
    assert all(len(r.surfaced) == 5 for r in ran)
    assert ran[-1].surfaced_bytes_before < MAX_SESSION_BYTES <= ran[-1].surfaced_bytes_after
    assert [r.skipped for r in records[3:]] == ["budget", "budget", "budget"]
    assert records[3].surfaced_bytes_before >= MAX_SESSION_BYTES


def test_tool_events_count_even_when_the_gate_skips(world):
    session = world.session(EverythingSelector())
    path = world.project_dir / "testing.md"
    session.turn("x", tool_events=[{"tool": "Read", "ok": True, "path": str(path)}])
    assert str(path) in session.read_file_state
    record = session.turn("run the tests")
    assert record.surfaced == ()
    assert [(d.name, d.reason) for d in record.dropped] == [("testing.md", "already-read")]
