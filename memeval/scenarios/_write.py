"""Writing scenarios and memdirs: the one place files, mtimes and YAML scalars are made.

`materialize` (a scenario into a memory base), `generate` (synthetic scenarios) and
the importers all write memory files with exact mtimes and scenario YAML with
quoted strings and millisecond timestamps; they share these helpers so the three
cannot drift apart.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def mtime_ns(mtime_ms: float) -> int:
    """Nanoseconds for `os.utime`, exact for any mtime a scenario can state.

    `mtime_ms * 1e6` would exceed float precision (2**53) for present-day times, so
    the whole milliseconds and the fraction are converted apart.
    """
    whole = int(mtime_ms // 1)
    return whole * 1_000_000 + round((mtime_ms - whole) * 1_000_000)


def to_ms(instant: datetime) -> int:
    """Epoch milliseconds of an aware datetime."""
    return (instant - EPOCH) // timedelta(milliseconds=1)


def iso_ms(ms: float) -> str:
    """A UTC timestamp with milliseconds, as scenario YAML writes `now` and mtimes."""
    instant = EPOCH + timedelta(milliseconds=int(ms))
    return f"{instant:%Y-%m-%dT%H:%M:%S}.{int(ms) % 1000:03d}Z"


def yaml_str(text: str) -> str:
    """A YAML double-quoted scalar (a JSON string is valid YAML 1.2)."""
    return json.dumps(text, ensure_ascii=False)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
_UTIME_FD = os.utime in os.supports_fd


def write_file(path: Path, data: bytes, mtime_ms: float) -> None:
    """Write `data` to `path` (folders made) and set its mtime exactly.

    Through the descriptor, unbuffered: a world writes dozens of small files per
    session, and a buffered file object plus a second path lookup for the mtime
    cost a third more than the write itself.
    """
    view = memoryview(data)  # not bytes: refused before the file is touched
    try:
        fd = os.open(path, _CREATE, 0o666)
    except FileNotFoundError:  # its folder is new (most files share one that exists)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, _CREATE, 0o666)
    ns = mtime_ns(mtime_ms)
    try:
        while view:
            view = view[os.write(fd, view):]
        if _UTIME_FD:
            os.utime(fd, ns=(ns, ns))
    finally:
        os.close(fd)
    if not _UTIME_FD:  # Windows: by path, once no handle holds the file open
        os.utime(path, ns=(ns, ns))


def mtimes_lines(indent: str, entries: list[tuple[str, float]]) -> list[str]:
    """`mtimes:` entries of a memdir block, one `"name": {mtime: ...}` line each."""
    return [f"{indent}{name if name == 'MEMORY.md' else yaml_str(name)}: "
            f"{{mtime: {iso_ms(ms)}}}" for name, ms in entries]
