"""Read a run folder for the report: rows and their summary, the rest is context.

A report must still render when the folder is odd (no `summary.json` yet, a broken
`config.json`, a stray `invariants.json`): each problem becomes a line in `problems`
shown at the top of the page, never an exception that loses the whole report. The
report shows the summary's scores and never computes its own: a missing or stale
summary is a problem to fix with `memeval report`, which rewrites it first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.log import (
    RESULTS_FILE,
    SUMMARY_FILE,
    RunFolderError,
    TurnResult,
    count_rows,
    iter_results,
    read_config,
    read_summary,
)

INVARIANTS_FILE = "invariants.json"


@dataclass(frozen=True)
class InvariantFailure:
    """One failed property of the invariant suite and the example that broke it."""

    test: str
    counterexample: str


@dataclass(frozen=True)
class RunData:
    """Everything the report shows about one run folder.

    Rows are not held: `rows()` reads them again, one at a time, for each reader.

    Args:
        run_dir: the folder.
        row_count: complete rows in `results.jsonl`.
        config: `config.json`, or `{}` when missing or unreadable.
        summary: `summary.json`, or `{}` when missing, unreadable or stale.
        invariants: failures listed in `invariants.json`, if the file exists.
        problems: what was wrong with the folder, one sentence each.
    """

    run_dir: Path
    row_count: int
    config: dict[str, Any]
    summary: dict[str, Any]
    invariants: tuple[InvariantFailure, ...] = ()
    problems: tuple[str, ...] = field(default=())

    def rows(self) -> Iterator[TurnResult]:
        """The folder's rows, typed, streamed from `results.jsonl`."""
        return iter_results(self.run_dir)


def _read_json(path: Path, problems: list[str]) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{path.name}: unreadable ({exc}); delete it or rerun memeval run")
        return None


def _tolerant(read: Callable[[Path], dict[str, Any]], run_dir: Path,
              problems: list[str]) -> dict[str, Any]:
    """`read(run_dir)`, or `{}` with the reason among the problems (a missing file is
    not one: the summary's absence is told below, a config is optional)."""
    try:
        return read(run_dir)
    except RunFolderError as exc:
        if not exc.missing:
            name = exc.path.name if exc.path is not None else "a file"
            problems.append(f"{name}: unreadable ({exc.__cause__ or exc}); delete it or "
                            "rerun memeval run")
        return {}


def _invariants(path: Path, problems: list[str]) -> tuple[InvariantFailure, ...]:
    data = _read_json(path, problems)
    if data is None:
        return ()
    items = data.get("failures", data) if isinstance(data, dict) else data
    if not isinstance(items, list):
        problems.append(f"{path.name}: expected a list of {{test, counterexample}} objects")
        return ()
    out = []
    for number, item in enumerate(items):
        if not isinstance(item, dict) or "test" not in item:
            problems.append(f"{path.name}: item {number} lacks a 'test' field; skipped")
            continue
        example = item.get("counterexample", "")
        if not isinstance(example, str):
            example = json.dumps(example, indent=2, default=str)
        out.append(InvariantFailure(str(item["test"]), example))
    return tuple(out)


def load_run(run_dir: Path, *, rows: int | None = None) -> RunData:
    """Read `run_dir`; raise only when there is nothing to report at all. `rows` is
    the count of its rows when the caller has just read them all (else counted)."""
    run_dir = Path(run_dir)
    results = run_dir / RESULTS_FILE
    if not results.exists():
        raise MemevalError(f"{run_dir}: no {RESULTS_FILE}; pass a folder written by "
                           "`memeval run --out DIR`")
    if rows is None:
        rows = count_rows(run_dir)
    problems: list[str] = []
    config = _tolerant(read_config, run_dir, problems)
    summary = _tolerant(read_summary, run_dir, problems)
    if summary.get("rows") != rows:
        # A summary of other rows would contradict the table: show none rather than that.
        problems.append(f"{SUMMARY_FILE} is missing or does not match {RESULTS_FILE} "
                        f"({rows} rows); run `memeval report {run_dir}` to rebuild it")
        summary = {}
    return RunData(run_dir=run_dir, row_count=rows, config=config, summary=summary,
                   invariants=_invariants(run_dir / INVARIANTS_FILE, problems),
                   problems=tuple(problems))
