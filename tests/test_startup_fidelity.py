"""Phase 1 where it used to differ from Claude Code 2.1.88 (issue 35, items 7-12), and
the settings the startup env can now carry (setting sources, excludes, disabling)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest
from _files import write

from memeval.errors import MemevalError
from memeval.startup import (
    MemoryFileType,
    StartupEnv,
    discover_memory_files,
    memory_dir_for,
    startup_context_for,
)
from memeval.startup.pipeline import TEXT_FILE_EXTENSIONS

T = MemoryFileType
TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def env(tmp_path: Path) -> StartupEnv:
    env = StartupEnv.in_folder(tmp_path, cwd="work/repo")
    env.cwd.mkdir(parents=True)
    (env.cwd / ".git").mkdir()
    return env


def contents(env: StartupEnv) -> dict[str, str]:
    return {f.path.name: f.content for f in discover_memory_files(env)}


def block_of(env: StartupEnv, name: str) -> str:
    text = startup_context_for(env, today=TODAY).claude_md
    start = text.index(f"/{name} (")
    body = text[text.index(":\n\n", start) + 3:]
    return body.split("\n\nContents of ", 1)[0]


# --- 7. trimming and the include pattern's whitespace are JavaScript's ---------------
def test_a_bom_is_trimmed_from_a_block_but_nel_is_kept(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "\ufeffhello\x85")
    assert block_of(env, "CLAUDE.md") == "hello\x85"


def test_a_file_of_only_nel_or_information_separators_is_not_blank(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "\x85\x1c\x1f")
    assert contents(env) == {"CLAUDE.md": "\x85\x1c\x1f"}


def test_an_include_after_a_bom_is_found_but_not_after_nel_or_a_separator(
    env: StartupEnv,
) -> None:
    write(env.cwd / "CLAUDE.md", "\ufeff@./a.md\nx\x85@./b.md\ny\x1d@./c.md\n")
    for name in ("a.md", "b.md", "c.md"):
        write(env.cwd / name, f"from {name}")
    assert list(contents(env)) == ["CLAUDE.md", "a.md"]


# --- 8. the exact extension list ----------------------------------------------------
def test_the_extension_list_is_the_systems_107() -> None:
    assert len(TEXT_FILE_EXTENSIONS) == 107
    assert {".for", ".makefile", ".R", ".r"} <= TEXT_FILE_EXTENSIONS
    assert not {".mdx", ".markdown", ".svg", ".tf", ".jsonc"} & TEXT_FILE_EXTENSIONS


@pytest.mark.parametrize(("name", "loads"), [
    ("x.for", True), ("x.makefile", True), ("X.MD", True), ("x.R", True), ("Makefile", True),
    ("x.mdx", False), ("x.markdown", False), ("x.svg", False), ("x.tf", False),
    ("x.jsonc", False),
])
def test_an_include_loads_only_with_a_listed_extension(
    env: StartupEnv, name: str, loads: bool
) -> None:
    write(env.cwd / "CLAUDE.md", f"see @./{name}\n")
    write(env.cwd / name, "included text")
    assert (name in contents(env)) == loads


# --- 9. line endings are kept unless a comment made the parser rebuild the text -------
def test_crlf_and_lone_cr_are_kept_without_a_comment(env: StartupEnv) -> None:
    (env.cwd / "CLAUDE.md").write_bytes(b"one\r\ntwo\rthree\r\n@./a.md\r\n")
    write(env.cwd / "a.md", "a")
    files = discover_memory_files(env)
    assert files[0].content == "one\r\ntwo\rthree\r\n@./a.md\r\n"
    assert not files[0].content_differs_from_disk
    assert [f.path.name for f in files] == ["CLAUDE.md", "a.md"]  # the include still found


def test_a_stripped_comment_leaves_lf_endings(env: StartupEnv) -> None:
    (env.cwd / "CLAUDE.md").write_bytes(b"one\r\n\r\n<!-- note -->\r\ntwo\r\n")
    assert contents(env)["CLAUDE.md"] == "one\n\ntwo\n"


# --- 10. a comment interrupts a paragraph only at column 0 ---------------------------
@pytest.mark.parametrize("text", [
    "text\n  <!-- note --> more\n",
    "text\n   <!-- a -->\n  <!-- b -->\nafter\n",
    "text\n <!-- multi\nline -->\n",
])
def test_an_indented_comment_under_paragraph_text_stays(env: StartupEnv, text: str) -> None:
    write(env.cwd / "CLAUDE.md", text)
    assert contents(env)["CLAUDE.md"] == text


@pytest.mark.parametrize(("text", "expected"), [
    ("text\n<!-- note -->\nmore\n", "text\nmore\n"),
    ("text\n\n  <!-- note -->\nmore\n", "text\n\nmore\n"),
    ("text\n  <!-- a -->\n<!-- b -->\n", "text\n  <!-- a -->\n"),
])
def test_a_comment_at_column_0_or_after_a_blank_line_is_stripped(
    env: StartupEnv, text: str, expected: str
) -> None:
    write(env.cwd / "CLAUDE.md", text)
    assert contents(env)["CLAUDE.md"] == expected


# --- 12. an NFD-named entry skips its rules folder (faithful quirk) ------------------
def _rules(env: StartupEnv) -> Path:
    rules = env.cwd / ".claude" / "rules"
    write(rules / "a.md", "rule a")
    write(rules / "cafe\u0301.md", "rule nfd")
    write(rules / "z.md", "rule z")
    write(rules / "sub" / "s.md", "rule s")
    write(rules / "other" / "o.md", "rule o")
    return rules


def test_an_nfd_name_makes_the_faithful_walk_give_up_its_rules_folder(
    env: StartupEnv,
) -> None:
    _rules(env)
    write(env.cwd / ".claude" / "rules" / "other" / "x\u0301.md", "nfd in a subfolder")
    assert discover_memory_files(env) == []


def test_an_nfd_name_in_a_subfolder_drops_only_that_subfolder(env: StartupEnv) -> None:
    rules = env.cwd / ".claude" / "rules"
    write(rules / "a.md", "rule a")
    write(rules / "sub" / "cafe\u0301.md", "rule nfd")
    write(rules / "sub" / "b.md", "rule b")
    write(rules / "z.md", "rule z")
    assert list(contents(env)) == ["a.md", "z.md"]


def test_without_the_quirk_every_rule_loads(env: StartupEnv) -> None:
    _rules(env)
    hardened = replace(env, quirk_nfd_rules_folder_skipped=False)
    assert sorted(contents(hardened)) == sorted(
        ["a.md", "cafe\u0301.md", "z.md", "s.md", "o.md"])


# --- settings: sources, excludes, disabling ----------------------------------------
@pytest.fixture
def every_kind(env: StartupEnv) -> StartupEnv:
    write(env.managed_dir / "CLAUDE.md", "managed")
    write(env.config_home / "CLAUDE.md", "user")
    write(env.config_home / "rules" / "u.md", "user rule")
    write(env.cwd / "CLAUDE.md", "project @./inc.md")
    write(env.cwd / "inc.md", "included")
    write(env.cwd / ".claude" / "rules" / "p.md", "project rule")
    write(env.cwd / "CLAUDE.local.md", "local")
    write(memory_dir_for(env) / "MEMORY.md", "- [a](a.md) — a")
    extra = env.cwd.parent / "extra"
    write(extra / "CLAUDE.md", "added dir")
    return replace(env, additional_dirs=(extra,), additional_dirs_claude_md=True)


def _kinds(env: StartupEnv) -> list[tuple[str, T]]:
    return [(f.content.split()[0], f.type) for f in discover_memory_files(env)]


def test_all_sources_by_default(every_kind: StartupEnv) -> None:
    assert [word for word, _ in _kinds(every_kind)] == [
        "managed", "user", "user", "project", "included", "project", "local", "added",
        "-"]


@pytest.mark.parametrize(("sources", "missing"), [
    ({"project", "local"}, {"user"}),
    ({"user", "local"}, {"project", "included"}),
    ({"user", "project"}, {"local"}),
    (set(), {"user", "project", "included", "local"}),
])
def test_a_setting_source_left_out_leaves_its_files_out(
    every_kind: StartupEnv, sources: set[str], missing: set[str]
) -> None:
    everything = {word for word, _ in _kinds(every_kind)}
    limited = replace(every_kind, setting_sources=frozenset(sources))
    # Managed files, --add-dir folders and the index never depend on the sources.
    assert {word for word, _ in _kinds(limited)} == everything - missing


def test_an_unknown_setting_source_is_refused(env: StartupEnv) -> None:
    with pytest.raises(MemevalError, match="unknown"):
        replace(env, setting_sources=frozenset({"user", "policy"}))


def test_excludes_match_user_project_and_local_files_and_their_includes(
    every_kind: StartupEnv,
) -> None:
    excluded = replace(every_kind, claude_md_excludes=(
        "**/repo/CLAUDE.md", f"{every_kind.cwd}/inc.md", "**/.claude/rules/**",
        "**/CLAUDE.local.md", "/nowhere/{a,b}/*.md"))
    # `**/.claude/rules/**` also catches the user's rules under `~/.claude/rules`.
    assert [word for word, _ in _kinds(excluded)] == ["managed", "user", "added", "-"]


def test_excludes_never_touch_managed_files_or_the_index(every_kind: StartupEnv) -> None:
    excluded = replace(every_kind, claude_md_excludes=("**/CLAUDE.md", "**/MEMORY.md"))
    # Left: the managed file, the rules, the local file and the index.
    assert [word for word, _ in _kinds(excluded)] == [
        "managed", "user", "project", "local", "-"]


def test_excludes_match_through_a_symlinked_prefix(env: StartupEnv, tmp_path: Path) -> None:
    write(env.cwd / "CLAUDE.md", "project")
    alias = tmp_path / "alias"
    alias.symlink_to(env.cwd.parent)
    excluded = replace(env, claude_md_excludes=(f"{alias}/repo/CLAUDE.md",))
    assert discover_memory_files(excluded) == []


def test_disabled_instruction_files_leave_only_the_date(every_kind: StartupEnv) -> None:
    context = startup_context_for(replace(every_kind, instruction_files_disabled=True),
                                  today=TODAY)
    assert context.files == () and context.claude_md == ""
    assert "claudeMd" not in context.text and "2026-11-30" in context.text


def test_from_os_reads_the_disable_flag(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1")
    assert StartupEnv.from_os(cwd=tmp_path, memory_base=tmp_path).instruction_files_disabled
