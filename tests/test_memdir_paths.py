"""Memory base resolution, project keys and agent memory dirs (hashes checked in Node)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memeval.errors import MemevalError
from memeval.memdir.paths import (
    agent_memory_dir,
    canonical_git_root,
    djb2_hash,
    memory_base,
    project_memory_dir,
    sanitize_path,
)


def test_sanitize_replaces_every_non_alphanumeric_unit() -> None:
    assert sanitize_path("/home/u/my.proj") == "-home-u-my-proj"
    # One astral character is two UTF-16 units, so two dashes.
    assert sanitize_path("/p/😀é") == "-p----"


def test_long_keys_are_cut_and_hashed_with_the_documented_fallback() -> None:
    long = "/home/u/" + "x" * 250
    key = sanitize_path(long)
    assert key == "-home-u-" + "x" * 192 + "-47iwxx"
    emoji = "/p/" + "😀" * 120
    assert sanitize_path(emoji) == "-p-" + "-" * 197 + "-a7sqs6"
    assert djb2_hash("/home/u/my.proj") == -1217895548


def test_exactly_200_units_is_not_hashed() -> None:
    name = "a" * 200
    assert sanitize_path(name) == name
    assert sanitize_path(name + "b").startswith("a" * 200 + "-")


def test_memory_base_precedence() -> None:
    env = {"CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote", "CLAUDE_CONFIG_DIR": "/cfg"}
    assert memory_base("/arg", env) == Path("/arg")
    assert memory_base(None, env) == Path("/remote")
    assert memory_base(None, {"CLAUDE_CONFIG_DIR": "/cfg"}) == Path("/cfg")
    assert memory_base(None, {"CLAUDE_CONFIG_DIR": ""}) == Path.home() / ".claude"
    assert memory_base(None, {}) == Path.home() / ".claude"


def test_project_memory_dir() -> None:
    assert project_memory_dir("/b", "/home/u/my.proj") == Path("/b/projects/-home-u-my-proj/memory")


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("user", "/base/agent-memory/plug-reviewer"),
        ("project", "/work/.claude/agent-memory/plug-reviewer"),
        ("local", "/work/.claude/agent-memory-local/plug-reviewer"),
    ],
)
def test_agent_memory_dirs(scope: str, expected: str) -> None:
    got = agent_memory_dir("plug:reviewer", scope, memory_base="/base", cwd="/work")  # type: ignore[arg-type]
    assert got == Path(expected)


def test_unknown_agent_scope_is_a_clear_error() -> None:
    with pytest.raises(MemevalError, match="memory scope 'team'"):
        agent_memory_dir("a", "team", memory_base="/b", cwd="/c")  # type: ignore[arg-type]


def test_canonical_root_of_a_worktree_is_the_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    wt = tmp_path / "wt"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    (main / "sub").mkdir()
    assert canonical_git_root(main / "sub") == main.resolve()
    assert canonical_git_root(wt) == main.resolve()
    assert canonical_git_root(tmp_path) is None or canonical_git_root(tmp_path) != main
