"""`claudeMdExcludes`: glob patterns that keep user, project and local instruction
files out of the startup context.

Claude Code matches them with picomatch (`dot: true`) against the file's path, and
also tries each absolute pattern with the symlinks of its fixed prefix resolved, so
`/tmp/x/CLAUDE.md` still matches when the file is reached as `/private/tmp/x/...`.
This module translates the glob features the setting is documented with (`*`, `?`,
`**`, `[...]`, `{a,b}`) into regular expressions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from memeval.startup.env import MemoryFileType

EXCLUDABLE_TYPES = frozenset({MemoryFileType.USER, MemoryFileType.PROJECT, MemoryFileType.LOCAL})
"""Managed files and the memdir indexes are never excluded."""

_GLOB_START = re.compile(r"[*?{\[]")


def _class(pattern: str, i: int) -> tuple[str, int]:
    """A `[...]` class starting at `i`, as a regex class, and the index after it."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return re.escape("["), i + 1  # no closing bracket: a literal `[`
    body = pattern[start:j].replace("\\", "\\\\")
    return ("[^/" if negate else "[") + body + "]", j + 1


def _braces(pattern: str, i: int) -> tuple[list[str], int] | None:
    """The comma-separated alternatives of a `{...}` at `i` (nesting respected)."""
    depth, j, parts, current = 0, i + 1, [], ""
    while j < len(pattern):
        char = pattern[j]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                parts.append(current)
                return (parts, j + 1) if len(parts) > 1 else None
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            j += 1
            continue
        current += char
        j += 1
    return None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            piece, i = _class(pattern, i)
            out.append(piece)
        elif pattern[i] == "{" and (found := _braces(pattern, i)) is not None:
            alternatives, i = found
            out.append("(?:" + "|".join(_translate(a) for a in alternatives) + ")")
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled full-match regex for one picomatch-style glob (dotfiles included)."""
    return re.compile(_translate(pattern), re.DOTALL)


def _with_resolved_prefixes(patterns: Sequence[str]) -> list[str]:
    expanded = [p.replace("\\", "/") for p in patterns]
    for pattern in list(expanded):
        if not pattern.startswith("/"):
            continue
        glob_at = _GLOB_START.search(pattern)
        static = pattern if glob_at is None else pattern[: glob_at.start()]
        folder = os.path.dirname(static)
        try:
            resolved = os.path.realpath(folder, strict=True)
        except (OSError, ValueError):
            continue
        if resolved != folder:
            expanded.append(resolved + pattern[len(folder):])
    return [p for p in expanded if p]


def is_excluded(path: Path, file_type: MemoryFileType, patterns: Sequence[str]) -> bool:
    """Whether `claudeMdExcludes` keeps this file out (only user, project and local
    files can be excluded; includes inherit their includer's type)."""
    if not patterns or file_type not in EXCLUDABLE_TYPES:
        return False
    target = os.fspath(path).replace("\\", "/")
    return any(glob_regex(p).fullmatch(target) for p in _with_resolved_prefixes(patterns))
