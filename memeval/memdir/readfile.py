"""Reading a line range the way Claude Code's `readFileInRange` does (fast path).

One reader for the scan (first 30 lines) and for surfacing (200 lines, 4096 bytes),
so BOM, CRLF and line counting follow the same rules in both.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

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


def stat_readable(path: str) -> os.stat_result:
    """`stat` of a file that can be read as Node would; folders, pipes, sockets and
    devices raise OSError."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "illegal operation on a directory", path)
    if not stat.S_ISREG(st.st_mode):
        # Node would block on a pipe, or on a terminal with nothing typed, forever; a run
        # must not, so anything but a regular file counts as unreadable.
        raise OSError(6, "not a regular file", path)
    return st


def read_text(path: str) -> tuple[str, float]:
    """Whole file as Node's `readFile(path, 'utf8')` decodes it, plus its mtime.

    Raises:
        OSError: the path cannot be read as a file (missing, a directory, no access).
    """
    st = stat_readable(path)
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


CHUNK_SIZE = 1 << 16


def first_lines(text: str, max_lines: int) -> str:
    """`read_file_in_range(...).content` for `text`, the whole file or a prefix of it
    holding at least `max_lines` line breaks: BOM dropped, one `\\r` before each
    line's end dropped, at most `max_lines` lines."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n", max_lines)
    if len(lines) > max_lines:
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return "\n".join(lines)


def read_file_in_range(
    path: str, max_lines: int | None = None, max_bytes: int | None = None
) -> RangeRead:
    """Read the first `max_lines` lines, whole lines only within `max_bytes` UTF-8 bytes.

    Reading stops as soon as the caps decide the result, so a 200 MB file costs no
    more than its first lines. `total_lines` is then a lower bound that still tells
    whether the file has more than `max_lines` lines, which is all callers ask of it.

    Raises:
        OSError: the path cannot be read as a file (missing, a directory, a pipe).
    """
    st = stat_readable(path)
    with open(path, "rb") as fh:
        return read_open_range(fh, st, max_lines, max_bytes)


def read_open_range(
    fh: BinaryIO, st: os.stat_result, max_lines: int | None = None,
    max_bytes: int | None = None,
) -> RangeRead:
    """`read_file_in_range` on a file already open at its start, with its `stat`
    (the scan has both at hand, and a second open and stat per file cost as much as
    the reading)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    kept: list[str] = []
    kept_bytes = 0
    lines_seen = 0
    by_bytes = False
    pending: list[str] = []  # pieces of the line not yet ended by `\n`
    pending_bytes = 0
    at_start = True

    def take(line: str) -> bool:
        """Keep one line if the caps allow; False once reading can stop."""
        nonlocal kept_bytes, by_bytes
        if line.endswith("\r"):
            line = line[:-1]
        if max_bytes is not None:
            nxt = kept_bytes + (1 if kept else 0) + utf8_len(line)
            if nxt > max_bytes:
                by_bytes = True
                return False
            kept_bytes = nxt
        kept.append(line)
        return max_lines is None or len(kept) < max_lines

    while True:
        chunk = fh.read(CHUNK_SIZE)
        text = decoder.decode(chunk, final=not chunk)
        if at_start and text:
            at_start = False
            text = text.removeprefix("\ufeff")
        if "\n" in text:
            first, *rest = text.split("\n")
            complete = ["".join([*pending, first]), *rest[:-1]]
            pending, pending_bytes = [rest[-1]], utf8_len(rest[-1])
            for line in complete:
                lines_seen += 1
                if not take(line):
                    # The caps are settled; there is at least one more line.
                    mtime = node_mtime_ms(st)
                    return RangeRead(
                        "\n".join(kept), len(kept), lines_seen + 1, by_bytes, mtime
                    )
        elif text:
            pending.append(text)
            pending_bytes += utf8_len(text)
        sep = 1 if kept else 0
        if max_bytes is not None and kept_bytes + sep + pending_bytes - 1 > max_bytes:
            # The unfinished line cannot fit however it ends (less a final `\r`).
            return RangeRead(
                "\n".join(kept), len(kept), lines_seen + 1, True, node_mtime_ms(st)
            )
        if not chunk:
            break
    lines_seen += 1
    if max_lines is None or len(kept) < max_lines:
        take("".join(pending))
    return RangeRead("\n".join(kept), len(kept), lines_seen, by_bytes, node_mtime_ms(st))
