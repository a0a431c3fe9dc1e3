"""`memeval lint`: the index checks and the command's output and exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.startup.lint import lint_memdir


def memdir(tmp_path: Path, index: str | None, files: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / "memdir"
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("---\ndescription: d\n---\nbody\n")
    if index is not None:
        (folder / "MEMORY.md").write_text(index, encoding="utf-8")
    return folder


def codes(folder: Path, **options: int) -> list[tuple[int, str]]:
    return [(p.line, p.code) for p in lint_memdir(folder, **options)]


def test_clean_index_has_no_problems(tmp_path: Path) -> None:
    folder = memdir(
        tmp_path,
        "# Memory\n\n- [A](a.md) — hook\n- [B](notes/b.md#part) — hook\n<!-- hand-kept -->\n",
        ("a.md", "notes/b.md"),
    )
    assert codes(folder) == []


def test_each_broken_line_is_one_problem_with_its_line_number(tmp_path: Path) -> None:
    folder = memdir(
        tmp_path,
        "- [A](a.md) — fine\n"
        "- [Gone](gone.md) — missing file\n"
        "- a line without a link\n"
        "- [Up](../outside.md) — leaves the memdir\n"
        "- [Idx](sub/MEMORY.md) — an index\n"
        f"- [Long](a.md) — {'x' * 200}\n"
        "- [Web](https://example.com) — external only\n",
        ("a.md", "sub/MEMORY.md"),
    )
    assert codes(folder) == [
        (2, "bad-link"),
        (3, "no-link"),
        (4, "bad-link"),
        (5, "bad-link"),
        (6, "long-entry"),
        (7, "no-link"),
    ]


def test_entry_length_is_configurable_and_counted_in_utf16_units(tmp_path: Path) -> None:
    line = "- [E](a.md) " + "😀" * 80  # 92 code points, 172 UTF-16 units
    folder = memdir(tmp_path, line, ("a.md",))
    assert codes(folder) == []
    assert codes(folder, max_entry_chars=150) == [(1, "long-entry")]


def test_missing_index_and_frontmatter_and_over_limits(tmp_path: Path) -> None:
    assert codes(memdir(tmp_path / "x", None)) == [(0, "no-index")]
    lines = "\n".join(f"- [A{i}](a.md) — hook" for i in range(250))
    folder = memdir(tmp_path, "---\nname: idx\n---\n" + lines, ("a.md",))
    problems = lint_memdir(folder)
    assert [(p.line, p.code) for p in problems] == [(1, "frontmatter"), (0, "over-limits")]
    assert "250 lines (limit: 200)" in problems[1].message


def test_line_numbers_count_from_the_file_start_after_frontmatter(tmp_path: Path) -> None:
    folder = memdir(tmp_path, "---\nname: idx\n---\n- [Gone](gone.md) — x\n")
    assert codes(folder) == [(1, "frontmatter"), (4, "bad-link")]


def test_fenced_blocks_are_not_entries(tmp_path: Path) -> None:
    folder = memdir(tmp_path, "- [A](a.md) — h\n```\nnot an entry\n```\n", ("a.md",))
    assert codes(folder) == []


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_cli_prints_one_line_per_problem_and_exits_non_zero(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = memdir(tmp_path, "- [Gone](gone.md) — x\nno link here\n")
    result = runner.invoke(cli, ["lint", str(folder)])
    assert result.exit_code == 1
    index = folder / "MEMORY.md"
    assert result.stdout.splitlines() == [
        f"{index}:1: bad-link: link 'gone.md': no such file in the memdir; "
        "fix the path or the file",
        f"{index}:2: no-link: entry has no link to a memory file; add [title](file.md)",
    ]


def test_cli_ignore_and_success(tmp_path: Path, runner: CliRunner) -> None:
    folder = memdir(tmp_path, "no link here\n")
    assert runner.invoke(cli, ["lint", str(folder), "--ignore", "no-link"]).exit_code == 0


def test_cli_bad_arguments_give_one_clear_line(tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert runner.invoke(cli, ["lint", "--help"]).output.count("memeval lint ") >= 2


def test_orphans_and_broken_frontmatter_are_reported(tmp_path):
    from memeval.startup.lint import lint_memdir

    (tmp_path / "MEMORY.md").write_text("- [Testing](testing.md) real database\n")
    (tmp_path / "testing.md").write_text("---\ndescription: run tests on postgres\n---\nbody\n")
    (tmp_path / "orphan.md").write_text("---\ndescription: nobody links here\n---\nbody\n")
    (tmp_path / "broken.md").write_text("---\ndescription: [unclosed\n")
    problems = {(p.path.name, p.code) for p in lint_memdir(tmp_path)}
    assert ("orphan.md", "orphan") in problems and ("broken.md", "orphan") in problems
    assert ("broken.md", "bad-frontmatter") in problems
    assert not any(name == "testing.md" for name, _ in problems)


def test_invalid_frontmatter_names_the_line_where_the_yaml_breaks(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- [B](b.md) x\n- [C](c.md) y\n")
    (tmp_path / "b.md").write_text("---\nname: b\ntype: user\ndescription: x\n"
                                   "  bad: : indent\n---\nbody\n")
    (tmp_path / "c.md").write_text("---\n- a list\n- not a mapping\n---\nbody\n")
    assert [str(p).replace(f"{tmp_path}/", "") for p in lint_memdir(tmp_path)] == [
        "b.md:5: bad-frontmatter: the frontmatter is not valid YAML (mapping values are not "
        "allowed here); the manifest shows no description",
        "c.md:2: bad-frontmatter: the frontmatter is not valid YAML (not a mapping of keys "
        "to values); the manifest shows no description",
    ]


def test_unclosed_frontmatter_and_orphans_through_the_cli(tmp_path: Path,
                                                          runner: CliRunner) -> None:
    (tmp_path / "MEMORY.md").write_text("- [A](a.md) x\n")
    (tmp_path / "a.md").write_text("---\ndescription: never closed\nbody\n")
    (tmp_path / "lost.md").write_text("---\ndescription: nobody links here\n---\nbody\n")
    result = runner.invoke(cli, ["lint", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'a.md'}:1: bad-frontmatter: the frontmatter block is not closed with "
        "---; the file has no description",
        f"{tmp_path / 'lost.md'}: orphan: no index line links to this memory; add one, or it "
        "is invisible in index mode",
    ]


def test_a_fifo_named_like_a_memory_does_not_hang_lint(tmp_path: Path) -> None:
    """Read on a worker thread with a limit, so a regression fails instead of hanging."""
    import threading

    (tmp_path / "MEMORY.md").write_text("- [A](a.md) x\n")
    (tmp_path / "a.md").write_text("---\ndescription: fine\n---\n")
    os.mkfifo(tmp_path / "pipe.md")
    found: list[str] = []
    worker = threading.Thread(target=lambda: found.extend(
        str(p) for p in lint_memdir(tmp_path)), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # unblock the reader so the test process can exit
        with open(tmp_path / "pipe.md", "w"):
            pass
    assert not worker.is_alive(), "lint blocked on a FIFO"
    assert found == []
