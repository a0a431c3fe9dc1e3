"""Calibrate the gate's margin from the baseline's own run-to-run noise.

A non-inferiority margin below what a suite can resolve makes the gate cry wolf:
two equivalent runs of a noisy selector differ by chance, and a strict margin fails
them. Run the baseline with repeats (`memeval run --repeats 5`), then
`memeval calibrate RUN`: per selector × judge, the repeats are the equivalent draws
`memeval.scoring.stats.calibrate_margin` reads (pseudo A/A trials, each gated by the
same lower bound `non_inferiority` computes), and the margin is the one at which at
most 5 % of those A/A gates fail. docs/statistics.md states the procedure.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.errors import MemevalError
from memeval.scoring.stats import CALIBRATION_TRIALS, FALSE_FAILURE, calibrate_margin

CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    """The margin a suite supports for one selector × judge and metric.

    Args:
        selector: the baseline selector.
        judge: the judge whose scores were read.
        metric: the gated metric.
        margin: smallest margin at which A/A gates fail at most `false_failure` of
            the time (NaN with fewer than two clusters).
        repeats: equivalent draws the noise was read from.
        turns: turns scored in every draw.
        clusters: scenarios among them.
        trials: pseudo A/A comparisons the margin is the quantile of.
        false_failure: the A/A failure rate aimed for.
    """

    selector: str
    judge: str
    metric: str
    margin: float
    repeats: int
    turns: int
    clusters: int
    trials: int = CALIBRATION_TRIALS
    false_failure: float = FALSE_FAILURE

    def turns_needed(self, margin: float) -> int:
        """Turns a suite like this one needs to hold `margin` at the same false-failure rate.

        The bound's width shrinks as 1/√(clusters), so the suite must grow by
        (calibrated / wanted)², new scenarios assumed to resemble today's.
        """
        if not margin > 0:
            raise MemevalError(f"turns_needed: the margin must be positive, got {margin}")
        if not math.isfinite(self.margin):
            raise MemevalError("turns_needed: no calibrated margin (fewer than two clusters)")
        return max(self.turns, math.ceil(self.turns * (self.margin / margin) ** 2))

    def clusters_needed(self, margin: float) -> int:
        """Like `turns_needed`, counted in clusters (scenarios)."""
        return math.ceil(self.turns_needed(margin) * self.clusters / max(self.turns, 1))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if math.isfinite(self.margin):
            out |= {"turns_for_0.01": self.turns_needed(0.01),
                    "turns_for_0.03": self.turns_needed(0.03)}
        return out


def _draws(part: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """Repeats × turns of `metric` (NaN where a repeat did not score the turn)."""
    table = part.pivot_table(index="repeat", columns=["scenario", "turn_id"], values=metric,
                             aggfunc="mean", dropna=False)
    return table, [str(s) for s, _ in table.columns]


def calibrate_frame(frame: pd.DataFrame, *, metric: str = "f1",
                    false_failure: float = FALSE_FAILURE) -> list[Calibration]:
    """One `Calibration` per selector × judge of a scored table with repeats."""
    out = []
    for (selector, judge), part in frame.groupby(["selector", "judge"], sort=True):
        repeats = sorted(part["repeat"].unique())
        if len(repeats) < 2:
            raise MemevalError(
                f"{selector} × {judge}: one repeat only, so its noise cannot be measured; "
                "rerun the baseline with --repeats 5 (a selector that answers the same "
                "every time has no noise, and any margin >= 0 holds for it)")
        draws, clusters = _draws(part.astype({metric: float}), metric)
        complete = draws.notna().all(axis=0).to_numpy()
        if not complete.any():
            raise MemevalError(f"{selector} × {judge}: no turn scored in every repeat to "
                               "calibrate on")
        margin = calibrate_margin(draws.to_numpy(), clusters, false_failure=false_failure)
        kept = [c for c, ok in zip(clusters, complete, strict=True) if ok]
        out.append(Calibration(str(selector), str(judge), metric, round(margin, 4),
                               len(repeats), len(kept), len(set(kept)),
                               false_failure=false_failure))
    return out


def calibrate_run(run: Path, *, metric: str = "f1") -> list[Calibration]:
    """Calibrate from a run folder's summary and write `calibration.json` beside it."""
    from memeval.scoring.compare import per_turn_table

    calibrations = calibrate_frame(per_turn_table(run), metric=metric)
    if run.is_dir():
        (run / CALIBRATION_FILE).write_text(json.dumps(
            [c.to_dict() for c in calibrations], indent=2) + "\n", encoding="utf-8")
    return calibrations


def calibrated_margin(baseline: Path, metric: str = "f1") -> float | None:
    """The largest calibrated margin stored with a baseline run, if it was calibrated."""
    folder = baseline if baseline.is_dir() else baseline.parent
    path = folder / CALIBRATION_FILE
    if not path.exists():
        return None
    entries = [e for e in json.loads(path.read_text(encoding="utf-8"))
               if e.get("metric") == metric]
    return max((float(e["margin"]) for e in entries), default=None)
