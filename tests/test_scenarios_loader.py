"""The scenario loader: resolved records for good files, located errors for bad ones."""

from __future__ import annotations

import os
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.errors import MemevalError
from memeval.labels import GoldLabels
from memeval.scenarios import (
    ScenarioError,
    ToolEvent,
    load,
    load_many,
    loads,
)

NOW_MS = datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp() * 1000
DAY = 86_400_000

GOOD = """\
id: demo
description: A demo project.
now: 2026-11-30T12:00:00Z
mode: recall
project_root: /home/dev/demo
flags:
  auto_memory: true
  hardened: true
default_age_days: 10
memdirs:
  project:
    from: demo
    mtimes:
      testing.md: {age_days: 3}
      notes/db.md: {mtime: 2026-01-02T09:00:00Z}
    files:
      scratch.md:
        age_days: 0
        content: |
          ---
          description: scratch notes
          ---
          body
      exact.md:
        mtime_ms: 1700000000123.5
        content: x
agents:
  code-reviewer:
    scope: user
    memdir:
      from: reviewer
  helper:
    scope: none
turns:
  - id: t1
    query: how do I run the tests?
    category: direct
    why: testing.md has the rule
    relevant: [testing.md]
    acceptable: [notes/db.md]
    tool_events:
      - {tool: Bash, ok: true}
      - {tool: Read, ok: false, path: src/app.py}
      - Grep
    used_tools: false
  - id: t2
    query: "@agent-code-reviewer review this"
    category: agent-scope
    relevant: ["@code-reviewer/style.md"]
    compact_before: true
"""


def _memfile(description: str) -> str:
    return f"---\nname: x\ndescription: {description}\ntype: feedback\n---\nbody\n"


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    """A fixtures-like tree: scenarios/ next to memdirs/."""
    demo = tmp_path / "memdirs" / "demo"
    (demo / "notes").mkdir(parents=True)
    (demo / "testing.md").write_text(_memfile("run tests against a real db"))
    (demo / "notes" / "db.md").write_text(_memfile("postgres notes"))
    (demo / "MEMORY.md").write_text("- [Testing](testing.md) — real db\n")
    (demo / "crlf.md").write_bytes(b"\xef\xbb\xbf---\r\ndescription: crlf\r\n---\r\n")
    (demo / ".hidden.md").write_text("skipped")
    reviewer = tmp_path / "memdirs" / "reviewer"
    reviewer.mkdir()
    (reviewer / "style.md").write_text(_memfile("review style"))
    (tmp_path / "scenarios").mkdir()
    return tmp_path


def _write(suite: Path, text: str, name: str = "s.yaml") -> Path:
    path = suite / "scenarios" / name
    path.write_text(textwrap.dedent(text))
    return path


def test_good_scenario_resolves_every_field(suite: Path) -> None:
    scenario = load(_write(suite, GOOD))
    assert scenario.id == "demo"
    assert scenario.now == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert scenario.now_ms == NOW_MS
    assert scenario.mode == "recall"
    assert scenario.flags == {"auto_memory": True, "prefetch": True, "hardened": True}
    files = scenario.project.files
    assert sorted(files) == ["MEMORY.md", "crlf.md", "exact.md", "notes/db.md", "scratch.md",
                             "testing.md"]
    assert files["testing.md"].mtime_ms == NOW_MS - 3 * DAY
    assert files["notes/db.md"].mtime_ms == datetime(2026, 1, 2, 9, tzinfo=UTC).timestamp() * 1000
    assert files["crlf.md"].mtime_ms == NOW_MS - 10 * DAY  # default_age_days
    assert files["scratch.md"].mtime_ms == NOW_MS
    assert files["exact.md"].mtime_ms == 1700000000123.5
    # bytes are kept: BOM and CRLF survive, so the scanner sees what the author wrote
    assert files["crlf.md"].content == "\ufeff---\r\ndescription: crlf\r\n---\r\n"
    assert files["scratch.md"].content.startswith("---\ndescription: scratch notes\n")
    assert scenario.project.candidates() == ("crlf.md", "exact.md", "notes/db.md",
                                             "scratch.md", "testing.md")
    reviewer = scenario.agents["code-reviewer"]
    assert reviewer.scope == "user" and reviewer.memdir is not None
    assert list(reviewer.memdir.files) == ["style.md"]
    assert scenario.agents["helper"].memdir is None
    t1, t2 = scenario.turns
    assert t1.labels == GoldLabels(frozenset({"testing.md"}), frozenset({"notes/db.md"}),
                                   "direct", "testing.md has the rule")
    assert t1.tool_events == (ToolEvent("Bash"), ToolEvent("Read", False, "src/app.py"),
                              ToolEvent("Grep"))
    assert t1.used_tools is False and t1.compact_before is False
    assert t1.line == 35  # the line of "- id: t1"
    assert t2.labels.relevant == {"@code-reviewer/style.md"}
    assert t2.used_tools is True and t2.compact_before is True
    assert "@code-reviewer/style.md" in scenario.memory_keys()
    assert "MEMORY.md" not in scenario.memory_keys()
    assert scenario.file_for_key("@code-reviewer/style.md") is not None
    assert scenario.file_for_key("nope.md") is None


def test_turn_line_points_at_the_turn(suite: Path) -> None:
    scenario = load(_write(suite, GOOD))
    lines = GOOD.splitlines()
    for turn in scenario.turns:
        assert lines[turn.line - 1].strip() == f"- id: {turn.id}"


def _errors(suite: Path, text: str) -> list[str]:
    path = _write(suite, text)
    with pytest.raises(ScenarioError) as info:
        load(path)
    assert isinstance(info.value, MemevalError)
    lines = str(info.value).splitlines()[1:]
    assert len(lines) == len(info.value.issues)
    prefix = f"{path}:"
    assert all(line.startswith(prefix) for line in lines)
    return [line[len(prefix):] for line in lines]


def _broken(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


# Each case: a one-place edit of the good scenario, and the exact located message.
BROKEN = [
    ("unknown-top-key", ("mode: recall", "mdoe: recall"),
     "4: mdoe: unknown key 'mdoe' (did you mean 'mode'?)"),
    ("unknown-turn-key", ("    relevant: [testing.md]", "    relevnt: [testing.md]"),
     "39: turns[0].relevnt: unknown key 'relevnt' (did you mean 'relevant'?)"),
    ("label-names-no-file", ("relevant: [testing.md]", "relevant: [testng.md]"),
     "39: turns[0].relevant[0]: no memory file 'testng.md' in this scenario "
     "(did you mean 'testing.md'?)"),
    ("label-names-agent-file-bare", ('relevant: ["@code-reviewer/style.md"]',
                                     "relevant: [style.md]"),
     "49: turns[1].relevant[0]: no memory file 'style.md' in this scenario "
     "(an agent's file is named '@code-reviewer/style.md')"),
    ("label-names-unknown-agent", ('"@code-reviewer/style.md"', '"@code-reviewr/style.md"'),
     "49: turns[1].relevant[0]: '@code-reviewr/style.md' names agent 'code-reviewr', which "
     "is not under agents: (code-reviewer, helper) (did you mean 'code-reviewer'?)"),
    ("label-names-index", ("acceptable: [notes/db.md]", "acceptable: [MEMORY.md]"),
     "40: turns[0].acceptable[0]: 'MEMORY.md' can never surface (MEMORY.md is the index, "
     "never a memory); remove it"),
    ("label-listed-twice", ("relevant: [testing.md]", "relevant: [testing.md, testing.md]"),
     "39: turns[0].relevant[1]: 'testing.md' is listed twice (also line 39)"),
    ("label-not-a-list", ("relevant: [testing.md]", "relevant: testing.md"),
     "39: turns[0].relevant: must be a list, got str 'testing.md'; write [testing.md]"),
    ("relevant-and-acceptable", ("acceptable: [notes/db.md]", "acceptable: [testing.md]"),
     "40: turns[0].acceptable: 'testing.md' is also relevant (line 39); a memory is either "
     "relevant or acceptable, keep one"),
    ("duplicate-turn-id", ("  - id: t2", "  - id: t1"),
     "46: turns[1].id: duplicate turn id 't1' (first on line 35); make it unique"),
    ("mtime-filename-typo", ("      testing.md: {age_days: 3}", "      testng.md: {age_days: 3}"),
     "14: memdirs.project.mtimes[testng.md]: no file 'testng.md' in {memdirs}/demo "
     "(did you mean 'testing.md'?)"),
    ("bad-category", ("category: direct", "category: directt"),
     "37: turns[0].category: unknown category 'directt' (did you mean 'direct'?); known: "
     "direct, multi, none, keyword-trap, paraphrase, recent-tool-docs, stale, agent-scope, "
     "already-surfaced, over-five, large-memdir (declare others under `categories:`)"),
    ("bad-mtime", ("{mtime: 2026-01-02T09:00:00Z}", "{mtime: yesterday}"),
     "15: memdirs.project.mtimes[notes/db.md].mtime: 'yesterday' is not an ISO-8601 time; "
     "write e.g. 2026-11-30T12:00:00Z"),
    ("naive-now", ("now: 2026-11-30T12:00:00Z", "now: 2026-11-30T12:00:00"),
     "3: now: '2026-11-30T12:00:00' has no timezone; add Z for UTC (2026-11-30T12:00:00Z) "
     "or an offset (+02:00)"),
    ("missing-now", ("now: 2026-11-30T12:00:00Z\n", ""),
     "1: now: is required: the session clock, e.g. 2026-11-30T12:00:00Z"),
    ("negative-age", ("testing.md: {age_days: 3}", "testing.md: {age_days: -3}"),
     "14: memdirs.project.mtimes[testing.md].age_days: must be >= 0, got -3"),
    ("bare-number-mtime", ("testing.md: {age_days: 3}", "testing.md: 3"),
     "14: memdirs.project.mtimes[testing.md]: write {{age_days: 3}} or "
     "{{mtime: 2026-11-30T12:00:00Z}}"),
    ("two-mtimes", ("age_days: 0\n", "age_days: 0\n        mtime_ms: 5\n"),
     "18: memdirs.project.files[scratch.md]: give one of age_days, mtime_ms, not several"),
    ("missing-from-folder", ("from: demo", "from: dmeo"),
     "12: memdirs.project.from: folder 'dmeo' not found (looked in {memdirs}/dmeo, "
     "{scenarios}/dmeo) (did you mean 'demo'?)"),
    ("bad-agent-scope", ("scope: user", "scope: global"),
     "29: agents.code-reviewer.scope: 'global' is not a scope (did you mean 'local'?); "
     "use one of user, project, local, none"),
    ("scope-none-with-memdir", ("    scope: none", "    scope: none\n    memdir: {}"),
     "34: agents.helper.memdir: an agent with scope none has no memdir; remove it or set "
     "a scope"),
    ("bad-mode", ("mode: recall", "mode: recal"),
     "4: mode: 'recal' is not a mode (did you mean 'recall'?); use recall or index"),
    ("flag-typo", ("auto_memory: true", "auto_memroy: true"),
     "7: flags.auto_memroy: unknown flag 'auto_memroy' (did you mean 'auto_memory'?); "
     "remove it or fix the name"),
    ("flag-not-bool", ("auto_memory: true", "auto_memory: yes"),
     "7: flags.auto_memory: must be true or false, got str 'yes'"),
    ("unknown-memdir", ("memdirs:\n  project:", "memdirs:\n  projet:"),
     "11: memdirs.projet: unknown memdir 'projet' (did you mean 'project'?)"),
    ("query-not-string", ("query: how do I run the tests?", "query: 42"),
     "36: turns[0].query: must be a string, got int 42; quote it"),
    ("missing-query", ("    query: how do I run the tests?\n", ""),
     "35: turns[0].query: is required (the user's message)"),
    ("missing-category", ("    category: agent-scope\n", ""),
     "46: turns[1].category: is required: one of direct, multi, none, keyword-trap, "
     "paraphrase, recent-tool-docs, stale, agent-scope, already-surfaced, over-five, "
     "large-memdir"),
    ("escaping-filename", ("      exact.md:", "      ../exact.md:"),
     "24: memdirs.project.files[../exact.md]: filename must not contain empty, '.' or '..' "
     "segments (files stay inside the memdir)"),
    ("missing-content", ("        content: x\n", ""),
     "24: memdirs.project.files[exact.md].content: is required (the file's text, "
     "frontmatter included)"),
    ("duplicate-yaml-key", ("    used_tools: false", "    used_tools: false\n    used_tools: true"),
     "46: key 'used_tools' appears twice (first on line 45); keep one"),
    ("tool-event-no-tool", ("{tool: Bash, ok: true}", "{ok: true}"),
     "42: turns[0].tool_events[0].tool: is required (e.g. Bash)"),
    ("multiline-why", ("why: testing.md has the rule", "why: |\n      one\n      two"),
     "38: turns[0].why: must be one line"),
    ("not-yaml", ("mode: recall", "mode: [recall"),
     "5: not valid YAML: while parsing a flow sequence did not find expected ',' or ']'; "
     "close every [ {{ and quote on that line, and quote values that hold ': ' or ' #'"),
]


@pytest.mark.parametrize(("edit", "expected"), [(e, x) for _, e, x in BROKEN],
                         ids=[name for name, _, _ in BROKEN])
def test_each_broken_scenario_names_line_field_and_fix(
        suite: Path, edit: tuple[str, str], expected: str) -> None:
    expected = expected.format(memdirs=suite / "memdirs", scenarios=suite / "scenarios")
    assert _errors(suite, _broken(*edit)) == [expected]


def test_all_errors_of_a_file_are_reported_together(suite: Path) -> None:
    text = _broken("mode: recall", "mode: recal")
    text = text.replace("relevant: [testing.md]", "relevant: [testng.md]")
    text = text.replace("  - id: t2", "  - id: t1")
    errors = _errors(suite, text)
    assert [e.split(":")[0] for e in errors] == ["4", "39", "46"]


def test_custom_categories_must_be_declared(suite: Path) -> None:
    text = GOOD.replace("category: direct", "category: locomo-2")
    assert "unknown category 'locomo-2'" in _errors(suite, text)[0]
    scenario = load(_write(suite, "categories: [locomo-2]\n" + text))
    assert scenario.turns[0].labels.category == "locomo-2"


def test_yaml_1_2_scalars(suite: Path) -> None:
    """`no`, `010` and dates stay what YAML 1.2 says (PyYAML would read 1.1)."""
    text = GOOD.replace("query: how do I run the tests?", "query: no").replace(
        "  - id: t2", "  - id: 010")
    scenario = load(_write(suite, text))
    assert scenario.turns[0].query == "no"
    assert scenario.turns[1].id == "10"


def test_empty_and_unreadable_files(suite: Path, tmp_path: Path) -> None:
    assert _errors(suite, "") == ["1: the file is empty; a scenario needs at least id, now "
                                  "and turns"]
    with pytest.raises(ScenarioError, match="cannot read"):
        load(tmp_path / "missing.yaml")


def test_loads_and_explicit_memdirs_root(suite: Path) -> None:
    scenario = loads(GOOD, suite / "elsewhere" / "x.yaml", memdirs_root=suite / "memdirs")
    assert "testing.md" in scenario.project.files


def test_minimal_scenario_defaults(tmp_path: Path) -> None:
    scenario = loads("id: m\nnow: 2026-11-30\nturns:\n  - {id: a, query: hi there, "
                     "category: none}\n", tmp_path / "m.yaml")
    assert scenario.now == datetime(2026, 11, 30, tzinfo=UTC)
    assert scenario.mode == "recall"
    assert scenario.project_root == "/home/user/m"
    assert scenario.project.files == {}
    assert scenario.agents == {}
    assert scenario.turns[0].labels == GoldLabels(category="none")


def test_load_many_keeps_good_files(suite: Path) -> None:
    _write(suite, GOOD, "a.yaml")
    _write(suite, GOOD.replace("mode: recall", "mode: recal"), "b.yaml")
    _write(suite, GOOD, "c.yaml")  # same id as a.yaml
    _write(suite, GOOD.replace("id: demo", "id: other"), "d.yml")
    result = load_many([suite / "scenarios"])
    assert [s.id for s in result.scenarios] == ["demo", "other"]
    assert not result.ok
    messages = [str(e) for e in result.errors]
    assert len(messages) == 2
    assert "b.yaml:4: mode:" in messages[0]
    assert "c.yaml:1: id: scenario id 'demo' is already used by" in messages[1]
    globbed = load_many(str(suite / "scenarios" / "*.yml"))
    assert [s.id for s in globbed.scenarios] == ["other"] and globbed.ok
    nothing = load_many(str(suite / "nope" / "*.yaml"))
    assert nothing.scenarios == () and "no scenario files matched" in str(nothing.errors[0])


def test_the_documented_full_example_loads(tmp_path: Path) -> None:
    """fixtures/README.md's example is the contract; it must stay a valid scenario."""
    readme = Path(__file__).parent.parent / "fixtures" / "README.md"
    example = readme.read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
    webshop = tmp_path / "memdirs" / "webshop"
    (webshop / "old").mkdir(parents=True)
    for name in ("testing.md", "old/db.md", "ci.md"):
        (webshop / name).write_text(_memfile(name))
    reviewer = tmp_path / "memdirs" / "reviewer-memory"
    reviewer.mkdir()
    (reviewer / "migrations.md").write_text(_memfile("migration checklist"))
    (tmp_path / "scenarios").mkdir()
    scenario = load(_write(tmp_path, example))
    assert scenario.id == "webshop-basics"
    assert scenario.project.files["ci.md"].mtime_ms == 1764504000123.5
    assert scenario.project.files["testing.md"].mtime_ms == scenario.now_ms - 3 * DAY
    assert scenario.agents["plugin:helper"].scope == "local"
    assert scenario.agents["planner"].memdir is None
    assert [t.id for t in scenario.turns] == ["t1", "t2"]
    assert scenario.turns[1].answer == "reversible, batched"
    assert scenario.turns[1].tags == ("reviewer",)
    assert "notes/tiny.md" in scenario.project.candidates()


@pytest.mark.parametrize(("text", "message"), [
    ("id: &x [*x]\n", "1: a recursive alias (an anchor used inside itself); write the "
                      "value out"),
    ("id: " + "[" * 100 + "]" * 100 + "\n", "1: nested deeper than 64 levels"),
])
def test_hostile_yaml_is_an_error_not_a_crash(suite: Path, text: str, message: str) -> None:
    assert _errors(suite, text) == [message]


def test_alias_bombs_stay_cheap(suite: Path) -> None:
    """Aliases are shared, not expanded, so a billion-laughs file fails fast, refused at
    the alias that would pass the expansion cap (issue 37, item 8)."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 10)}]"
              for i in range(1, 9)]
    errors = _errors(suite, "\n".join(lines) + "\n")
    assert len(errors) == 1 and "aliases repeat it past 1,000,000 characters" in errors[0]


def test_a_string_alias_bomb_is_refused_at_its_line(suite: Path) -> None:
    """One long query aliased into many turns would multiply every row that carries it:
    before the cap, a 276 KB file wrote 384 MB of results."""
    text = _broken("query: how do I run the tests?",
                   "query: &q " + "x" * 100_000)
    turns = "".join(f"  - id: x{i}\n    query: *q\n    category: direct\n"
                    for i in range(20))
    errors = _errors(suite, text + turns)
    assert errors and "aliases repeat it past 1,000,000 characters" in errors[0]
    anchor = next(n for n, line in enumerate(text.splitlines(), 1) if "&q" in line)
    assert errors[0].startswith(f"{anchor}: ")  # the value its aliases repeat


def test_more_than_fifty_problems_are_counted_not_listed(suite: Path) -> None:
    """A million unknown keys printed a million lines (167 MB, 1.9 GB RSS)."""
    junk = "".join(f"junk{i}: 1\n" for i in range(5000))
    path = _write(suite, GOOD + junk)
    with pytest.raises(ScenarioError) as info:
        load(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 1 + 50 + 1
    assert lines[-1].endswith("… and 4950 more problems, not listed; fix the first 50 and "
                              "load the file again")


def test_an_oversized_scenario_file_is_refused_unread(suite: Path) -> None:
    path = suite / "scenarios" / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(3 * 2**30)  # sparse: no disk cost, and never read whole
    with pytest.raises(ScenarioError) as info:
        load(path)
    errors = str(info.value)
    assert "holds more than 64 MB" in errors and "split it" in errors


def test_an_oversized_from_file_is_refused_unread(suite: Path) -> None:
    """A 3 GB sparse file in a `from:` folder was read whole (MemoryError)."""
    with (suite / "memdirs" / "demo" / "huge.md").open("wb") as handle:
        handle.truncate(3 * 2**30)
    errors = _errors(suite, GOOD)
    assert errors == [f"12: memdirs.project.from: {suite / 'memdirs' / 'demo'}/huge.md holds "
                      "more than 8 MB; a memory is read for a few KB, so cut the file down "
                      "or remove it"]


@pytest.mark.parametrize("name", ["../memdirs/demo", "/etc", "demo/../../memdirs/demo"])
def test_from_cannot_leave_the_fixture_folders(suite: Path, name: str) -> None:
    errors = _errors(suite, _broken("from: demo", f"from: {name}"))
    assert errors == [f"12: memdirs.project.from: {name!r} must name a folder under "
                      f"{suite / 'memdirs'} (or next to the scenario), without '..' or an "
                      "absolute path"]


def test_symlinks_out_of_a_memdir_are_refused(suite: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    (suite / "memdirs" / "demo" / "leak.md").symlink_to(secret)
    (suite / "memdirs" / "demo" / "inside.md").symlink_to(suite / "memdirs" / "demo" /
                                                          "testing.md")
    errors = _errors(suite, GOOD)
    assert errors == [f"12: memdirs.project.from: {suite / 'memdirs' / 'demo'}/leak.md is a "
                      "symlink to a file outside the folder; copy the file in"]
    (suite / "memdirs" / "demo" / "leak.md").unlink()
    scenario = load(_write(suite, GOOD))
    assert scenario.project.files["inside.md"].content == \
        scenario.project.files["testing.md"].content


def _walked(folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """What `_read_folder` gave when it was written on `os.walk`."""
    found: dict[str, bytes] = {}
    outside: list[str] = []
    root = folder.resolve()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                outside.append(relative)
                continue
            if path.is_file():
                found[relative] = path.read_bytes()
    return found, outside


def test_a_from_folder_is_read_in_walk_order_with_its_links_judged(tmp_path: Path) -> None:
    from memeval.scenarios.loader import _read_folder

    folder = tmp_path / "shop"
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("secret")
    for name in ("b.md", "a.md", "z/y.md", "z/a/deep.md", "Z/upper.md", "m/x.md",
                 ".hidden.md", ".git/config", "z/.hidden/k.md", "a-b.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(name)
    (folder / "inside.md").symlink_to(folder / "a.md")
    (folder / "leaves.md").symlink_to(elsewhere)
    (folder / "dangling.md").symlink_to(folder / "nothing.md")
    (folder / "linked-dir").symlink_to(folder / "z", target_is_directory=True)
    os.mkfifo(folder / "pipe.md")
    read = _read_folder(folder)
    found, outside = read.files, read.outside
    walked, walked_outside = _walked(folder)
    assert list(found.items()) == list(walked.items())  # the same files in the same order
    assert outside == walked_outside
    assert list(found)[:3] == ["a-b.md", "a.md", "b.md"] and "z/a/deep.md" in found
    assert outside == ["leaves.md"] and found["inside.md"] == b"a.md"
    assert not any(name.startswith(".") or "/." in name for name in found)


def test_a_deeply_nested_from_folder_is_read_without_recursion(tmp_path: Path) -> None:
    import sys

    from memeval.scenarios.loader import _read_folder

    deep = tmp_path / "shop"
    deep.mkdir()
    for _ in range(400):
        deep = deep / "d"
        os.mkdir(deep)
    (deep / "bottom.md").write_text("x")
    # A recursion limit the nesting exceeds (the tree stays shallow enough for
    # shutil.rmtree, which pytest's own clean-up uses, at the usual limit).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        found = _read_folder(tmp_path / "shop").files
    finally:
        sys.setrecursionlimit(limit)
    assert list(found) == ["d/" * 400 + "bottom.md"]


def test_a_folder_too_deep_to_list_is_named_not_dropped(suite: Path) -> None:
    """A `from:` tree deeper than the system's path limit lost its files without a
    word (issue 37, item 14); the folder that cannot be listed is now an error."""
    fd = os.open(suite / "memdirs" / "demo", os.O_RDONLY | os.O_DIRECTORY)
    name = "d" * 200
    for _ in range(25):  # 25 × 201 characters: past PATH_MAX (4096) on Linux
        os.mkdir(name, dir_fd=fd)
        fd, parent = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
        os.close(parent)
    note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
    os.write(note, _memfile("buried").encode())
    os.close(note)
    os.close(fd)
    errors = _errors(suite, GOOD)
    assert len(errors) == 1 and errors[0].startswith("12: memdirs.project.from: cannot list ")
    assert "File name too long" in errors[0] and "shorten the path" in errors[0]
