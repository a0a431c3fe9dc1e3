"""What a run folder's attempts have spent, kept beside its rows so `--max-cost` holds
across a kill and a resume.

The budget writes one line before each call it admits (the call's worst case,
reserved) and one after it (the reservation released, the real cost added). A run
that opens the folder again starts from the sum: real costs, plus the worst case of
every call that was in flight when an attempt died (it may have been billed). One
`os.write` per line on an append-only file, so a `kill -9` loses no finished line;
a torn last line (power loss) is skipped.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

SPEND_FILE = "spend.jsonl"


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value < 0:
        return 0.0
    return float(value)


def spent_before(path: Path) -> float:
    """USD the earlier attempts recorded in `path` spent (in-flight calls at their worst
    case); 0 when there is no such file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0.0
    total = 0.0
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line torn by a crash
        if isinstance(entry, dict):
            total += (_number(entry.get("reserve")) + _number(entry.get("cost"))
                      - _number(entry.get("release")))
    return max(total, 0.0)


class SpendLedger:
    """The run folder's spend file: read once when opened, appended to per call.

    Args:
        path: the file (`<run folder>/spend.jsonl`); its folder must exist by the
            first call.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.earlier = spent_before(path)
        self._fd: int | None = None
        self._lock = threading.Lock()

    def reserve(self, estimate: float) -> None:
        self._write({"reserve": estimate})

    def settle(self, estimate: float, actual: float) -> None:
        self._write({"release": estimate, "cost": actual})

    def _write(self, entry: dict[str, float]) -> None:
        line = (json.dumps(entry) + "\n").encode()
        with self._lock:
            if self._fd is None:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # never a link
                self._fd = os.open(self.path, flags, 0o644)
            os.write(self._fd, line)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
