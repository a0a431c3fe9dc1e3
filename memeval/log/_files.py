"""What a run folder holds and how its JSON-lines files are cut into lines.

Shared by the writer (which must find the units a killed run left short) and the
readers, so both agree on what a complete line is and which unit a stored row
belongs to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.jsonenc import decode_line

RESULTS_FILE = "results.jsonl"
PAYLOADS_FILE = "payloads.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
REPORT_FILE = "index.html"
LOCK_FILE = ".memeval.lock"
INCOMPLETE_MARKER = "RUN_INCOMPLETE"
GATE_FILE = "gate.json"
# Every file a run writes in its folder: none may be a link (see `refuse_links`).
RUN_FILES = (RESULTS_FILE, PAYLOADS_FILE, SUMMARY_FILE, CONFIG_FILE, REPORT_FILE,
             LOCK_FILE, INCOMPLETE_MARKER, GATE_FILE)

UnitKey = tuple[str, str, int, int]  # (scenario, selector, repeat, first turn index)
TurnKey = tuple[str, str, int, int]  # (scenario, selector, repeat, turn index)


def folder_of(path: Path | str) -> Path:
    """The run folder, given it or its `results.jsonl`."""
    path = Path(path)
    return path.parent if path.name == RESULTS_FILE else path


def sized_lines(path: Path) -> Iterator[tuple[int, dict[str, Any], int]]:
    """(line number, object, length in bytes) of every complete line; a torn last
    line (the write of a killed run, whose unit reruns) is dropped."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return
            try:
                yield number, decode_line(raw), len(raw)
            except json.JSONDecodeError as exc:
                raise MemevalError(
                    f"{path}:{number}: not a JSON line ({exc.msg}); the file was edited "
                    "by hand or by another tool. Move it away to start the run afresh."
                ) from exc


def lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every complete line (see `sized_lines`)."""
    for number, value, _ in sized_lines(path):
        yield number, value


def row_errored(row: Mapping[str, Any]) -> bool:
    """Did the selector or a judge fail on this stored row (an API error, junk output)?"""
    return bool(row.get("selector_error")) or any(
        isinstance(j, Mapping) and j.get("error") for j in row.get("judgements") or ())


def unit_key(row: Mapping[str, Any]) -> UnitKey:
    """The unit a stored row was written in: (scenario, selector, repeat, first turn).
    Rows of memeval before turn units have no first turn: theirs was a whole session."""
    return (str(row["scenario"]), str(row["selector"]), int(row.get("repeat", 0)),
            int(row.get("unit_start", 0)))


def turn_key(row: Mapping[str, Any]) -> TurnKey:
    """(scenario, selector, repeat, turn index) of a stored row."""
    return (str(row["scenario"]), str(row["selector"]), int(row.get("repeat", 0)),
            int(row.get("turn_index", 0)))
