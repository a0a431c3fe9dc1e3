"""The run folder's source of truth: `results.jsonl`, written so nothing is ever lost.

Rows are appended a whole unit at a time (all its turns in one `write`; a unit is a
turn, or a stretch of a session's turns, see `memeval.run.evaluate`), fsynced at once or
with the units that finish within `sync_every` seconds, and every row carries its
unit's first turn and size. A run killed at any point leaves at most one unit short
of rows (or one torn line); on resume that unit is cut from the file and recomputed,
so the final file holds each row exactly once. A lock file makes a second run on the
same folder refuse to start instead of interleaving rows with the first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from memeval.errors import MemevalError
from memeval.jsonenc import dump_line, dump_pretty
from memeval.log._files import (
    INCOMPLETE_MARKER,
    LOCK_FILE,
    PAYLOADS_FILE,
    RESULTS_FILE,
    TurnKey,
    UnitKey,
    lines,
    row_errored,
    turn_key,
    unit_key,
)
from memeval.log._payloads import PayloadStore
from memeval.log._reader import PayloadFile
from memeval.log._row import TurnResult


class RunFolderBusy(MemevalError):
    """Another memeval process is writing the same run folder."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: readers never see half a summary or report."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`atomic_write_text` for bytes."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: Path, data: Any) -> None:
    """`data` as indented JSON, whole or not at all (non-finite numbers as null)."""
    atomic_write_bytes(path, dump_pretty(data))


class ResultsWriter:
    """Appends session units to `results.jsonl` under an exclusive lock on the folder.

    Use as a context manager. On entry it cuts a torn last line left by a killed run
    and reports which units are already complete, so the caller can skip them. A
    unit's new payloads are made durable before its rows, so no row ever points at a
    payload that is not on disk. With `retry_errors`, a finished unit that has a
    selector or judge error counts as not done: its rows are cut and it runs again.
    """

    def __init__(self, run_dir: Path, *, retry_errors: bool = False,
                 sync_every: float = 0.0) -> None:
        self.run_dir = run_dir
        self.retry_errors = retry_errors
        self.sync_every = sync_every  # seconds rows may wait in memory before a durable write
        self.retried = 0  # finished units cut on entry because they had errors
        self.path = run_dir / RESULTS_FILE
        self._lock = FileLock(str(run_dir / LOCK_FILE))
        self._handle: Any = None
        self._payload_handle: Any = None
        self._payloads = PayloadStore()
        self._turns: set[TurnKey] = set()
        self._waiting: list[bytes] = []
        self._waiting_payloads: list[bytes] = []
        self._synced = time.monotonic()
        self.row_count = 0  # complete rows, on disk or about to be, as units append
        self.units_written = 0  # units appended by this writer

    def __enter__(self) -> ResultsWriter:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise RunFolderBusy(
                f"{self.run_dir}: another memeval run is writing this folder; wait for it "
                "to finish or pass a different --out."
            ) from None
        self._drop_incomplete_units()
        (self.run_dir / INCOMPLETE_MARKER).write_text(
            "This run has not finished; rerun the same command to resume it.\n"
        )
        _cut_torn_line(self.run_dir / PAYLOADS_FILE)  # else the next payload joins it
        self._payloads = PayloadStore(PayloadFile(self.run_dir / PAYLOADS_FILE))
        self._payload_handle = (self.run_dir / PAYLOADS_FILE).open("ab")
        self._handle = self.path.open("ab")
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._handle is not None:
                self.flush()
        finally:
            for handle in (self._handle, self._payload_handle):
                if handle is not None:
                    handle.close()
            self._lock.release()
            Path(self._lock.lock_file).unlink(missing_ok=True)  # leave no litter

    def mark_complete(self) -> None:
        """Called once summary and report are written: the folder is a finished run."""
        (self.run_dir / INCOMPLETE_MARKER).unlink(missing_ok=True)

    def completed_turns(self) -> set[TurnKey]:
        """(scenario, selector, repeat, turn index) of every turn whose unit is on disk
        in full: what a resume skips, whatever units the rows were written in."""
        return set(self._turns)

    def append_unit(self, results: Sequence[TurnResult]) -> list[TurnResult]:
        """Append all rows of one unit together: they reach the disk in one write, and
        are fsynced at once or, with `sync_every`, with the next units within that many
        seconds (a killed run loses at most those; their answers are in the cache).
        Returns the rows appended: those of turns not already on disk."""
        # A turn already on disk is never written twice (a unit planned over turns an
        # earlier run wrote in other units, as after an edit that moved a compaction).
        results = [r for r in results if r.turn_key not in self._turns]
        if not results:
            return results
        start = results[0].turn_index
        rows = [{**r.to_dict(self._payloads), "unit_size": len(results), "unit_start": start}
                for r in results]
        self._waiting_payloads += [dump_line({"h": h, "v": v})
                                   for h, v in self._payloads.pending().items()]
        self._waiting.append(b"".join(dump_line(row) for row in rows))
        self._turns.update(r.turn_key for r in results)
        self.row_count += len(rows)
        self.units_written += 1
        if time.monotonic() - self._synced >= self.sync_every:
            self.flush()
        return results

    def flush(self) -> None:
        """Make every appended row durable: new payloads first, so no row on disk
        points at a payload that is not."""
        for handle, waiting in ((self._payload_handle, self._waiting_payloads),
                                (self._handle, self._waiting)):
            if waiting:
                handle.write(b"".join(waiting))
                handle.flush()
                os.fsync(handle.fileno())
                waiting.clear()
        self._synced = time.monotonic()

    def _drop_incomplete_units(self) -> None:
        """Cut what a killed run left unfinished and note what is done, holding only
        each row's unit (not the rows) in memory."""
        if not self.path.exists():
            return
        size = self.path.stat().st_size
        with self.path.open("rb") as handle:
            handle.seek(max(size - 1, 0))
            torn = size > 0 and handle.read(1) != b"\n"
        counts: dict[UnitKey, int] = {}
        sizes: dict[UnitKey, set[int]] = {}
        errored: set[UnitKey] = set()
        turns: dict[UnitKey, list[TurnKey]] = {}
        total = 0
        for _, row in lines(self.path):
            key = unit_key(row)
            turns.setdefault(key, []).append(turn_key(row))
            counts[key] = counts.get(key, 0) + 1
            sizes.setdefault(key, set()).add(int(row.get("unit_size", 0) or 0))
            if self.retry_errors and row_errored(row):
                errored.add(key)
            total += 1
        done = {k for k, n in counts.items() if sizes[k] == {n}}
        self.retried = len(done & errored)
        done -= errored  # they run again; answers that succeeded come from the cache
        self._turns = {turn for key in done for turn in turns[key]}
        self.row_count = sum(counts[k] for k in done)
        if torn or self.row_count != total:
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                with tmp.open("wb") as out:
                    for _, row in lines(self.path):
                        if unit_key(row) in done:
                            out.write(dump_line(row))
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            finally:
                tmp.unlink(missing_ok=True)


def _cut_torn_line(path: Path) -> None:
    """Drop a last line a killed run left without its newline."""
    if not path.exists():
        return
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if not size:
            return
        keep = size
        while keep:
            step = min(keep, 1 << 16)
            handle.seek(keep - step)
            chunk = handle.read(step)
            if keep == size and chunk.endswith(b"\n"):
                return
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = keep - step + newline + 1
                break
            keep -= step
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
