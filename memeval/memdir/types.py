"""The records of a memdir: memory types and the header the scan yields per file."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class MemoryType(StrEnum):
    """The four memory types; matching is exact and case-sensitive."""

    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"


_BY_VALUE = {member.value: member for member in MemoryType}


def parse_memory_type(value: Any) -> MemoryType | None:
    """The type named by a frontmatter value, or None for anything else (never an error)."""
    return _BY_VALUE.get(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class MemoryHeader:
    """What the scan knows about one memory file.

    Args:
        filename: path relative to the memdir with `/` separators, as listed.
        file_path: absolute path (memdir joined with `filename`).
        mtime_ms: modification time in milliseconds, computed as Node does.
        description: the description as the manifest prints it (JavaScript
            `String()` of the YAML value), or None when the value is falsy in
            JavaScript (missing, empty, `0`, `false`, `null`).
        type: the memory type, or None.
        raw_description: the YAML value itself (string, number, list, mapping...),
            kept for conformance checks; not part of equality.
    """

    filename: str
    file_path: str
    mtime_ms: float
    description: str | None
    type: MemoryType | None
    raw_description: Any = field(default=None, compare=False, repr=False)
