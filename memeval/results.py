"""The run folder's source of truth: `results.jsonl`, written so nothing is ever lost.

Rows are appended a whole session unit at a time (all turns of one scenario ×
selector × repeat in one `write` followed by `fsync`), and every row carries the size
of its unit. A run killed at any point leaves at most one unit short of rows (or one
torn line); on resume that unit is cut from the file and recomputed, so the final file
holds each row exactly once. A lock file makes a second run on the same folder refuse
to start instead of interleaving rows with the first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from memeval.errors import MemevalError

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
REPORT_FILE = "index.html"
LOCK_FILE = ".memeval.lock"
INCOMPLETE_MARKER = "RUN_INCOMPLETE"


class RunFolderBusy(MemevalError):
    """Another memeval process is writing the same run folder."""


def unit_key(row: Mapping[str, Any]) -> tuple[str, str, int]:
    """The session a row belongs to: (scenario, selector, repeat)."""
    return (str(row["scenario"]), str(row["selector"]), int(row.get("repeat", 0)))


def read_results(path: Path) -> list[dict[str, Any]]:
    """Every complete row of a `results.jsonl`; a torn last line (a killed run) is dropped."""
    if not path.exists():
        return []
    rows: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                break  # the write of a killed run; the unit it belonged to reruns
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                raise MemevalError(
                    f"{path}:{number}: not a JSON row ({exc.msg}); the file was edited "
                    "by hand or by another tool. Move it away to start the run afresh."
                ) from exc
    return rows


def atomic_write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: readers never see half a summary or report."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


class ResultsWriter:
    """Appends session units to `results.jsonl` under an exclusive lock on the folder.

    Use as a context manager. On entry it cuts a torn last line left by a killed run
    and reports which units are already complete, so the caller can skip them.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RESULTS_FILE
        self._lock = FileLock(str(run_dir / LOCK_FILE))
        self._handle: Any = None
        self._units: set[tuple[str, str, int]] = set()
        self.row_count = 0  # complete rows in the file, kept up to date as units append

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
        self._handle = self.path.open("ab")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._handle is not None:
            self._handle.close()
        self._lock.release()

    def mark_complete(self) -> None:
        """Called once summary and report are written: the folder is a finished run."""
        (self.run_dir / INCOMPLETE_MARKER).unlink(missing_ok=True)

    def completed_units(self) -> set[tuple[str, str, int]]:
        return set(self._units)

    def append_unit(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append all rows of one session unit in a single durable write."""
        rows = list(rows)
        payload = b"".join(
            json.dumps({**row, "unit_size": len(rows)}, sort_keys=True, default=str,
                       ensure_ascii=False).encode() + b"\n"
            for row in rows
        )
        if not payload:
            return
        self._handle.write(payload)
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._units.add(unit_key(rows[0]))
        self.row_count += len(rows)

    def _drop_incomplete_units(self) -> None:
        """Read the file once: cut what a killed run left unfinished, note what is done."""
        if not self.path.exists():
            return
        size = self.path.stat().st_size
        with self.path.open("rb") as handle:
            handle.seek(max(size - 1, 0))
            torn = size > 0 and handle.read(1) != b"\n"
        rows = read_results(self.path)
        kept = complete_rows(rows)
        self._units = {unit_key(row) for row in kept}
        self.row_count = len(kept)
        if torn or len(kept) != len(rows):
            atomic_write_text(self.path, "".join(
                json.dumps(row, sort_keys=True, default=str, ensure_ascii=False) + "\n"
                for row in kept
            ))


def complete_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose session unit was written in full (a killed run may leave one short)."""
    counts: dict[tuple[str, str, int], int] = {}
    for row in rows:
        counts[unit_key(row)] = counts.get(unit_key(row), 0) + 1
    return [row for row in rows if counts[unit_key(row)] == row.get("unit_size", 0)]


def iter_rows(run_dir: Path) -> Iterator[dict[str, Any]]:
    yield from read_results(run_dir / RESULTS_FILE)
