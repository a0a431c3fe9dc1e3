"""Where memdirs live: the memory base, the per-project key, agent memory dirs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from memeval.errors import MemevalError
from memeval.memdir.text import utf16_len, utf16_slice

MAX_SANITIZED_LENGTH = 200  # longer project keys are cut and suffixed with a hash
AUTO_MEM_DIRNAME = "memory"
REMOTE_MEMORY_ENV = "CLAUDE_CODE_REMOTE_MEMORY_DIR"
CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"

AgentScope = Literal["user", "project", "local"]

_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def memory_base(
    base: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The memory base: `base` if given, else `$CLAUDE_CODE_REMOTE_MEMORY_DIR`,
    else `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    if base is not None:
        return Path(base)
    environ = os.environ if env is None else env
    for name in (REMOTE_MEMORY_ENV, CONFIG_DIR_ENV):
        value = environ.get(name)
        if value:
            return Path(value)
    return Path.home() / ".claude"


def djb2_hash(text: str) -> int:
    """The system's fallback string hash: `h = (h << 5) - h + unit`, 32-bit signed."""
    h = 0
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        h = ((h << 5) - h + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out


def sanitize_path(name: str) -> str:
    """The project key: every UTF-16 unit that is not ASCII alphanumeric becomes `-`.

    Keys over 200 units are cut to 200 and suffixed with `-<hash>`. Production Claude
    Code (Bun) uses `Bun.hash`, which we cannot reproduce; this is the documented
    Node fallback, djb2 (absolute value) in base 36, so long keys differ from Bun's.
    """
    units = name.encode("utf-16-le", "surrogatepass")
    chars = [units[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(units), 2)]
    sanitized = "".join("-" if _NOT_ALNUM.match(c) else c for c in chars)
    if utf16_len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{utf16_slice(sanitized, 0, MAX_SANITIZED_LENGTH)}-{_base36(abs(djb2_hash(name)))}"


def project_memory_dir(base: str | os.PathLike[str], git_root: str | os.PathLike[str]) -> Path:
    """`<base>/projects/<sanitized canonical git root>/memory`."""
    return Path(base) / "projects" / sanitize_path(os.fspath(git_root)) / AUTO_MEM_DIRNAME


def agent_dir_name(agent_type: str) -> str:
    """Agent types may hold `:` (plugin agents); folders get `-` instead."""
    return agent_type.replace(":", "-")


def agent_memory_dir(
    agent_type: str,
    scope: AgentScope,
    *,
    memory_base: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
) -> Path:
    """The memdir of an agent for its memory scope.

    `user` → `<memory base>/agent-memory/<type>`; `project` →
    `<cwd>/.claude/agent-memory/<type>`; `local` → `<cwd>/.claude/agent-memory-local/<type>`.

    Raises:
        MemevalError: `scope` is not one of the three.
    """
    name = agent_dir_name(agent_type)
    if scope == "user":
        return Path(memory_base) / "agent-memory" / name
    if scope == "project":
        return Path(cwd) / ".claude" / "agent-memory" / name
    if scope == "local":
        return Path(cwd) / ".claude" / "agent-memory-local" / name
    raise MemevalError(
        f"agent {agent_type!r}: memory scope {scope!r} is not user, project or local"
    )


def canonical_git_root(start: str | os.PathLike[str]) -> Path | None:
    """The main repository's root for `start` (worktrees map to their main repo), or None.

    Walks up to the first folder holding `.git`. A `.git` file (worktree or submodule)
    points at a git dir; a worktree's git dir has a `commondir` leading to the main
    repository's `.git`, whose parent is the canonical root.
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return folder
            if not text.startswith("gitdir:"):
                return folder
            git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                main_git = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
                if main_git.name == ".git":
                    return main_git.parent
            return folder
    return None
