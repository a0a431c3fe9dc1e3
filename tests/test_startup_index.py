"""The MEMORY.md index at startup: truncation in context, and the reachability hook."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from memeval.memdir.text import utf16_len
from memeval.startup import (
    MemoryFileType,
    StartupEnv,
    discover_memory_files,
    memory_dir_for,
    startup_context_for,
    startup_reachable,
)

TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def env(tmp_path: Path) -> StartupEnv:
    env = StartupEnv.in_folder(tmp_path, cwd="proj")
    env.cwd.mkdir(parents=True)
    return env


def write_index(env: StartupEnv, text: str, name: str = "MEMORY.md") -> Path:
    path = memory_dir_for(env) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def entry(i: int, hook: str = "a short hook") -> str:
    return f"- [Topic {i}](topic-{i}.md) — {hook}"


def index_file(env: StartupEnv):
    [file] = [f for f in discover_memory_files(env) if f.type == MemoryFileType.AUTO_MEM]
    return file


def body_and_warning(content: str) -> tuple[str, str]:
    body, _, warning = content.partition("\n\n> WARNING: ")
    return body, warning


def test_index_of_250_lines_keeps_200_and_names_the_line_reason(env: StartupEnv) -> None:
    write_index(env, "\n".join(entry(i) for i in range(1, 251)) + "\n")
    file = index_file(env)
    body, warning = body_and_warning(file.content)
    assert body.split("\n") == [entry(i) for i in range(1, 201)]
    assert warning.startswith("MEMORY.md is 250 lines (limit: 200).")
    assert (file.line_count, file.was_line_truncated, file.was_byte_truncated) == (250, True, False)
    assert startup_reachable(env, "topic-200.md")
    assert not startup_reachable(env, "topic-201.md")


def test_index_of_30000_chars_in_120_lines_is_cut_at_a_line_end(env: StartupEnv) -> None:
    lines = [entry(i, "x" * (250 - len(entry(i, "")))) for i in range(1, 121)]
    assert all(len(line) == 250 for line in lines)
    raw = "\n".join(lines)
    assert len(raw) == 30_119
    write_index(env, raw)
    file = index_file(env)
    body, warning = body_and_warning(file.content)
    assert utf16_len(body) <= 25_000
    assert body.split("\n") == lines[: len(body.split("\n"))]  # whole lines only
    assert len(body.split("\n")) == 25_000 // 251  # 99 lines and their newlines fit
    assert warning.startswith("MEMORY.md is 29.4KB (limit: 24.4KB) — index entries are too long.")
    assert (file.was_line_truncated, file.was_byte_truncated) == (False, True)
    assert startup_reachable(env, "topic-99.md")
    assert not startup_reachable(env, "topic-100.md")


def test_index_over_both_limits_names_both(env: StartupEnv) -> None:
    write_index(env, "\n".join(entry(i, "y" * 200) for i in range(1, 301)))
    body, warning = body_and_warning(index_file(env).content)
    assert warning.startswith("MEMORY.md is 300 lines and ")
    assert len(body.split("\n")) < 200 and utf16_len(body) <= 25_000


def test_empty_index_yields_no_block(env: StartupEnv) -> None:
    write_index(env, "")
    context = startup_context_for(env, today=TODAY)
    assert [f.content for f in context.files] == [""]  # listed, but nothing to show
    assert "claudeMd" not in context.text
    assert not startup_reachable(context, "anything.md")


def test_non_bmp_index_is_measured_in_utf16_units(env: StartupEnv) -> None:
    # 100 lines of 120 emoji: 12 000 code points but over 24 000 UTF-16 units.
    lines = [f"- [{i}](m{i}.md) " + "😀" * 120 for i in range(100)]
    raw = "\n".join(lines)
    assert len(raw) < 25_000 < utf16_len(raw)
    write_index(env, raw)
    file = index_file(env)
    body, warning = body_and_warning(file.content)
    assert file.was_byte_truncated and not file.was_line_truncated
    assert file.byte_count == utf16_len(raw)
    assert utf16_len(body) <= 25_000
    assert body.split("\n") == lines[: len(body.split("\n"))]  # no half surrogate pair
    assert "index entries are too long" in warning


def test_index_under_the_limits_is_only_trimmed(env: StartupEnv) -> None:
    raw = "\n\n" + "\n".join(entry(i) for i in range(1, 201)) + "\n\n"
    write_index(env, raw)
    file = index_file(env)
    assert file.content == raw.strip()
    assert not (file.was_line_truncated or file.was_byte_truncated)


def test_topic_files_are_never_in_the_startup_context(env: StartupEnv) -> None:
    write_index(env, entry(1))
    write_index(env, "---\ndescription: TOPIC SECRET\n---\nTOPIC BODY", name="topic-1.md")
    context = startup_context_for(env, today=TODAY)
    assert "TOPIC" not in context.text
    assert [f.path.name for f in context.files] == ["MEMORY.md"]


def test_recall_mode_leaves_the_index_out_and_nothing_is_reachable(env: StartupEnv) -> None:
    write_index(env, entry(1))
    (env.cwd / "CLAUDE.md").write_text("project rule")
    recall = replace(env, recall_mode=True)
    context = startup_context_for(recall, today=TODAY)
    assert "MEMORY.md" not in context.text
    assert "project rule" in context.text
    assert [f.type for f in context.files] == [MemoryFileType.PROJECT, MemoryFileType.AUTO_MEM]
    assert [f.type for f in context.in_context] == [MemoryFileType.PROJECT]
    assert not startup_reachable(context, "topic-1.md")
    assert startup_reachable(env, "topic-1.md")


@pytest.mark.parametrize(
    ("line", "name", "reachable"),
    [
        ("- [A](notes/db.md) — h", "notes/db.md", True),
        ("- [A](./notes/db.md) — h", "notes/db.md", True),
        ("- [A](notes/db.md#section) — h", "notes/db.md", True),
        ("- [A](my%20file.md) — h", "my file.md", True),
        ("- [A](<my file.md>) — h", "my file.md", True),
        ("- [A](notes/db.md) — h", "db.md", False),
        ("- notes/db.md mentioned without a link", "notes/db.md", False),
        ("- [A](https://example.com/db.md) — h", "db.md", False),
    ],
)
def test_reachability_follows_index_links(
    env: StartupEnv, line: str, name: str, reachable: bool
) -> None:
    write_index(env, line)
    assert startup_reachable(env, name) is reachable


def test_team_memories_are_reachable_through_the_team_index(env: StartupEnv) -> None:
    write_index(env, "- [Deploys](deploys.md) — team deploy rules", name="team/MEMORY.md")
    team = replace(env, team_memory_enabled=True)
    assert startup_reachable(team, "team/deploys.md")
    assert not startup_reachable(team, "deploys.md")
    assert not startup_reachable(env, "team/deploys.md")
