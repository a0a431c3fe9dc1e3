"""Compaction reads the newest files back into the read-file state (issue 35, item 1).

The system's behaviour is `+compaction=restore`; both presets still clear (see
`Compat.compaction`), so every session here asks for it by name.
"""

from __future__ import annotations

import math
import os

import pytest
from _session_world import DAY_MS, NOW_MS, make_world, memory_text

from memeval.memdir.readfile import node_mtime_ms
from memeval.selectors.testing import EverythingSelector, FixedSelector
from memeval.session import Compat
from memeval.session.compaction import estimate_tokens

RESTORE = "faithful+compaction=restore"


def _outcomes(session):
    return [(os.path.basename(r.path), r.outcome) for r in session.last_restore]


@pytest.fixture
def seven(tmp_path):
    """Seven memories, m0 newest ... m6 oldest, all surfaced in one session."""
    w = make_world(tmp_path)
    for i in range(7):
        w.write(w.project_dir, f"m{i}.md", memory_text(f"note {i}"), age_days=i + 0.5)
    session = w.session(EverythingSelector(), compat=RESTORE)
    session.turn("tell me everything")  # m0..m4 (the cap)
    session.turn("and the rest of it")  # m5, m6
    return w, session


def test_the_five_newest_come_back_and_do_not_surface_again(seven):
    _w, session = seven
    session.compact()
    assert _outcomes(session) == [(f"m{i}.md", "restored") for i in range(5)]
    again = session.turn("tell me everything")
    # Only the two oldest were forgotten; the restored five are "already read".
    assert again.surfaced_keys == ("m5.md", "m6.md")
    assert {d.name for d in again.dropped if d.reason == "already-read"} == {
        f"m{i}.md" for i in range(5)}


def test_clear_mode_lets_everything_surface_again(seven):
    _w, session = seven
    session.compat = Compat.from_spec("faithful+compaction=clear")
    session.compact()
    assert session.last_restore == ()
    assert len(session.turn("tell me everything").surfaced) == 5


def test_newest_means_the_timestamp_not_the_order_of_reading(tmp_path):
    w = make_world(tmp_path)
    paths = [w.write(w.project_dir, f"m{i}.md", age_days=i + 1) for i in range(7)]
    session = w.session(EverythingSelector(), compat=RESTORE)
    # Read oldest first, so the newest files are the least recently used entries.
    session.turn("read them all", tool_events=[
        {"tool": "Read", "path": str(p)} for p in reversed(paths)])
    session.compact()
    assert [os.path.basename(r.path) for r in session.last_restore] == [
        f"m{i}.md" for i in range(5)]


def test_a_restored_entry_is_keyed_by_the_expanded_path_with_a_whole_ms_mtime(tmp_path):
    w = make_world(tmp_path)
    path = w.write(w.project_dir, "m.md", age_days=1.2345678)
    session = w.session(FixedSelector([]), cwd=w.project_dir, compat=RESTORE)
    session.turn("read the note", tool_events=[{"tool": "Read", "path": "  ./m.md "}])
    session.compact()
    entry = session.read_file_entry(str(path))
    assert entry is not None and entry.how == "restored"
    assert entry.timestamp == math.floor(node_mtime_ms(os.stat(path)))


def test_plan_file_and_instruction_files_are_never_restored(tmp_path):
    w = make_world(tmp_path)
    plan = w.write(w.root, "plans/plan.md", age_days=0.1)
    claude_md = w.write(w.repo, "CLAUDE.md", age_days=0.1)
    local_md = w.write(w.repo, "CLAUDE.local.md", age_days=0.1)
    user_md = w.write(w.base, "CLAUDE.md", age_days=0.1)
    index = w.write(w.project_dir, "MEMORY.md", age_days=0.1)
    older = [w.write(w.project_dir, f"m{i}.md", age_days=i + 1) for i in range(5)]
    session = w.session(FixedSelector([]), plan_file=plan, compat=RESTORE)
    session.turn("read things", tool_events=[
        {"tool": "Read", "path": str(p)}
        for p in (*older, plan, claude_md, local_md, user_md, index)])
    session.compact()
    # The excluded files are the newest, yet they neither come back nor take a slot.
    assert sorted(os.path.basename(r.path) for r in session.last_restore) == [
        f"m{i}.md" for i in range(5)]
    assert set(session.read_file_state) == {str(p) for p in older}


@pytest.mark.parametrize(("chars", "outcome"), [(20_000, "restored"), (20_002, "reference")])
def test_a_file_over_5000_estimated_tokens_comes_back_only_as_a_reference(
    tmp_path, chars, outcome
):
    w = make_world(tmp_path)
    path = w.write(w.project_dir, "big.md", "x" * chars)
    assert estimate_tokens("x" * chars) == (5000 if outcome == "restored" else 5001)
    session = w.session(FixedSelector(["big.md"]), compat=RESTORE)
    assert session.turn("show the big one").surfaced_keys == ("big.md",)
    session.compact()
    assert _outcomes(session) == [("big.md", outcome)]
    assert (str(path) in session.read_file_state) == (outcome == "restored")
    # A reference is not put back, so the memory may surface again.
    assert bool(session.turn("show the big one").surfaced) == (outcome == "reference")


def test_an_unreadable_file_is_dropped_and_keeps_its_slot(seven):
    w, session = seven
    (w.project_dir / "m0.md").unlink()
    session.compact()
    assert _outcomes(session) == [("m0.md", "unreadable")] + [
        (f"m{i}.md", "restored") for i in range(1, 5)]
    assert str(w.project_dir / "m5.md") not in session.read_file_state


def test_attachments_over_the_restore_budget_are_left_out_but_stay_read(tmp_path):
    # A control character is six characters once the attachment is JSON: 20 000 of
    # them are 5 000 tokens as text but 30 000 as the serialized attachment.
    w = make_world(tmp_path)
    for i in range(3):
        w.write(w.project_dir, f"c{i}.md", "\x01" * 20_000, age_days=i + 1)
    session = w.session(EverythingSelector(), compat=RESTORE)
    session.turn("show the control files")
    session.compact()
    assert _outcomes(session) == [
        ("c0.md", "restored"), ("c1.md", "over-budget"), ("c2.md", "over-budget")]
    assert all(r.put_back for r in session.last_restore)
    assert len(session.read_file_state) == 3


def test_hardened_restores_too(seven):
    _w, session = seven
    session.compat = Compat.from_spec("hardened+compaction=restore")
    session.compact()
    assert [r.outcome for r in session.last_restore] == ["restored"] * 5


def test_tool_read_of_a_missing_file_sorts_last_and_is_dropped(tmp_path):
    w = make_world(tmp_path)
    notes = [w.write(w.project_dir, f"m{i}.md", age_days=i + 1) for i in range(2)]
    session = w.session(FixedSelector([]), compat=RESTORE)
    session.turn("read", tool_events=[{"tool": "Write", "path": "src/new.py"},
                                      *({"tool": "Read", "path": str(p)} for p in notes)])
    assert session.read_file_entry(str(w.repo / "src" / "new.py")).timestamp == 0
    session.compact()
    assert _outcomes(session) == [("m0.md", "restored"), ("m1.md", "restored"),
                                  ("new.py", "unreadable")]


def test_ages_are_file_times_not_the_session_clock(tmp_path):
    # A surfaced memory's entry carries the scan's mtime, exactly.
    w = make_world(tmp_path)
    path = w.write(w.project_dir, "m.md", age_days=3)
    session = w.session(FixedSelector(["m.md"]), compat=RESTORE)
    session.turn("what is in m")
    entry = session.read_file_entry(str(path))
    assert entry is not None and entry.how == "memory"
    assert entry.timestamp == pytest.approx(NOW_MS - 3 * DAY_MS)
