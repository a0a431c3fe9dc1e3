"""Git roots as Claude Code finds them: the checkout's root and the canonical main repo.

The canonical root names the project memdir, so every worktree of a repository shares
one memory; it comes from `memeval.memdir.paths` so phase 1 and phase 2 agree on the
memdir. The checkout root decides which parent folders a nested worktree skips.
"""

from __future__ import annotations

import os
from pathlib import Path

from memeval.startup._deps import canonical_git_root


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a `.git` entry (folder or file)."""
    current = Path(os.path.realpath(start))
    while True:
        if (current / ".git").exists():
            return current
        if current.parent == current:
            return None
        current = current.parent


def find_canonical_git_root(start: Path) -> Path | None:
    """The main repository's root for `start`, following a worktree's `.git` file."""
    return canonical_git_root(start)
