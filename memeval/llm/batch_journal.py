"""Message Batches in flight, written down before polling so a crash does not pay twice.

A batch is paid when it is created, not when its results are read. A run killed while
polling used to send the same requests again on resume (13 of 13 paid twice). The
journal, a run folder's `batches.jsonl`, gets one line when a batch is created (its id,
endpoint and request keys) and one when its results were read; a later run that needs
any of an open batch's requests polls that batch instead of creating a new one.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

BATCH_FILE = "batches.jsonl"


@dataclass(frozen=True)
class OpenBatch:
    """A batch created by an earlier attempt whose results were never read."""

    batch_id: str
    endpoint: str
    keys: frozenset[str]


class BatchJournal:
    """The journal file; read once when opened, appended to with one write per line.

    Args:
        path: the file (`<run folder>/batches.jsonl`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._open: dict[str, OpenBatch] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
                batch_id = str(entry["batch"])
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a crash
            if entry.get("done"):
                self._open.pop(batch_id, None)
            else:
                self._open[batch_id] = OpenBatch(batch_id, str(entry.get("endpoint") or ""),
                                                 frozenset(entry.get("keys") or ()))

    def open_batches(self, endpoint: str, keys: set[str]) -> list[OpenBatch]:
        """Open batches to `endpoint` holding any of `keys`."""
        with self._lock:
            return [b for b in self._open.values() if b.endpoint == endpoint and b.keys & keys]

    def created(self, batch_id: str, endpoint: str, keys: list[str]) -> None:
        self._write({"batch": batch_id, "endpoint": endpoint, "keys": keys})
        with self._lock:
            self._open[batch_id] = OpenBatch(batch_id, endpoint, frozenset(keys))

    def read(self, batch_id: str) -> None:
        """Its results were read (and answered or cached): never poll it again."""
        self._write({"batch": batch_id, "done": True})
        with self._lock:
            self._open.pop(batch_id, None)

    def _write(self, entry: dict[str, object]) -> None:
        line = (json.dumps(entry) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW,
                               0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
