"""Session state across turns: surfaced set, read-file state, compaction, discard,
attachment and reminder formats (SPEC §2.6, §2.8)."""

from __future__ import annotations

import pytest
from _session_world import make_world, memory_text

from memeval.memdir import utf16_len
from memeval.selectors.testing import EverythingSelector, FixedSelector, ScriptedSelector
from memeval.session import Compat


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "testing.md", memory_text("run tests against a real db"), age_days=0)
    w.write(w.project_dir, "deploy.md", memory_text("deploys go through the staging pipeline"),
            age_days=5)
    return w


def test_surfaced_memory_is_not_a_candidate_again(world):
    selector = EverythingSelector()
    session = world.session(selector)
    first = session.turn("how do we test")
    assert set(first.surfaced_keys) == {"testing.md", "deploy.md"}
    second = session.turn("and how do we deploy")
    assert second.skipped == "nothing-to-select"
    assert len(selector.requests) == 1


def test_compaction_resets_the_surfaced_set_and_the_budget(world):
    session = world.session(EverythingSelector())
    session.turn("how do we test")
    assert session.surfaced_bytes > 0
    assert session.surfaced_paths
    session.compact()
    assert session.surfaced_bytes == 0
    assert session.surfaced_paths == frozenset()


def test_clear_compaction_forgets_the_read_file_state_too(world):
    session = world.session(EverythingSelector(), compat="faithful+compaction=clear")
    session.turn("how do we test")
    session.compact()
    assert session.read_file_state == {} and session.last_restore == ()
    again = session.turn("how do we test")
    assert set(again.surfaced_keys) == {"testing.md", "deploy.md"}


def test_surfaced_bytes_count_utf16_units_of_content_including_the_note(tmp_path):
    w = make_world(tmp_path)
    body = "😀 emoji take two units\n"
    w.write(w.project_dir, "emoji.md", memory_text("smileys", body))
    session = w.session(EverythingSelector())
    record = session.turn("show me smileys")
    content = record.surfaced[0].content
    assert session.surfaced_bytes == utf16_len(content) == len(content) + 1
    assert record.surfaced_bytes_after == session.surfaced_bytes


def test_read_tool_event_puts_the_file_in_read_file_state(world):
    session = world.session(EverythingSelector())
    record = session.turn(
        "how do we test",
        tool_events=[{"tool": "Read", "ok": True, "path": str(world.project_dir / "testing.md")}],
    )
    assert record.surfaced_keys == ("deploy.md",)
    assert [(d.name, d.reason) for d in record.dropped] == [("testing.md", "already-read")]


def test_relative_read_paths_are_taken_from_the_cwd(world):
    cwd = world.project_dir.parent  # .../memory's parent, so "memory/testing.md" resolves
    session = world.session(EverythingSelector(), cwd=cwd)
    record = session.turn(
        "how do we test", tool_events=[{"tool": "Edit", "path": "memory/testing.md"}]
    )
    assert "testing.md" not in record.surfaced_keys


def test_failed_or_unfinished_reads_do_not_count(world):
    session = world.session(EverythingSelector())
    path = str(world.project_dir / "testing.md")
    record = session.turn("how do we test", tool_events=[
        {"tool": "Read", "ok": False, "path": path},
        {"tool": "Read", "ok": None, "path": path},
    ])
    assert "testing.md" in record.surfaced_keys


def test_turn_without_tool_use_discards_the_recall(world):
    selector = EverythingSelector()
    session = world.session(selector)
    record = session.turn("how do we test", used_tools=False)
    assert record.skipped == "no-tool-use-discarded"
    assert len(selector.requests) == 1  # the side query did run
    assert {s.key for s in record.discarded} == {"testing.md", "deploy.md"}
    assert record.surfaced == () and record.attachment is None and record.system_reminders == ()
    assert session.surfaced_bytes == 0 and session.read_file_state == {}
    # Nothing was consumed, so the same memories can surface on the next turn.
    assert set(session.turn("how do we test").surfaced_keys) == {"testing.md", "deploy.md"}


def test_filter_then_mark_keeps_a_duplicate_pick_in_faithful_mode(world):
    session = world.session(FixedSelector(["testing.md", "testing.md"]))
    record = session.turn("how do we test")
    # Marking happens after filtering, so the second copy is not "already read".
    assert record.surfaced_keys == ("testing.md", "testing.md")
    assert len(record.attachment["memories"]) == 2
    assert session.surfaced_bytes == 2 * utf16_len(record.surfaced[0].content)


def test_hardened_mode_surfaces_a_duplicate_pick_once(world):
    session = world.session(FixedSelector(["testing.md", "testing.md"]), compat=Compat.hardened())
    record = session.turn("how do we test")
    assert record.surfaced_keys == ("testing.md",)
    assert [(d.name, d.reason) for d in record.dropped] == [("testing.md", "duplicate")]


def test_surfaced_memories_enter_the_read_file_state(world):
    session = world.session(FixedSelector(["testing.md"]))
    session.turn("how do we test")
    assert session.read_file_state == {str(world.project_dir / "testing.md"): "memory"}


def test_attachment_has_exactly_the_spec_shape(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "short.md", memory_text("short"), age_days=1)
    w.write(w.project_dir, "long.md", memory_text("long", "line\n" * 300), age_days=10)
    record = w.session(FixedSelector(["short.md", "long.md"])).turn("tell me everything")
    attachment = record.attachment
    assert attachment["type"] == "relevant_memories"
    short, long_ = attachment["memories"]
    assert set(short) == {"path", "content", "mtime_ms", "header"}  # no limit: not truncated
    assert set(long_) == {"path", "content", "mtime_ms", "header", "limit"}
    assert long_["limit"] == 200
    assert short["path"] == str(w.project_dir / "short.md")
    assert short["header"] == f"Memory (saved yesterday): {short['path']}:"
    assert long_["header"].startswith("This memory is 10 days old. ")
    assert long_["header"].endswith(f"\n\nMemory: {long_['path']}:")


def test_each_memory_is_its_own_system_reminder(world):
    record = world.session(FixedSelector(["testing.md", "deploy.md"])).turn("how do we test")
    assert len(record.system_reminders) == 2
    for reminder, memory in zip(record.system_reminders, record.attachment["memories"],
                                strict=True):
        assert reminder == (
            f"<system-reminder>\n{memory['header']}\n\n{memory['content']}\n</system-reminder>"
        )


def test_exact_200_line_file_is_marked_truncated_unless_the_quirk_is_off(tmp_path):
    w = make_world(tmp_path)
    text = "".join(f"line {i}\n" for i in range(200))
    w.write(w.project_dir, "two-hundred.md", text)
    faithful = w.session(FixedSelector(["two-hundred.md"])).turn("read the file")
    memory = faithful.surfaced[0].memory
    assert memory.truncated and memory.line_limit == 200
    assert memory.content.endswith(f"(first 200 lines). Use the Read tool to view the complete "
                                   f"file at: {w.project_dir / 'two-hundred.md'}")
    hardened = w.session(FixedSelector(["two-hundred.md"]),
                         compat=Compat.hardened()).turn("read the file")
    memory = hardened.surfaced[0].memory
    assert not memory.truncated and memory.line_limit is None
    assert memory.content == text[:-1]
    assert "limit" not in hardened.attachment["memories"][0]


def test_a_201_line_file_is_truncated_in_both_modes(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "more.md", "".join(f"line {i}\n" for i in range(201)))
    for compat in (Compat.faithful(), Compat.hardened()):
        record = w.session(FixedSelector(["more.md"]), compat=compat).turn("read the file")
        assert record.surfaced[0].memory.truncated


def test_file_that_fails_to_read_is_skipped_and_recorded(world):
    def vanish(request):
        (world.project_dir / "testing.md").unlink()
        return ["testing.md", "deploy.md"]

    record = world.session(ScriptedSelector(vanish)).turn("how do we test")
    assert record.surfaced_keys == ("deploy.md",)
    assert ("testing.md", "read-failed") in [(d.name, d.reason) for d in record.dropped]
    assert any("testing.md" in e for e in record.errors)


def test_turn_records_accumulate_on_the_session(world):
    session = world.session(EverythingSelector())
    a = session.turn("how do we test", turn_id="t1")
    b = session.turn("x", turn_id="t2")
    assert session.turns == [a, b]
    assert a.to_dict()["turn_id"] == "t1"


def test_compaction_resets_a_stateful_selector(tmp_path):
    from memeval.selectors.base import SelectionResult, SyncSelector
    from memeval.selectors.shuffle import ShuffledManifestSelector
    from memeval.session import Session

    class Stateful(SyncSelector):
        name = "stateful"
        resets = 0

        def select(self, request):
            return SelectionResult(names=())

        def reset(self):
            self.resets += 1

    inner = Stateful()
    session = Session(tmp_path / "base", tmp_path / "proj", now_ms=0.0,
                      selector=ShuffledManifestSelector(inner))
    session.compact()
    session.compact()
    assert inner.resets == 2


# --- the read-file state: an LRU of 100 (issue 35, item 2) -------------------------
def _reads(paths):
    return [{"tool": "Read", "ok": True, "path": str(p)} for p in paths]


def test_a_read_pushed_out_by_100_other_reads_can_surface_again(world):
    session = world.session(FixedSelector(["testing.md"]))
    memory = world.project_dir / "testing.md"
    others = [world.repo / f"src/f{i}.py" for i in range(100)]
    record = session.turn("how do we test", tool_events=_reads([memory, *others]))
    assert record.surfaced_keys == ("testing.md",)
    # It was forgotten, surfaced, and is remembered again, now as a memory.
    assert len(session.read_file_state) == 100
    assert session.read_file_state[str(memory)] == "memory"


def test_reading_again_makes_an_entry_recent(world):
    session = world.session(FixedSelector(["testing.md"]))
    memory = world.project_dir / "testing.md"
    others = [world.repo / f"src/f{i}.py" for i in range(100)]
    record = session.turn("how do we test",
                          tool_events=_reads([memory, *others[:99], memory, others[99]]))
    assert str(memory) in session.read_file_state
    assert record.surfaced == ()


def test_a_surfaced_memory_counts_as_one_entry_of_the_hundred(world):
    session = world.session(FixedSelector(["testing.md"]))
    session.turn("how do we test")
    others = [world.repo / f"src/f{i}.py" for i in range(100)]
    session.turn("x", tool_events=_reads(others))
    assert str(world.project_dir / "testing.md") not in session.read_file_state


# --- tool paths are expanded as the tools expand them (item 3) ----------------------
def test_a_read_of_an_nfd_name_is_keyed_nfc_so_the_nfd_memory_still_surfaces(tmp_path):
    w = make_world(tmp_path)
    nfd = "cafe\u0301.md"
    w.write(w.project_dir, nfd, memory_text("coffee"))
    session = w.session(FixedSelector([nfd]))
    record = session.turn("about the coffee",
                          tool_events=_reads([w.project_dir / nfd]))
    assert str(w.project_dir / "caf\u00e9.md") in session.read_file_state
    assert record.surfaced_keys == (nfd,)


def test_surrounding_whitespace_of_a_tool_path_is_trimmed(world):
    session = world.session(EverythingSelector(), cwd=world.project_dir)
    record = session.turn("how do we test", tool_events=[
        {"tool": "Edit", "path": "\ufeff testing.md\n"}])
    assert record.surfaced_keys == ("deploy.md",)


def test_tilde_is_the_sessions_home_and_tilde_user_is_a_relative_name(world):
    home = world.project_dir.parent
    session = world.session(FixedSelector([]), home=home)
    session.turn("x", tool_events=[{"tool": "Read", "path": "~/memory/testing.md"},
                                   {"tool": "Read", "path": "~root/x.md"}])
    assert set(session.read_file_state) == {
        str(world.project_dir / "testing.md"), str(world.repo / "~root" / "x.md")}


# --- only Claude Code's own file tools count (item 4) ------------------------------
@pytest.mark.parametrize("tool", ["MultiEdit", "read_file", "write_file", "edit_file"])
def test_foreign_file_tools_count_only_behind_the_extension_switch(world, tool):
    event = [{"tool": tool, "ok": True, "path": str(world.project_dir / "testing.md")}]
    faithful = world.session(FixedSelector(["testing.md"]))
    assert faithful.turn("how do we test", tool_events=event).surfaced_keys == ("testing.md",)
    extended = world.session(FixedSelector(["testing.md"]),
                             compat="faithful+extra_file_tools")
    record = extended.turn("how do we test", tool_events=event)
    assert record.surfaced == ()
    assert [(d.name, d.reason) for d in record.dropped] == [("testing.md", "already-read")]


@pytest.mark.parametrize("tool", ["Read", "Write", "Edit", "NotebookEdit"])
def test_claude_codes_file_tools_always_count(world, tool):
    event = [{"tool": tool, "ok": True, "path": str(world.project_dir / "testing.md")}]
    session = world.session(FixedSelector(["testing.md"]), compat=Compat.hardened())
    assert session.turn("how do we test", tool_events=event).surfaced == ()
