"""Reading a run folder back: the one door every consumer goes through.

Rows come back typed (`TurnResult`), one at a time, their payloads read lazily and
shared, so a reader that keeps only what it needs of each row runs in memory that
does not grow with the file. `summary.json` and `config.json` come back as dicts,
with errors that name the file and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from memeval.errors import MemevalError
from memeval.jsonenc import decode_line
from memeval.log._files import (
    CONFIG_FILE,
    PAYLOADS_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    TurnKey,
    UnitKey,
    folder_of,
    lines,
    sized_lines,
    turn_key,
    unit_key,
)
from memeval.log._payloads import Resolver
from memeval.log._row import READABLE_VERSIONS, SchemaMismatch, TurnResult


class RunFolderError(MemevalError):
    """A run folder, or a file in it, that cannot be read as what it should be.

    Args:
        message: what is wrong and the fix, naming the file.
        path: the file, when one is to blame; `missing` says it is not there at all.
    """

    def __init__(self, message: str, *, path: Path | None = None, missing: bool = False):
        super().__init__(message)
        self.path = path
        self.missing = missing


class RowSink(Protocol):
    """Something made from a run's rows in one pass that keeps no row (the summary's
    inputs, the report's turn views)."""

    def add(self, result: TurnResult) -> None: ...


class PayloadFile(Mapping[str, Any]):
    """`payloads.jsonl` read lazily: where each hash's line starts, and the line parsed
    again only when asked for (`Resolver` keeps what is asked for often). Memory is a
    few dozen bytes per distinct payload, however large the values."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets: dict[str, int] = {}
        self._handle: BinaryIO | None = None
        offset = 0
        for _, entry, size in sized_lines(path):  # a torn last line: no row points at it
            self._offsets.setdefault(str(entry["h"]), offset)  # the first copy wins
            offset += size

    def __getitem__(self, digest: str) -> Any:
        offset = self._offsets[digest]
        if self._handle is None:
            self._handle = self.path.open("rb")
        self._handle.seek(offset)
        return decode_line(self._handle.readline())["v"]

    def __contains__(self, digest: object) -> bool:
        return digest in self._offsets  # without reading the line

    def __iter__(self) -> Iterator[str]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _typed(row: Mapping[str, Any], resolver: Resolver, where: str, *,
           searches: bool = True) -> TurnResult:
    try:
        return TurnResult.from_dict(row, resolver, searches=searches)
    except SchemaMismatch as exc:
        raise RunFolderError(f"{where}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise RunFolderError(f"{where}: not a results row ({type(exc).__name__}: {exc})") \
            from exc


def iter_results(run_dir: Path | str, *, searches: bool = True) -> Iterator[TurnResult]:
    """Every complete row of a run folder (or of its `results.jsonl`), typed, in file
    order. A reader that never looks at a turn's memdir searches (manifests,
    candidates) passes `searches=False` and skips reading them back."""
    run_dir = folder_of(run_dir)
    payloads = PayloadFile(run_dir / PAYLOADS_FILE)
    resolver = Resolver(payloads)
    try:
        for number, row in lines(run_dir / RESULTS_FILE):
            yield _typed(row, resolver, f"{run_dir / RESULTS_FILE}:{number}", searches=searches)
    finally:
        payloads.close()


def read_results(run_dir: Path | str) -> list[TurnResult]:
    """Every complete row at once (see `iter_results`). Rows that repeat a payload
    share one object for it: treat them as read-only."""
    return list(iter_results(run_dir))


def count_rows(run_dir: Path | str) -> int:
    """Complete rows of a run folder, checked to be rows of a readable format."""
    path = folder_of(run_dir) / RESULTS_FILE
    count = 0
    for number, row in lines(path):
        if row.get("v") not in READABLE_VERSIONS:
            raise RunFolderError(f"{path}:{number}: {SchemaMismatch(row.get('v'))}")
        count += 1
    return count


class UnitReader:
    """A run folder's rows by unit, without holding them: one pass notes where each
    unit's lines start in `results.jsonl` (and which turns it holds), and `rows(key)`
    reads one unit back, typed (a unit's rows are written together, side by side)."""

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = folder_of(run_dir)
        self.path = self.run_dir / RESULTS_FILE
        self.units: dict[UnitKey, list[int]] = {}
        self.turns: dict[TurnKey, UnitKey] = {}
        offset = 0
        for _, row, size in sized_lines(self.path):
            self.units.setdefault(unit_key(row), []).append(offset)
            self.turns[turn_key(row)] = unit_key(row)
            offset += size
        self._payloads = PayloadFile(self.run_dir / PAYLOADS_FILE)
        self._resolver = Resolver(self._payloads)

    def rows(self, key: UnitKey) -> list[TurnResult]:
        with self.path.open("rb") as handle:
            out = []
            for offset in self.units[key]:
                handle.seek(offset)
                out.append(_typed(decode_line(handle.readline()), self._resolver,
                                  str(self.path)))
        return out

    def close(self) -> None:
        self._payloads.close()


def _read_json_object(path: Path, what: str, fix: str) -> dict[str, Any]:
    try:
        data = decode_line(path.read_bytes())
    except FileNotFoundError:
        raise RunFolderError(f"{path}: not found; {fix}", path=path, missing=True) from None
    except (OSError, ValueError) as exc:  # ValueError: JSON or UTF-8 that does not parse
        raise RunFolderError(f"{path}: not readable as JSON ({exc}); {fix}", path=path) \
            from exc
    if not isinstance(data, dict):
        raise RunFolderError(f"{path}: expected a JSON object ({what}); {fix}", path=path)
    return data


def read_summary(path: Path | str) -> dict[str, Any]:
    """`summary.json` of a run folder (or the file itself), as written.

    Raises `RunFolderError` naming the file and the fix when it is missing or broken.
    """
    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_FILE
    return _read_json_object(path, "a memeval summary.json",
                             "pass a run folder written by `memeval run` (or its "
                             "summary.json); `memeval report DIR` rebuilds a summary")


def read_per_turn(path: Path | str) -> list[dict[str, Any]]:
    """The scored turns (`per_turn`) of a run folder's summary (or of a summary.json):
    one record per turn × selector × repeat × judge, undefined numbers as None."""
    rows = read_summary(path).get("per_turn")
    if not isinstance(rows, list) or (rows and "scored" not in rows[0]):
        raise RunFolderError(f"{path}: no per-turn scores of this memeval version; rebuild "
                             "them with `memeval report RUN_DIR`")
    return rows


def read_config(run_dir: Path | str) -> dict[str, Any]:
    """`config.json` of a run folder: the configuration and what reproduces it."""
    return _read_json_object(folder_of(run_dir) / CONFIG_FILE, "a memeval config.json",
                             "it is written by `memeval run`; rerun into a new --out")
