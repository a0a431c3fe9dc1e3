"""Calibrate the gate's margin from the baseline's own run-to-run noise.

A non-inferiority margin below what a suite can resolve makes the gate cry wolf:
two equivalent runs of a noisy selector differ by chance, and a strict margin fails
them. Run the baseline with repeats (`memeval run --repeats 5`), then
`memeval calibrate RUN`: every ordered pair of repeats is an A/A comparison (the
same selector against itself), gated exactly as `memeval gate` gates a candidate.
The margin is the one that keeps those A/A comparisons from failing more than 5 %
of the time, estimated from their spread rather than their single worst case:

    margin = mean half-width of the pairs' intervals + z(1 − α) × sd of their differences

(the first term is how far the gate's lower bound sits below the observed
difference, the second how far that difference strays by chance). A margin shrinks
with the square root of the suite, so the suite size a smaller margin needs is
`turns × (margin / wanted)²`.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from memeval.errors import MemevalError
from memeval.scoring.metrics import paired_compare

CALIBRATION_FILE = "calibration.json"
FALSE_FAILURE = 0.05


@dataclass(frozen=True)
class Calibration:
    """The margin a suite supports for one selector × judge and metric."""

    selector: str
    judge: str
    metric: str
    margin: float
    repeats: int
    pairs: int
    turns: int
    false_failure: float = FALSE_FAILURE

    def turns_needed(self, margin: float) -> int:
        """Turns a suite needs for `margin` to keep the same A/A false-failure rate."""
        if margin <= 0:
            return math.inf if self.margin > 0 else self.turns  # type: ignore[return-value]
        return max(self.turns, math.ceil(self.turns * (self.margin / margin) ** 2))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"turns_for_0.01": self.turns_needed(0.01),
                               "turns_for_0.03": self.turns_needed(0.03)}


def calibrate_frame(frame: pd.DataFrame, *, metric: str = "f1",
                    false_failure: float = FALSE_FAILURE) -> list[Calibration]:
    """One `Calibration` per selector × judge of a scored table with repeats."""
    out = []
    for (selector, judge), part in frame.groupby(["selector", "judge"], sort=True):
        repeats = sorted(part["repeat"].unique())
        turns = part[part[metric].notna()].groupby(["scenario", "turn_id"]).ngroups
        if len(repeats) < 2:
            raise MemevalError(
                f"{selector} × {judge}: one repeat only, so its noise cannot be measured; "
                "rerun the baseline with --repeats 5 (a selector that answers the same "
                "every time has no noise, and any margin >= 0 holds for it)")
        diffs, halves = [], []
        for a, b in itertools.permutations(repeats, 2):
            result = paired_compare(part[part["repeat"] == a], part[part["repeat"] == b], metric)
            if result.n_pairs and not math.isnan(result.ci_low):
                diffs.append(result.mean_diff)
                halves.append(result.mean_diff - result.ci_low)
        if not diffs:
            raise MemevalError(f"{selector} × {judge}: no scored turn pairs to calibrate on")
        z = stats.norm.ppf(1 - false_failure)
        spread = float(np.std(diffs, ddof=1)) if len(diffs) > 1 else 0.0
        margin = float(np.mean(halves)) + z * spread
        out.append(Calibration(str(selector), str(judge), metric, round(float(margin), 4),
                               len(repeats), len(diffs), int(turns), false_failure))
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
