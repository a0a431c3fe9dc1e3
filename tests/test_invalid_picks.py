"""Picks of files that are not in the manifest are invalid output, counted and alerted."""

from __future__ import annotations

import json
from pathlib import Path

from memeval.log import SUMMARY_FILE
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.selectors import SELECTORS
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector

TINY = Path(__file__).resolve().parent / "data" / "plugin" / "tiny.yaml"


class _GhostSelector(SyncSelector):
    """Names files that do not exist, and nothing else: before, this read as a clean
    abstention (no false positive, 0 % invalid output, no alert)."""

    name = "ghosts"

    def select(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult(names=("does-not-exist.md", "notes/nowhere.md"))


def test_picks_of_missing_files_are_invalid_output_with_an_alert(tmp_path: Path) -> None:
    if "ghosts" not in SELECTORS.available():
        SELECTORS.register("ghosts", _GhostSelector)
    evaluate(RunConfig(scenarios=(str(TINY),), selectors=("ghosts", "bm25"), concurrency=1),
             tmp_path, progress=False)
    summary = json.loads((tmp_path / SUMMARY_FILE).read_text())
    rates = {r["selector"]: r["selector_invalid_output_rate"] for r in summary["overall"]}
    assert rates == {"ghosts": 1.0, "bm25": 0.0}
    turns = [t for t in summary["per_turn"] if t["selector"] == "ghosts"]
    assert {t["invalid_picks"] for t in turns} == {2}
    assert all(t["selector_invalid_output"] for t in turns)
    [alert] = [a for a in summary["alerts"] if "invalid" in a]
    assert alert.startswith("ghosts × gold: the selector's output was invalid on 4 of 4 turns")
    assert "named files outside the manifest" in alert
