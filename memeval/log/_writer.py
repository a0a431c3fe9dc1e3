"""The run folder's source of truth: `results.jsonl`, written so nothing is ever lost.

Rows are appended a whole unit at a time (all its turns in one `write`; a unit is a
turn, or a stretch of a session's turns, see `memeval.run.evaluate`), fsynced at once or
with the units that finish within `sync_every` seconds, and every row carries its
unit's first turn and size. A run killed at any point leaves at most one unit short
of rows (or one torn line); on resume that unit is cut from the file and recomputed,
so the final file holds each row exactly once. A lock file makes a second run on the
same folder refuse to start instead of interleaving rows with the first; it is never
unlinked, since a process that opened the old file could otherwise lock it while a
newer one locks a new file of the same name.

Every append is whole lines or nothing: a write that fails part-way (a disk that
fills up for a moment) is cut back to where it started, so the next write never
joins a torn line. Whole-file writes and the folder itself are fsynced, so a power
loss leaves the old file or the new one, never an empty one. Nothing is written
through a link: a run folder holds only its own files.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from memeval.errors import MemevalError
from memeval.jsonenc import decode_line, dump_line, dump_pretty
from memeval.log._files import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    LOCK_FILE,
    PAYLOADS_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    RUN_FILES,
    SUMMARY_FILE,
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


class RunFolderForeign(MemevalError):
    """An existing folder that holds something other than a memeval run."""


class RunFolderLinked(MemevalError):
    """A file of the run folder is a link, which a run would write through."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: readers never see half a summary or report."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`atomic_write_text` for bytes: the new file is fsynced before it replaces the
    old one and the folder after, so even a power loss leaves one of the two whole.
    A link at `path` is replaced, never written through."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
        try:
            append_whole(fd, tmp, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        sync_folder(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def sync_folder(folder: Path) -> None:
    """fsync a folder, so the names created, replaced or removed in it last."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_whole(fd: int, path: Path, data: bytes) -> None:
    """Write all of `data` at the end of `fd` and fsync it, or nothing: a write that
    fails part-way is cut back to where it began, so the file still ends on a whole
    line. The error names `path`, the file it concerns."""
    start = os.fstat(fd).st_size
    view = memoryview(data)  # os.write may take part of it: go on from where it stopped
    try:
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):  # the error below still names the file
            os.ftruncate(fd, start)  # shrinking needs no space
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def open_append(path: Path) -> int:
    """A descriptor appending to `path` (created if missing), never through a link."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                   | os.O_CLOEXEC, 0o644)


def refuse_foreign(run_dir: Path) -> None:
    """Stop before writing into a folder that holds files but no memeval run: the run
    would replace its `index.html`, `config.json` and `summary.json`."""
    try:
        names = sorted(entry.name for entry in os.scandir(run_dir) if entry.name != LOCK_FILE)
    except OSError:  # missing, not a folder, unreadable: the caller's checks say which
        return
    if not names or is_run_folder(run_dir):
        return
    shown = ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
    raise RunFolderForeign(
        f"{run_dir}: holds files that are not a memeval run ({shown}); a run would replace "
        f"its {REPORT_FILE}, {CONFIG_FILE} and {SUMMARY_FILE}. Pick a new or empty folder "
        "for --out.")


def is_run_folder(run_dir: Path) -> bool:
    """Was the folder written by memeval: rows, the unfinished marker, or a
    `config.json` with a run's fingerprint?"""
    if (run_dir / RESULTS_FILE).is_file() or (run_dir / INCOMPLETE_MARKER).is_file():
        return True
    try:
        config = decode_line((run_dir / CONFIG_FILE).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and "fingerprint" in config


def refuse_links(run_dir: Path) -> None:
    """Stop before writing when one of the run's files is a link: appending to it, or
    writing its marker, would change a file outside the folder."""
    for name in RUN_FILES:
        path = run_dir / name
        if path.is_symlink():
            raise RunFolderLinked(
                f"{path}: a link (to {os.readlink(path)}); memeval writes only its own files "
                "in a run folder, never through a link. Remove the link, or pick another "
                "--out.")


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

    Args:
        run_dir: the run folder.
        retry_errors: cut finished units that have an error, so they run again.
        sync_every: seconds rows may wait in memory before a durable write.
        fresh: delete the folder's run files once the lock is held (a new run).
        reusable: which stored turns may be kept; a unit with any other turn (of a
            scenario edited since, or no longer planned) is cut on entry.
    """

    def __init__(self, run_dir: Path, *, retry_errors: bool = False,
                 sync_every: float = 0.0, fresh: bool = False,
                 reusable: Callable[[TurnKey], bool] | None = None) -> None:
        self.run_dir = run_dir
        self.fresh = fresh  # replace the folder's run (the pytest plugin's way)
        # Which stored turns may be kept (planned, their scenario unchanged); the rest
        # are cut on entry. None keeps every turn.
        self.reusable = reusable
        self.retry_errors = retry_errors
        self.sync_every = sync_every
        self.retried = 0  # finished units cut on entry because they had errors
        self.path = run_dir / RESULTS_FILE
        self._lock = FileLock(str(run_dir / LOCK_FILE))
        self._fd: int | None = None
        self._payload_fd: int | None = None
        self._payloads = PayloadStore()
        self._turns: set[TurnKey] = set()
        self._waiting: list[bytes] = []
        self._waiting_payloads: list[bytes] = []
        self._synced = time.monotonic()
        self.row_count = 0  # complete rows, on disk or about to be, as units append
        self.units_written = 0  # units appended by this writer

    def __enter__(self) -> ResultsWriter:
        self._take_lock()
        try:
            if self.fresh:  # only now that the folder is ours: a live run's files stay
                for name in (RESULTS_FILE, PAYLOADS_FILE, SUMMARY_FILE, CONFIG_FILE,
                             REPORT_FILE):
                    (self.run_dir / name).unlink(missing_ok=True)
            self._drop_incomplete_units()
            atomic_write_text(self.run_dir / INCOMPLETE_MARKER,
                              "This run has not finished; rerun the same command to "
                              "resume it.\n")
            _cut_torn_line(self.run_dir / PAYLOADS_FILE)  # else the next payload joins it
            self._payloads = PayloadStore(PayloadFile(self.run_dir / PAYLOADS_FILE))
            self._payload_fd = open_append(self.run_dir / PAYLOADS_FILE)
            self._fd = open_append(self.path)
            sync_folder(self.run_dir)  # the files just made outlive a power loss
        except BaseException:
            self._close()
            raise
        return self

    def _take_lock(self) -> None:
        """Take the folder's lock (refusing a folder another process holds, or one with
        a link among the run's files), before anything in it is read or changed."""
        refuse_foreign(self.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        refuse_links(self.run_dir)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise RunFolderBusy(
                f"{self.run_dir}: another memeval run is writing this folder; wait for it "
                "to finish or pass a different --out."
            ) from None

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._fd is not None:
                self.flush()
        finally:
            self._close()

    def _close(self) -> None:
        for fd in (self._fd, self._payload_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._payload_fd = None
        # The lock file stays: unlinking it would let a process that opened the old
        # file and one that creates a new one both hold "the" lock.
        self._lock.release()

    def mark_complete(self) -> None:
        """Called once summary and report are written: the folder is a finished run."""
        (self.run_dir / INCOMPLETE_MARKER).unlink(missing_ok=True)
        sync_folder(self.run_dir)

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
        points at a payload that is not. A write that fails leaves both files on whole
        lines, the rows still waiting (a later flush writes them)."""
        for fd, path, waiting in (
                (self._payload_fd, self.run_dir / PAYLOADS_FILE, self._waiting_payloads),
                (self._fd, self.path, self._waiting)):
            if waiting and fd is not None:
                append_whole(fd, path, b"".join(waiting))
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
        if self.reusable is not None:
            done = {key for key in done if all(map(self.reusable, turns[key]))}
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
                sync_folder(self.run_dir)
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
