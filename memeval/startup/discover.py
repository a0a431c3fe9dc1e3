"""Which instruction files a session starts with, in SPEC §4.1 order (later wins)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from memeval.startup._deps import ENTRYPOINT_NAME, project_memory_dir
from memeval.startup.env import MemoryFileType, StartupEnv
from memeval.startup.gitroot import find_canonical_git_root, find_git_root
from memeval.startup.pipeline import Loader, MemoryFile, normalize_for_comparison, path_within

TEAM_DIR_NAME = "team"
"""Subfolder of the project memdir holding the shared team memory."""


@dataclass(frozen=True)
class Discovery:
    """The result of one discovery pass.

    Args:
        files: what loads at startup, in context order.
        conditional: rules with `paths:` globs, set aside until a tool touches a
            matching file; never part of the startup context.
        memory_dir: the project memdir the index came from (or would have).
    """

    files: tuple[MemoryFile, ...]
    conditional: tuple[MemoryFile, ...]
    memory_dir: Path


def project_root(env: StartupEnv) -> Path:
    """The root naming the project memdir: the canonical git root, else the cwd."""
    if env.git_root is not None:
        return env.git_root
    return find_canonical_git_root(env.cwd, env.walk_root) or _cwd(env)


def memory_dir_for(env: StartupEnv) -> Path:
    """The project's auto-memory dir for `env`."""
    if env.memory_dir is not None:
        return env.memory_dir
    return project_memory_dir(env.memory_base, project_root(env))


def _cwd(env: StartupEnv) -> Path:
    # The process cwd is always a real, absolute path (getcwd resolves symlinks).
    return Path(os.path.realpath(env.cwd))


def _walk_dirs(cwd: Path, stop: Path | None = None) -> list[Path]:
    """Folders from the filesystem root's child (or from `stop`) down to `cwd`."""
    dirs = []
    current = cwd
    while current.parent != current:
        dirs.append(current)
        if stop is not None and current == stop:
            break
        current = current.parent
    return dirs[::-1]


def _nested_worktree_skip(cwd: Path, stop: Path | None = None) -> tuple[Path, Path] | None:
    """(checkout root, main root) when `cwd` is in a worktree nested inside its main repo.

    The upward walk then passes through both checkouts, and their checked-in files
    are copies of each other; Claude Code skips the Project files of folders inside
    the main repo but above the worktree (CLAUDE.local.md, being untracked, still loads).
    """
    checkout = find_git_root(cwd, stop)  # never above the walk's root: a `.git`
    canonical = find_canonical_git_root(cwd, stop)  # file planted there is not read
    if checkout is None or canonical is None:
        return None
    if stop is not None and not path_within(canonical, stop):
        return None  # a repository above the walk's root is none of this session's
    if normalize_for_comparison(checkout) == normalize_for_comparison(canonical):
        return None
    if not path_within(checkout, canonical):
        return None
    return checkout, canonical


def discover(env: StartupEnv) -> Discovery:
    """Run discovery once; see `discover_memory_files` for the order."""
    cwd = _cwd(env)
    memory_dir = memory_dir_for(env)
    if env.instruction_files_disabled:
        return Discovery((), (), memory_dir)
    loader = Loader(replace(env, cwd=cwd))
    external = env.external_includes_approved
    files: list[MemoryFile] = []

    files += loader.load(
        env.managed_dir / "CLAUDE.md", MemoryFileType.MANAGED, include_external=external
    )
    files += loader.load_rules(
        env.managed_dir / ".claude" / "rules", MemoryFileType.MANAGED, include_external=external
    )
    if env.source_enabled("user"):
        # The user's own files may always include from anywhere.
        files += loader.load(env.config_home / "CLAUDE.md", MemoryFileType.USER,
                             include_external=True)
        files += loader.load_rules(
            env.config_home / "rules", MemoryFileType.USER, include_external=True
        )

    stop = None if env.walk_root is None else Path(os.path.realpath(env.walk_root))
    skip = _nested_worktree_skip(cwd, stop)
    for folder in _walk_dirs(cwd, stop):
        skip_project = (
            skip is not None and path_within(folder, skip[1]) and not path_within(folder, skip[0])
        )
        if not skip_project and env.source_enabled("project"):
            files += _project_files(loader, folder, external)
        if env.source_enabled("local"):
            files += loader.load(
                folder / "CLAUDE.local.md", MemoryFileType.LOCAL, include_external=external
            )

    # `--add-dir` is an explicit request: it does not depend on the setting sources.
    if env.additional_dirs_claude_md:
        for folder in env.additional_dirs:
            files += _project_files(loader, Path(folder), external)

    if env.auto_memory_enabled:
        files += loader.load_index(memory_dir / ENTRYPOINT_NAME, MemoryFileType.AUTO_MEM)
    if env.auto_memory_enabled and env.team_memory_enabled:
        files += loader.load_index(
            memory_dir / TEAM_DIR_NAME / ENTRYPOINT_NAME, MemoryFileType.TEAM_MEM
        )
    return Discovery(tuple(files), tuple(loader.conditional), memory_dir)


def _project_files(loader: Loader, folder: Path, external: bool) -> list[MemoryFile]:
    project = MemoryFileType.PROJECT
    return [
        *loader.load(folder / "CLAUDE.md", project, include_external=external),
        *loader.load(folder / ".claude" / "CLAUDE.md", project, include_external=external),
        *loader.load_rules(folder / ".claude" / "rules", project, include_external=external),
    ]


def discover_memory_files(env: StartupEnv) -> list[MemoryFile]:
    """The files a session starts with, lowest priority first (SPEC §4.1).

    Order: managed `CLAUDE.md` and rules; user `CLAUDE.md` and rules; for each folder
    from the root's child down to `cwd`: `CLAUDE.md`, `.claude/CLAUDE.md`,
    `.claude/rules/**/*.md`, `CLAUDE.local.md`; `--add-dir` folders (when enabled);
    the project memdir's `MEMORY.md`; the team `MEMORY.md`. Each file is followed by
    its includes. Conditional rules are not returned (see `discover`).

    Args:
        env: the roots and flags; nothing outside them is read.
    """
    return list(discover(env).files)
