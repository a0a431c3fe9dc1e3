"""SPEC §2 on one hand-written session, read top to bottom: one assertion per rule.

The world: a project memdir with an index at two depths, a lowercase `memory.md`,
memories saved today, yesterday and ten days ago, a file over the line cap and one
over the byte cap; a `reviewer` agent with user-scope memory and a `helper` agent
without memory. The turns run in order on one Session, as a conversation would.
"""

from __future__ import annotations

import pytest
from _session_world import make_world, memory_text

from memeval.memdir import iso_timestamp, utf16_len
from memeval.selectors.testing import ScriptedSelector
from memeval.session import Session

TURN_2 = "how do we run the tests before deploying"
TURN_3 = "@agent-reviewer review my style please"
TURN_4 = "@agent-helper what about the remaining notes"
TURN_5 = "and the wide file please"
TURN_6 = "how do we run the tests again"

SCRIPT = {
    TURN_2: ["testing.md", "deploy.md", "MEMORY.md", "notes/db.md", "memory.md", "big.md",
             "wide.md"],
    TURN_3: ["style.md"],
    TURN_4: ["wide.md", "notes/db.md"],
    TURN_5: ["wide.md"],
    TURN_6: ["testing.md"],
}


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    w = make_world(tmp_path_factory.mktemp("spec"), {"reviewer": "user", "helper": None})
    p = w.project_dir
    w.write(p, "MEMORY.md", "- [Testing](testing.md) — real db\n", age_days=0)
    w.write(p, "sub/MEMORY.md", "- nested index\n", age_days=0)
    w.write(p, "testing.md", memory_text("run tests against a real db", type_="feedback"),
            age_days=0.1)
    w.write(p, "deploy.md", memory_text("deploys go through staging", type_="project"),
            age_days=1.2)
    w.write(p, "notes/db.md", memory_text("the db runbook", type_="reference"), age_days=10)
    w.write(p, "memory.md", memory_text("lowercase is a memory"), age_days=11)
    w.write(p, "big.md", memory_text("a long file", "line\n" * 300), age_days=12)
    w.write(p, "wide.md", memory_text("a wide file", ("w" * 99 + "\n") * 60), age_days=13)
    w.write(w.agent_dir("reviewer"), "style.md", memory_text("house style", type_="feedback"),
            age_days=2)
    selector = ScriptedSelector(SCRIPT)
    session: Session = w.session(selector, compat="faithful+compaction=restore")
    records = {
        1: session.turn("deploy"),
        2: session.turn(TURN_2, tool_events=[
            {"tool": "Bash", "ok": True}, {"tool": "Grep", "ok": False},
            {"tool": "Read", "ok": True, "path": "src/app.py"}]),
        3: session.turn(TURN_3),
        4: session.turn(TURN_4, tool_events=[{"tool": "Read", "path": str(p / "wide.md")}]),
        5: session.turn(TURN_5, used_tools=False),
    }
    bytes_before_compaction = session.surfaced_bytes
    session.compact()
    records[6] = session.turn(TURN_6)
    return w, session, selector, records, bytes_before_compaction


def requests_for(selector, query):
    return [r for r in selector.requests if r.query == query]


# §2.1 Gate
def test_single_word_prompts_are_skipped(story):
    _, _, selector, records, _ = story
    assert records[1].skipped == "gate:single-word" and requests_for(selector, "deploy") == []


# §2.2 Scope
def test_without_mentions_the_project_memdir_is_searched(story):
    w, _, _, records, _ = story
    assert [d.memory_dir for d in records[2].dirs] == [str(w.project_dir)]


def test_a_mentioned_agent_with_memory_is_searched_instead(story):
    w, _, _, records, _ = story
    assert [d.memory_dir for d in records[3].dirs] == [str(w.agent_dir("reviewer"))]


def test_a_mentioned_agent_without_memory_falls_back_to_the_project_memdir(story):
    w, _, _, records, _ = story
    assert [d.memory_dir for d in records[4].dirs] == [str(w.project_dir)]


# §2.3 Scan
def test_memory_md_at_any_depth_is_not_a_candidate_but_memory_md_lowercase_is(story):
    _, _, _, records, _ = story
    names = [h.filename for h in records[2].dirs[0].candidates]
    assert "MEMORY.md" not in names and "sub/MEMORY.md" not in names and "memory.md" in names


def test_candidates_are_newest_first(story):
    _, _, _, records, _ = story
    mtimes = [h.mtime_ms for h in records[2].dirs[0].candidates]
    assert mtimes == sorted(mtimes, reverse=True)


def test_already_surfaced_paths_are_removed_from_the_candidates(story):
    _, _, selector, _, _ = story
    assert "testing.md" not in requests_for(selector, TURN_4)[0].filenames


# §2.4 Manifest
def test_manifest_line_shows_type_filename_utc_time_and_description(story):
    _, _, selector, records, _ = story
    testing = next(h for h in records[2].dirs[0].candidates if h.filename == "testing.md")
    when = iso_timestamp(testing.mtime_ms)
    line = f"- [feedback] testing.md ({when}): run tests against a real db"
    assert line in requests_for(selector, TURN_2)[0].manifest.split("\n")


# §2.5 Selector
def test_selector_is_told_the_tools_that_succeeded_most_recent_first(story):
    _, _, selector, _, _ = story
    assert requests_for(selector, TURN_2)[0].recent_tools == ("Read", "Bash")


def test_unknown_names_are_dropped_and_the_order_kept(story):
    _, _, _, records, _ = story
    assert records[2].dirs[0].valid == (
        "testing.md", "deploy.md", "notes/db.md", "memory.md", "big.md", "wide.md")


# §2.6 Merge, cap, read
def test_at_most_five_surface(story):
    _, _, _, records, _ = story
    assert records[2].surfaced_keys == ("testing.md", "deploy.md", "notes/db.md", "memory.md",
                                        "big.md")


def test_a_file_over_200_lines_gets_the_line_note(story):
    w, _, _, records, _ = story
    big = next(s for s in records[2].surfaced if s.key == "big.md")
    note = "(first 200 lines). Use the Read tool to view the complete file at: "
    assert big.content.endswith(f"{note}{w.project_dir}/big.md")


def test_a_file_the_model_read_is_not_surfaced(story):
    _, _, _, records, _ = story
    assert ("wide.md", "already-read") in [(d.name, d.reason) for d in records[4].dropped]


# §2.7 Header and age
def test_header_says_saved_today_for_a_memory_from_today(story):
    w, _, _, records, _ = story
    memory = records[2].surfaced[0].memory
    assert memory.header == f"Memory (saved today): {w.project_dir}/testing.md:"


def test_header_says_saved_yesterday_for_a_memory_from_yesterday(story):
    w, _, _, records, _ = story
    assert records[2].surfaced[1].memory.header == (
        f"Memory (saved yesterday): {w.project_dir}/deploy.md:")


def test_older_memories_get_a_staleness_paragraph_with_their_age(story):
    w, _, _, records, _ = story
    header = records[2].surfaced[2].memory.header
    assert header.startswith("This memory is 10 days old. ")
    assert header.endswith(f"\n\nMemory: {w.project_dir}/notes/db.md:")


# §2.8 Attachment, rendering, session state
def test_the_turn_yields_one_relevant_memories_attachment(story):
    _, _, _, records, _ = story
    attachment = records[2].attachment
    assert attachment["type"] == "relevant_memories" and len(attachment["memories"]) == 5


def test_limit_is_set_only_on_truncated_memories(story):
    _, _, _, records, _ = story
    memories = records[2].attachment["memories"]
    limits = {m["path"].rsplit("/", 1)[-1]: m.get("limit") for m in memories}
    assert limits == {"testing.md": None, "deploy.md": None, "db.md": None, "memory.md": None,
                      "big.md": 200}


def test_each_memory_reaches_the_model_as_its_own_system_reminder(story):
    _, _, _, records, _ = story
    s = records[3].surfaced[0]
    assert records[3].system_reminders == (
        f"<system-reminder>\n{s.memory.header}\n\n{s.content}\n</system-reminder>",)


def test_agent_memories_are_keyed_by_agent(story):
    _, _, _, records, _ = story
    assert records[3].surfaced_keys == ("@reviewer/style.md",)


def test_a_turn_without_tool_use_discards_its_recall(story):
    _, _, _, records, _ = story
    assert records[5].skipped == "no-tool-use-discarded" and records[5].surfaced == ()


def test_surfaced_size_is_the_utf16_length_of_every_content(story):
    _, _, _, records, bytes_before_compaction = story
    contents = [s.content for n in (2, 3, 4) for s in records[n].surfaced]
    assert bytes_before_compaction == sum(utf16_len(c) for c in contents)


def test_compaction_restores_the_newest_files_so_they_stay_read(story):
    # testing.md is the newest entry of the read-file state, so compaction reads it
    # back and the selector's pick of it is dropped as already read.
    _, session, _, records, _ = story
    assert session.compactions == 1
    assert records[6].surfaced_keys == ()
    assert ("testing.md", "already-read") in [(d.name, d.reason) for d in records[6].dropped]



def test_the_attachment_carries_the_mtime_the_scan_saw(story):
    _, _, _, records, _ = story
    scanned = {str(h.file_path): h.mtime_ms for h in records[2].dirs[0].candidates}
    assert all(m["mtime_ms"] == scanned[m["path"]] for m in records[2].attachment["memories"])
