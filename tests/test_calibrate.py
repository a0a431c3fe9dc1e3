"""The gate neither cries wolf nor sleeps, calibrated or not.

A noisy selector (it finds each needed memory with probability 0.6, and sometimes
adds noise) is drawn 20 times against another equivalent draw; gated with the margin
calibrated from five repeats of the baseline — or, without a calibration, with the
default read from the baseline's own turns — at most one of the 20 fails. The same
selector with half its correct picks removed fails in every draw. Seeded, offline.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.jsonenc import json_safe
from memeval.log import write_json
from memeval.scoring.calibrate import calibrate_frame, load_calibrations
from memeval.scoring.gate import run_gate
from memeval.scoring.metrics import per_turn_frame
from memeval.scoring.summary import PER_TURN_COLUMNS

SCENARIOS, TURNS_EACH = 30, 12  # 360 turns, like the bundled suite
RELEVANT = ["a.md", "b.md"]
OLD_DEFAULT = 0.03  # the fixed margin the gate used before it read the baseline


def draw(rng: np.random.Generator, repeat: int = 0, *, hit: float = 0.6,
         keep_hits: float = 1.0, selector: str = "noisy") -> pd.DataFrame:
    """One run of the noisy selector (scenario-level difficulty shared by its turns)."""
    rows = []
    for s in range(SCENARIOS):
        ease = np.clip(rng.normal(0, 0.15), -0.3, 0.3)  # some scenarios are harder
        for t in range(TURNS_EACH):
            picks = [k for k in RELEVANT if rng.random() < hit + ease and
                     rng.random() < keep_hits]
            if rng.random() < 0.3:
                picks.append("noise.md")
            rows.append({"scenario": f"s{s}", "turn_id": f"t{t}", "selector": selector,
                         "judge": "gold", "repeat": repeat, "category": "direct",
                         "selected": picks, "relevant": RELEVANT if t % 4 else []})
    return per_turn_frame(rows)


def steady(repeat: int) -> pd.DataFrame:
    """A deterministic selector: every repeat picks the same, some turns right, some not."""
    return per_turn_frame([
        {"scenario": f"s{s}", "turn_id": f"t{t}", "selector": "steady", "judge": "gold",
         "repeat": repeat, "category": "direct", "relevant": RELEVANT if t % 4 else [],
         "selected": ["a.md"] if (s + t) % 3 else ["noise.md"]}
        for s in range(SCENARIOS) for t in range(TURNS_EACH)])


@pytest.fixture(scope="module")
def calibrations() -> dict[tuple[str, str], object]:
    rng = np.random.default_rng(2026)
    baseline = pd.concat([*(draw(rng, r) for r in range(5)), *(steady(r) for r in range(5))],
                         ignore_index=True)
    return {(c.selector, c.metric): c for c in calibrate_frame(baseline)}


def test_twenty_a_a_draws_fail_at_most_once_and_a_regression_fails_every_time(calibrations):
    chosen = [calibrations[("noisy", m)] for m in ("f1", "false_alarm")]
    assert chosen[0].margin > OLD_DEFAULT  # the old default was below what 360 turns resolve
    rng = np.random.default_rng(7)
    a_a = [run_gate(draw(rng), draw(rng), calibrations=chosen).passed for _ in range(20)]
    regressions = [run_gate(draw(rng, keep_hits=0.5), draw(rng), calibrations=chosen).passed
                   for _ in range(20)]
    assert sum(not ok for ok in a_a) <= 2  # 5 % with binomial slack: 2 of 20 is 26 % likely
    assert not any(regressions)


def test_without_a_calibration_the_default_keeps_a_a_draws_passing_and_catches_a_regression():
    rng = np.random.default_rng(8)
    a_a = [run_gate(draw(rng), draw(rng)) for _ in range(20)]
    assert sum(not r.passed for r in a_a) <= 1
    assert all("uncalibrated default" in line for line in a_a[0].rules())
    regressions = [run_gate(draw(rng, keep_hits=0.5), draw(rng)).passed for _ in range(10)]
    assert not any(regressions)


def test_the_old_default_margin_cries_wolf_on_the_same_draws():
    rng = np.random.default_rng(7)
    failures = sum(not run_gate(draw(rng), draw(rng), margin=OLD_DEFAULT).passed
                   for _ in range(20))
    assert failures >= 5  # why the margin is read from the baseline


def test_each_selector_gets_its_own_margin_and_a_deterministic_one_is_not_zero(calibrations):
    noisy, steady_f1 = calibrations[("noisy", "f1")], calibrations[("steady", "f1")]
    assert steady_f1.aa_margin == 0.0  # its repeats agree exactly
    assert steady_f1.margin == steady_f1.resolvable_margin > 0  # ... but the suite resolves less
    assert noisy.margin != steady_f1.margin
    assert noisy.margin >= noisy.resolvable_margin


def test_calibration_reports_the_power_to_catch_a_loss_of_correct_picks(calibrations):
    power = {p.loss: p for p in calibrations[("noisy", "f1")].power}
    assert set(power) == {0.1, 0.2}
    assert 0 <= power[0.1].power <= power[0.2].power <= 1
    assert power[0.2].turns_for_80 < power[0.1].turns_for_80  # a bigger loss needs fewer
    assert calibrations[("noisy", "false_alarm")].power == ()  # lost hits leave it unchanged


def test_a_baseline_without_repeats_cannot_be_calibrated():
    with pytest.raises(MemevalError, match="--repeats 5"):
        calibrate_frame(draw(np.random.default_rng(0)))


def _folder(tmp_path, name: str, frame: pd.DataFrame):
    folder = tmp_path / name
    folder.mkdir()
    write_json(folder / "summary.json",
               {"per_turn": json_safe(frame[list(PER_TURN_COLUMNS)].to_dict(orient="records"))})
    return folder


def test_calibrate_command_writes_what_the_gate_reads_and_the_gate_names_the_rule(tmp_path):
    rng = np.random.default_rng(3)
    base = _folder(tmp_path, "base", pd.concat([draw(rng, r) for r in range(3)],
                                               ignore_index=True))
    runner = CliRunner()
    done = runner.invoke(cli, ["calibrate", str(base)])
    assert done.exit_code == 0, done.output
    assert "power to catch a 10% loss" in done.output and "80 % takes about" in done.output
    stored = {c.metric: c for c in load_calibrations(base)}
    assert set(stored) == {"f1", "false_alarm"}
    assert json.loads((base / "calibration.json").read_text())[0]["power"]
    cand = _folder(tmp_path, "cand", draw(rng))
    gated = runner.invoke(cli, ["gate", str(cand), "--baseline", str(base)])
    assert "rule: f1" in gated.output and "calibrated: from calibration.json" in gated.output
    unrated = runner.invoke(cli, ["gate", str(cand), "--baseline", str(cand)])
    assert "uncalibrated default" in unrated.output and unrated.exit_code == 0
