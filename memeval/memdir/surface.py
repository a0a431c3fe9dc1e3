"""Reading a selected memory the way it is attached to the conversation (SPEC §2.6)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from memeval.errors import MemevalError
from memeval.memdir.age import memory_header
from memeval.memdir.readfile import read_file_in_range

MAX_SURFACED_PER_TURN = 5  # memories surfaced per turn, whatever the selector says (§2.6)
MAX_MEMORY_LINES = 200  # lines of one surfaced memory
MAX_MEMORY_BYTES = 4096  # UTF-8 bytes of one surfaced memory, before the note
MAX_SESSION_BYTES = 60 * 1024  # surfaced UTF-16 units after which recall stops
READ_TOOL_NAME = "Read"  # the tool the truncation note points the model to

# The note is the system's fixed format; `{limit}` is the reason in parentheses.
TRUNCATION_NOTE = (
    "\n\n> This memory file was truncated ({limit}). "
    "Use the {tool} tool to view the complete file at: {path}"
)


class MemoryReadError(MemevalError):
    """A selected memory file could not be read; the system skips it."""

    def __init__(self, path: str, cause: OSError) -> None:
        super().__init__(
            f"{path}: cannot read memory file ({cause.strerror or cause}); "
            "check that it exists and is a readable file"
        )
        self.path = path
        self.cause = cause


@dataclass(frozen=True)
class SurfacedMemory:
    """One memory as the attachment carries it.

    Args:
        path: the file's path, as selected.
        content: the kept lines, plus the truncation note when truncated.
        mtime_ms: the mtime the header was computed from.
        header: the line(s) shown above the content (age, path).
        truncated: a line or byte cap applied.
        line_limit: lines kept when truncated, else None (the attachment's `limit`).
    """

    path: str
    content: str
    mtime_ms: float
    header: str
    truncated: bool
    line_limit: int | None


def read_memory_for_surfacing(
    path: str | os.PathLike[str],
    mtime_ms: float | None = None,
    *,
    now_ms: float | None = None,
    staleness_template: str | None = None,
) -> SurfacedMemory:
    """Read one memory from line 0 within 200 lines and 4096 bytes, and build its header.

    Args:
        path: the memory file.
        mtime_ms: the mtime from the scan (what the system uses); None reads it from disk.
        now_ms: the clock for the age header; None is the wall clock.
        staleness_template: replaces our staleness paragraph (jinja2, gets `days`).

    Raises:
        MemoryReadError: the file cannot be read (the system leaves it out).
    """
    file_path = os.fspath(path)
    try:
        read = read_file_in_range(file_path, MAX_MEMORY_LINES, MAX_MEMORY_BYTES)
    except OSError as exc:
        raise MemoryReadError(file_path, exc) from exc
    mtime = read.mtime_ms if mtime_ms is None else mtime_ms
    truncated = read.total_lines > MAX_MEMORY_LINES or read.truncated_by_bytes
    content = read.content
    if truncated:
        limit = (
            f"{MAX_MEMORY_BYTES} byte limit"
            if read.truncated_by_bytes
            else f"first {MAX_MEMORY_LINES} lines"
        )
        content += TRUNCATION_NOTE.format(limit=limit, tool=READ_TOOL_NAME, path=file_path)
    return SurfacedMemory(
        path=file_path,
        content=content,
        mtime_ms=mtime,
        header=memory_header(file_path, mtime, now_ms, template=staleness_template),
        truncated=truncated,
        line_limit=read.line_count if truncated else None,
    )
