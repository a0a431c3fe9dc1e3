"""Git roots as Claude Code finds them: the checkout's root and the canonical main repo.

The canonical root names the project memdir, so every worktree of a repository shares
one memory; it comes from `memeval.memdir.paths` so phase 1 and phase 2 agree on the
memdir. The checkout root decides which parent folders a nested worktree skips.

Both searches climb towards `/`; given a `ceiling` (a materialized session's walk root),
they stop there and never follow a `.git` file to a git dir outside it.
"""

from __future__ import annotations

import os
from pathlib import Path

from memeval.startup._deps import canonical_git_root


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def find_git_root(start: Path, ceiling: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` holding a `.git` entry (folder or file).

    Args:
        start: where the search begins.
        ceiling: the highest folder looked at; `None` climbs to `/`.
    """
    current = Path(os.path.realpath(start))
    top = os.path.realpath(ceiling) if ceiling is not None else None
    if top is not None and not _within(str(current), top):
        return None
    while True:
        if (current / ".git").exists():
            return current
        if current.parent == current or (top is not None and str(current) == top):
            return None
        current = current.parent


def find_canonical_git_root(start: Path, ceiling: Path | None = None) -> Path | None:
    """The main repository's root for `start`, following a worktree's `.git` file.

    With a `ceiling`, a checkout whose `.git` file points outside it counts as its
    own root (its git dir is not read).
    """
    if ceiling is None:
        return canonical_git_root(start)
    checkout = find_git_root(start, ceiling)
    if checkout is None:
        return None
    dot_git = checkout / ".git"
    top = os.path.realpath(ceiling)
    if dot_git.is_file():
        try:
            text = dot_git.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return checkout
        git_dir = os.path.realpath(checkout / text.removeprefix("gitdir:").strip())
        if not text.startswith("gitdir:") or not _within(git_dir, top):
            return checkout
    found = canonical_git_root(checkout)
    if found is None or not _within(os.path.realpath(found), top):
        return checkout
    return found
