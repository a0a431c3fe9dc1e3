"""Rendering (SPEC §4.4): blocks, descriptions, the meta message, the mode flag."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memeval.startup import (
    DESCRIPTIONS,
    MemoryFile,
    MemoryFileType,
    StartupEnv,
    build_user_context,
    memory_dir_for,
    render_claude_md,
    render_user_context,
    startup_context_for,
)
from memeval.startup.render import prose

T = MemoryFileType
TODAY = dt.date(2026, 11, 30)


def mf(path: str, file_type: MemoryFileType, content: str) -> MemoryFile:
    return MemoryFile(path=Path(path), type=file_type, content=content)


@pytest.mark.parametrize(
    ("file_type", "description"),
    [
        (T.PROJECT, " (project instructions, checked into the codebase)"),
        (T.LOCAL, " (user's private project instructions, not checked in)"),
        (T.AUTO_MEM, " (user's auto-memory, persists across conversations)"),
        (T.TEAM_MEM, " (shared team memory, synced across the organization)"),
        (T.USER, " (user's private global instructions for all projects)"),
        (T.MANAGED, " (user's private global instructions for all projects)"),
    ],
)
def test_block_header_and_description(file_type: MemoryFileType, description: str) -> None:
    assert DESCRIPTIONS[file_type] == description
    rendered = render_claude_md([mf("/p/CLAUDE.md", file_type, "\n  body \n")])
    assert rendered == f"{prose('preamble')}\n\nContents of /p/CLAUDE.md{description}:\n\nbody"


def test_blocks_keep_order_and_are_joined_by_a_blank_line() -> None:
    files = [mf("/a", T.USER, "one"), mf("/b", T.PROJECT, "two"), mf("/c", T.AUTO_MEM, "three")]
    blocks = render_claude_md(files).split("\n\nContents of ")
    assert [b.rsplit("\n\n", 1)[-1] for b in blocks[1:]] == ["one", "two", "three"]
    assert blocks[0] == prose("preamble")


def test_preamble_is_one_sentence_about_overriding_defaults() -> None:
    preamble = prose("preamble")
    assert preamble.count(".") == 1 and preamble.endswith(".")
    assert "\n" not in preamble


def test_recall_mode_drops_index_blocks_only() -> None:
    files = [mf("/a", T.PROJECT, "rule"), mf("/m", T.AUTO_MEM, "idx"), mf("/t", T.TEAM_MEM, "t")]
    assert "idx" in render_claude_md(files, "index")
    recall = render_claude_md(files, "recall")
    assert "rule" in recall and "idx" not in recall and "/t" not in recall
    assert render_claude_md(files[1:], "recall") == ""


def test_no_files_renders_nothing() -> None:
    assert render_claude_md([]) == ""
    assert render_claude_md([mf("/a", T.PROJECT, "")]) == ""


def test_user_context_message_structure_exactly() -> None:
    text = render_user_context("CLAUDE MD TEXT", TODAY)
    assert text == (
        "<system-reminder>\n"
        f"{prose('context_intro')}\n"
        "# claudeMd\n"
        "CLAUDE MD TEXT\n"
        "# currentDate\n"
        "Today's date is 2026-11-30.\n"
        "\n"
        f"      {prose('context_closing')}\n"
        "</system-reminder>\n"
    )


def test_user_context_without_instructions_has_only_the_date() -> None:
    text = render_user_context("", TODAY)
    assert "# claudeMd" not in text
    assert text.startswith(f"<system-reminder>\n{prose('context_intro')}\n# currentDate\n")


def test_templates_can_be_replaced(tmp_path: Path) -> None:
    (tmp_path / "preamble.j2").write_text("PRODUCTION PREAMBLE\n")
    rendered = render_claude_md([mf("/a", T.PROJECT, "x")], templates=tmp_path)
    assert rendered.startswith("PRODUCTION PREAMBLE\n\nContents of /a")
    # The other templates fall back to ours.
    assert prose("context_closing", templates=tmp_path) == prose("context_closing")


def test_build_user_context_end_to_end(tmp_path: Path) -> None:
    env = StartupEnv.in_folder(tmp_path, cwd="proj")
    env.cwd.mkdir(parents=True)
    (env.cwd / "CLAUDE.md").write_text("Use uv.\n")
    memdir = memory_dir_for(env)
    memdir.mkdir(parents=True)
    (memdir / "MEMORY.md").write_text("- [Testing](testing.md) — real db\n")
    text = build_user_context(env, today=TODAY)
    claude_md = (
        f"{prose('preamble')}\n\n"
        f"Contents of {env.cwd / 'CLAUDE.md'}{DESCRIPTIONS[T.PROJECT]}:\n\nUse uv.\n\n"
        f"Contents of {memdir / 'MEMORY.md'}{DESCRIPTIONS[T.AUTO_MEM]}:\n\n"
        "- [Testing](testing.md) — real db"
    )
    assert text == render_user_context(claude_md, TODAY)
    context = startup_context_for(env, today=TODAY)
    assert context.message() == {"role": "user", "content": text}
    assert context.memory_dir == memdir


@pytest.mark.parametrize("name", ["bundled", "recall"])
def test_both_modes_from_one_discovery_equal_each_mode_alone(name: str, tmp_path: Path) -> None:
    from dataclasses import replace

    from memeval.run.config import bundled_fixtures_dir
    from memeval.run.play import startup_contexts
    from memeval.scenarios import load, materialize

    paths = sorted((bundled_fixtures_dir() / "scenarios").glob("*.yaml"))
    scenario = load(paths[0] if name == "bundled" else next(
        p for p in paths if "mode: recall" in p.read_text(encoding="utf-8")))
    world = materialize(scenario, tmp_path)
    both = startup_contexts(world, scenario)
    sandbox = world.root / "startup"
    env = StartupEnv(cwd=world.cwd, config_home=sandbox / "config",
                     memory_base=world.memory_base, home=sandbox / "home",
                     managed_dir=sandbox / "managed", memory_dir=world.project_dir,
                     walk_root=world.root,
                     auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)))
    for mode in ("index", "recall"):
        alone = startup_context_for(replace(env, recall_mode=mode == "recall"),
                                    today=scenario.now.date())
        assert both[mode] == alone
    assert both["index"].text != both["recall"].text  # the modes do differ in the text
