"""The gate neither cries wolf nor sleeps: an A/A test with the calibrated margin.

A noisy selector (it finds each needed memory with probability 0.6, and sometimes
adds noise) is drawn 20 times against another equivalent draw; gated with the margin
calibrated from five repeats of the baseline, at most one of the 20 fails. The same
selector with half its correct picks removed fails in every draw. Seeded, offline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memeval.errors import MemevalError
from memeval.scoring.calibrate import calibrate_frame
from memeval.scoring.gate import DEFAULT_MARGIN, run_gate
from memeval.scoring.metrics import per_turn_frame

SCENARIOS, TURNS_EACH = 30, 12  # 360 turns, like the bundled suite
RELEVANT = ["a.md", "b.md"]


def draw(rng: np.random.Generator, repeat: int = 0, *, hit: float = 0.6,
         keep_hits: float = 1.0) -> pd.DataFrame:
    """One run of the noisy selector (scenario-level difficulty shared by its turns)."""
    rows = []
    for s in range(SCENARIOS):
        ease = np.clip(rng.normal(0, 0.15), -0.3, 0.3)  # some scenarios are harder
        for t in range(TURNS_EACH):
            picks = [k for k in RELEVANT if rng.random() < hit + ease and
                     rng.random() < keep_hits]
            if rng.random() < 0.3:
                picks.append("noise.md")
            rows.append({"scenario": f"s{s}", "turn_id": f"t{t}", "selector": "noisy",
                         "judge": "gold", "repeat": repeat, "category": "direct",
                         "selected": picks, "relevant": RELEVANT})
    return per_turn_frame(rows)


@pytest.fixture(scope="module")
def margin() -> float:
    rng = np.random.default_rng(2026)
    baseline = pd.concat([draw(rng, r) for r in range(5)], ignore_index=True)
    (calibration,) = calibrate_frame(baseline)
    assert calibration.repeats == 5 and calibration.turns == SCENARIOS * TURNS_EACH
    assert calibration.turns_needed(calibration.margin / 2) == pytest.approx(
        4 * calibration.turns, rel=0.01)
    return calibration.margin


def test_twenty_a_a_draws_fail_at_most_once_and_a_regression_fails_every_time(margin):
    assert margin > DEFAULT_MARGIN  # the old default was below what 360 turns resolve
    rng = np.random.default_rng(7)
    a_a = [run_gate(draw(rng), draw(rng), margin=margin).passed for _ in range(20)]
    regressions = [run_gate(draw(rng, keep_hits=0.5), draw(rng), margin=margin).passed
                   for _ in range(20)]
    assert sum(not ok for ok in a_a) <= 1
    assert not any(regressions)


def test_the_old_default_margin_cries_wolf_on_the_same_draws():
    rng = np.random.default_rng(7)
    failures = sum(not run_gate(draw(rng), draw(rng), margin=DEFAULT_MARGIN).passed
                   for _ in range(20))
    assert failures >= 5  # why calibration exists


def test_a_baseline_without_repeats_cannot_be_calibrated():
    with pytest.raises(MemevalError, match="--repeats 5"):
        calibrate_frame(draw(np.random.default_rng(0)))
