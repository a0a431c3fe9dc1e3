"""Reading a line range the way Claude Code's `readFileInRange` does (fast path).

One reader for the scan (first 30 lines) and for surfacing (200 lines, 4096 bytes),
so BOM, CRLF and line counting follow the same rules in both.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from memeval.memdir.text import utf8_len


@dataclass(frozen=True)
class RangeRead:
    """The kept lines of a file and what was left out.

    Args:
        content: kept lines joined by `\\n` (BOM and a `\\r` before each `\\n` removed).
        line_count: lines kept.
        total_lines: lines in the file, counting the fragment after the last `\\n`.
        truncated_by_bytes: a line was refused because of the byte cap.
        mtime_ms: Node's `mtimeMs` of the file when it was read.
    """

    content: str
    line_count: int
    total_lines: int
    truncated_by_bytes: bool
    mtime_ms: float


def node_mtime_ms(st: os.stat_result) -> float:
    """Node's `mtimeMs`: `sec * 1000 + nsec / 1e6`, which rounds unlike `ns / 1e6`."""
    sec, nsec = divmod(st.st_mtime_ns, 10**9)
    return sec * 1000 + nsec / 1e6


def read_text(path: str) -> tuple[str, float]:
    """Whole file as Node's `readFile(path, 'utf8')` decodes it, plus its mtime.

    Raises:
        OSError: the path cannot be read as a file (missing, a directory, no access).
    """
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "illegal operation on a directory", path)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        # Node would block on a pipe forever; a run must not, so the file counts as unreadable.
        raise OSError(6, "not a regular file", path)
    with open(path, "rb") as fh:
        data = fh.read()
    return data.decode("utf-8", "replace"), node_mtime_ms(st)


def split_range(
    raw: str, max_lines: int | None = None, max_bytes: int | None = None
) -> tuple[list[str], int, bool]:
    """Kept lines, total line count and whether the byte cap refused a line."""
    text = raw[1:] if raw.startswith("\ufeff") else raw
    kept: list[str] = []
    kept_bytes = 0
    by_bytes = False
    pieces = text.split("\n")
    for index, piece in enumerate(pieces):
        if max_lines is not None and index >= max_lines:
            break
        if by_bytes:
            break
        line = piece[:-1] if piece.endswith("\r") else piece
        if max_bytes is not None:
            nxt = kept_bytes + (1 if kept else 0) + utf8_len(line)
            if nxt > max_bytes:
                by_bytes = True
                break
            kept_bytes = nxt
        kept.append(line)
    return kept, len(pieces), by_bytes


def read_file_in_range(
    path: str, max_lines: int | None = None, max_bytes: int | None = None
) -> RangeRead:
    """Read the first `max_lines` lines, whole lines only within `max_bytes` UTF-8 bytes."""
    raw, mtime_ms = read_text(path)
    kept, total, by_bytes = split_range(raw, max_lines, max_bytes)
    return RangeRead("\n".join(kept), len(kept), total, by_bytes, mtime_ms)
