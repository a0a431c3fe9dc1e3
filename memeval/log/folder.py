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

import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from memeval.errors import MemevalError
from memeval.jsonenc import decode_line, dump_line, dump_pretty
from memeval.log.row import (
    HASH_LEN,
    READABLE_VERSIONS,
    PayloadStore,
    Resolver,
    SchemaMismatch,
    TurnResult,
)

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
REPORT_FILE = "index.html"
LOCK_FILE = ".memeval.lock"
PAYLOADS_FILE = "payloads.jsonl"
INCOMPLETE_MARKER = "RUN_INCOMPLETE"


class RunFolderBusy(MemevalError):
    """Another memeval process is writing the same run folder."""


def _lines_with_sizes(path: Path) -> Iterator[tuple[int, dict[str, Any], int]]:
    """(line number, object, length in bytes) of every complete line; a torn last
    line is dropped."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return  # the write of a killed run; the unit it belonged to reruns
            try:
                yield number, decode_line(raw), len(raw)
            except json.JSONDecodeError as exc:
                raise MemevalError(
                    f"{path}:{number}: not a JSON line ({exc.msg}); the file was edited "
                    "by hand or by another tool. Move it away to start the run afresh."
                ) from exc


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every complete line; a torn last line is dropped."""
    for number, value, _ in _lines_with_sizes(path):
        yield number, value


def read_payloads(run_dir: Path) -> dict[str, Any]:
    """The folder's content-addressed payloads (see `memeval.log.row`), all in memory."""
    return {entry["h"]: entry["v"] for _, entry in _lines(run_dir / PAYLOADS_FILE)}


# Payload lines are written with sorted keys, so "h" comes first: compact since orjson
# wrote them (2026-12), with json's spaces before.
_LAYOUTS = (b'{"h":"', b'{"h": "')
_READ_AHEAD = 4096  # bytes a payload read asks for first; a longer line is read buffered
_pread = getattr(os, "pread", None)  # not on Windows
EAGER_BYTES = 4 * 2**20  # a payload file this small is decoded whole when opened


def _digest_of(raw: bytes) -> str:
    """The hash a payload line is stored under, read off its start when the line has
    a writer's layout, else parsed."""
    for layout in _LAYOUTS:
        start = len(layout)
        if raw.startswith(layout) and raw[start + HASH_LEN:start + HASH_LEN + 1] == b'"':
            return raw[start:start + HASH_LEN].decode("ascii", "replace")
    return str(json.loads(raw)["h"])


# The hash at the start of every line, in either writer's layout (a raw newline is
# never inside a JSON line, so each match after one is a line's start); a literal
# prefix: found at memchr speed.
_LINE_HASHES = re.compile(rb'\n\{"h": ?"([0-9a-f]{%d})"' % HASH_LEN)


def _decode_whole(data: bytes) -> dict[str, Any] | None:
    """hash -> value of a payload file a writer wrote (a resumed old folder mixes
    both layouts), in one decode; None when any line is unlike them (each line is then
    read, and fails, alone when asked for). The entries of the joined lines must be
    the lines, one each, each under the hash its line starts with: lines that parse
    only when joined fail that (a torn last line is left out; the first copy of a
    hash wins)."""
    body = data[:data.rfind(b"\n") + 1]
    hashes = _LINE_HASHES.findall(b"\n" + body)
    if len(hashes) != body.count(b"\n"):  # a line without the layout
        return None
    try:
        entries = decode_line(b"[" + body[:-1].replace(b"\n", b",") + b"]")
        if len(entries) != len(hashes) or [e["h"] for e in entries] != [
                h.decode("ascii") for h in hashes]:
            return None
        values: dict[str, Any] = {}
        for entry in entries:
            values.setdefault(entry["h"], entry["v"])
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return values


class PayloadFile(Mapping[str, Any]):
    """`payloads.jsonl` read lazily: an index of where each hash's line starts, and
    the line parsed only when asked for (`Resolver` keeps what is asked for often).

    Memory is a few dozen bytes per distinct payload however large their values; a
    file of at most `EAGER_BYTES` is decoded whole instead, in one call (a few MB of
    values: half the time of decoding its lines one by one).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets: dict[str, int] = {}
        self._values: dict[str, Any] = {}
        self._keys: Mapping[str, Any] = self._offsets  # every hash the file holds
        self._handle: Any = None
        if not path.exists():
            return
        offset = 0
        with path.open("rb") as handle:
            if os.fstat(handle.fileno()).st_size <= EAGER_BYTES:
                whole = _decode_whole(handle.read())
                if whole is not None:
                    self._values = self._keys = whole
                    return
                handle.seek(0)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # torn by a killed run: no row points at it
                digest = _digest_of(raw)
                if digest not in self._offsets:
                    self._offsets[digest] = offset
                offset += len(raw)

    def __getitem__(self, digest: str) -> Any:
        values = self._values
        if digest in values:
            return values[digest]
        offset = self._offsets[digest]
        if self._handle is None:
            self._handle = self.path.open("rb")
        # Most payloads are a line of a few hundred bytes: one positioned read, not a
        # seek that empties the buffer and a readline that refills it. A longer line
        # (or a system without pread) is read the buffered way.
        if _pread is not None:
            chunk = _pread(self._handle.fileno(), _READ_AHEAD, offset)
            end = chunk.find(b"\n")
            if end >= 0:
                return decode_line(chunk[:end + 1])["v"]
        self._handle.seek(offset)
        return decode_line(self._handle.readline())["v"]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, digest: object) -> bool:
        return digest in self._keys

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _folder(path: Path) -> Path:
    path = Path(path)
    return path.parent if path.name == RESULTS_FILE else path


def iter_results(run_dir: Path, *, searches: bool = True) -> Iterator[TurnResult]:
    """Every complete row of a run folder (or of its `results.jsonl`), typed, one at a
    time: payloads are read lazily and shared, so a reader that keeps only what it
    needs of each row runs in memory that does not grow with the file. A reader that
    never looks at a turn's memdir searches (manifests, candidates) passes
    `searches=False` and skips reading them back."""
    run_dir = _folder(run_dir)
    payloads = PayloadFile(run_dir / PAYLOADS_FILE)
    resolver = Resolver(payloads)
    try:
        for number, row in _lines(run_dir / RESULTS_FILE):
            try:
                result = TurnResult.from_dict(row, resolver, searches=searches)
            except SchemaMismatch as exc:
                raise MemevalError(f"{run_dir / RESULTS_FILE}:{number}: {exc}") from None
            except (KeyError, TypeError, ValueError) as exc:
                raise MemevalError(f"{run_dir / RESULTS_FILE}:{number}: not a results row "
                                   f"({type(exc).__name__}: {exc})") from exc
            yield result
    finally:
        payloads.close()


class UnitReader:
    """A run folder's rows by unit, without holding them: one pass notes where each
    unit's lines start in `results.jsonl` (and which turns it holds), and `rows(key)`
    reads one unit back, typed (a unit's rows are written together, so they sit side
    by side)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = _folder(run_dir)
        self.path = self.run_dir / RESULTS_FILE
        self.units: dict[tuple[str, str, int, int], list[int]] = {}
        self.turns: dict[tuple[str, str, int, int], tuple[str, str, int, int]] = {}
        offset = 0
        for _, row, size in _lines_with_sizes(self.path):
            self.units.setdefault(unit_key(row), []).append(offset)
            self.turns[turn_key(row)] = unit_key(row)
            offset += size
        self._payloads = PayloadFile(self.run_dir / PAYLOADS_FILE)
        self._resolver = Resolver(self._payloads)

    def rows(self, key: tuple[str, str, int, int]) -> list[TurnResult]:
        out = []
        with self.path.open("rb") as handle:
            for offset in self.units[key]:
                handle.seek(offset)
                row = decode_line(handle.readline())
                try:
                    out.append(TurnResult.from_dict(row, self._resolver))
                except SchemaMismatch as exc:
                    raise MemevalError(f"{self.path}: {exc}") from None
        return out

    def close(self) -> None:
        self._payloads.close()


def count_rows(run_dir: Path) -> int:
    """Complete rows of a run folder, checked to be rows of a readable format."""
    run_dir = _folder(run_dir)
    count = 0
    for number, row in _lines(run_dir / RESULTS_FILE):
        if row.get("v") not in READABLE_VERSIONS:
            raise MemevalError(f"{run_dir / RESULTS_FILE}:{number}: {SchemaMismatch(row.get('v'))}")
        count += 1
    return count


def read_results(run_dir: Path) -> list[TurnResult]:
    """Every complete row of a run folder (or of its `results.jsonl`), typed.

    Rows that repeat a payload share one object for it: treat records as read-only.
    Prefer `iter_results` for a reader that does not need every row at once.
    """
    return list(iter_results(run_dir))


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
        self._turns: set[tuple[str, str, int, int]] = set()
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

    def completed_turns(self) -> set[tuple[str, str, int, int]]:
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
        counts: dict[tuple[str, str, int, int], int] = {}
        sizes: dict[tuple[str, str, int, int], set[int]] = {}
        errored: set[tuple[str, str, int, int]] = set()
        turns: dict[tuple[str, str, int, int], list[tuple[str, str, int, int]]] = {}
        total = 0
        for _, row in _lines(self.path):
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
                    for _, row in _lines(self.path):
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


def row_errored(row: Mapping[str, Any]) -> bool:
    """Did the selector or a judge fail on this stored row (an API error, junk output)?"""
    return bool(row.get("selector_error")) or any(
        isinstance(j, Mapping) and j.get("error") for j in row.get("judgements") or ())


def unit_key(row: Mapping[str, Any]) -> tuple[str, str, int, int]:
    """The unit a stored row was written in: (scenario, selector, repeat, first turn).
    Rows of memeval before turn units have no first turn: theirs was a whole session."""
    return (str(row["scenario"]), str(row["selector"]), int(row.get("repeat", 0)),
            int(row.get("unit_start", 0)))


def turn_key(row: Mapping[str, Any]) -> tuple[str, str, int, int]:
    """(scenario, selector, repeat, turn index) of a stored row."""
    return (str(row["scenario"]), str(row["selector"]), int(row.get("repeat", 0)),
            int(row.get("turn_index", 0)))


def complete_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose session unit was written in full (a killed run may leave one short)."""
    counts: dict[tuple[str, str, int, int], int] = {}
    for row in rows:
        counts[unit_key(row)] = counts.get(unit_key(row), 0) + 1
    return [row for row in rows if counts[unit_key(row)] == row.get("unit_size", 0)]
