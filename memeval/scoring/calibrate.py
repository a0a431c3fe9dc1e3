"""Calibrate the gate's margin per selector × judge, and say what the gate can catch.

A non-inferiority margin below what a suite can resolve makes the gate cry wolf:
two equivalent runs of a noisy selector differ by chance, and a strict margin fails
them. Run the baseline with repeats (`memeval run --repeats 5`), then
`memeval calibrate RUN`: per selector × judge × gated metric, the repeats are the
equivalent draws `stats.calibrate_margin` reads (pseudo A/A trials, each gated by the
lower bound `stats.non_inferiority` computes). The margin is never below what the
suite resolves (`resolvable_margin`), so a deterministic baseline, whose repeats
agree exactly, still gets a margin and not 0. For the primary metric the calibration
also reports the power to catch a loss of 10 % and 20 % of correct picks, and the
turns a suite like this one needs for 80 %. docs/statistics.md states the procedure.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memeval.errors import MemevalError
from memeval.jsonenc import json_safe
from memeval.scoring.catalog import GATED, PRIMARY, metric
from memeval.scoring.stats import (
    CALIBRATION_TRIALS,
    CONFIDENCE,
    FALSE_FAILURE,
    SEED,
    calibrate_margin,
    non_inferiority,
    resampled_draws,
)

CALIBRATION_FILE = "calibration.json"
LOSSES: tuple[float, ...] = (0.1, 0.2)  # shares of correct picks lost, the power is read for
TARGET_POWER = 0.8
POWER_TRIALS = 200  # simulated regressed candidates per loss: ±0.03 on a power near 0.8


@dataclass(frozen=True)
class Power:
    """How often the gate catches a given loss of correct picks.

    Args:
        loss: share of the baseline's hits removed from the candidate.
        power: share of simulated regressed candidates the gate fails.
        turns_for_80: turns that need memory (those F1 rests on) a suite of the same
            mix needs for 80 % power, margin recalibrated on it; NaN when the loss
            does not move the metric.
    """

    loss: float
    power: float
    turns_for_80: float


@dataclass(frozen=True)
class Calibration:
    """The margin a suite supports for one selector × judge and gated metric.

    Args:
        selector: the baseline selector.
        judge: the judge whose scores were read.
        metric: the gated metric.
        margin: max(`aa_margin`, `resolvable_margin`): what the gate uses.
        aa_margin: smallest margin at which A/A gates of the repeats fail at most
            `false_failure` of the time (0 for a deterministic baseline).
        resolvable_margin: the floor read from the turns' own spread.
        repeats: equivalent draws the noise was read from.
        turns: turns scored in every draw.
        clusters: scenarios among them.
        trials: pseudo A/A comparisons each margin is the quantile of.
        false_failure: the A/A failure rate this metric may spend (5 % / gated metrics).
        power: for the primary metric, the gate's power at each of `LOSSES`.
    """

    selector: str
    judge: str
    metric: str
    margin: float
    aa_margin: float = math.nan
    resolvable_margin: float = math.nan
    repeats: int = 0
    turns: int = 0
    clusters: int = 0
    trials: int = CALIBRATION_TRIALS
    false_failure: float = FALSE_FAILURE
    power: tuple[Power, ...] = ()

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
        if math.isfinite(self.margin) and self.margin > 0:
            out |= {"turns_for_0.01": self.turns_needed(0.01),
                    "turns_for_0.03": self.turns_needed(0.03)}
        return json_safe(out)

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> Calibration:
        """An entry of calibration.json (older files lack the newer fields)."""
        known = {f.name for f in fields(cls)}
        values = {k: (math.nan if v is None else v) for k, v in entry.items()
                  if k in known and k != "power"}
        power = tuple(Power(**{k: (math.nan if v is None else v) for k, v in p.items()})
                      for p in entry.get("power") or ())
        return cls(**values, power=power)


# -- the turns a margin is read from ------------------------------------------------------

def turn_values(part: pd.DataFrame, name: str) -> tuple[np.ndarray, list[str]]:
    """One selector × judge's scored turns: `name` per turn (repeats averaged), clusters."""
    scored = part[part["scored"].astype(bool)] if "scored" in part.columns else part
    if name not in scored.columns or scored.empty:
        return np.array([]), []
    per_turn = (scored.assign(_v=pd.to_numeric(scored[name], errors="coerce"))
                .groupby(["scenario", "turn_id"], sort=True)["_v"].mean().dropna())
    return per_turn.to_numpy(dtype=float), [str(s) for s, _ in per_turn.index]


def resolvable_margin(part: pd.DataFrame, name: str, *,
                      false_failure: float = FALSE_FAILURE) -> float:
    """The smallest margin this suite resolves for `name`, read from one baseline run.

    `stats.resampled_draws` stands in for repeats (each turn replaced by a random
    turn of its own scenario) and `stats.calibrate_margin` finds the margin at which
    at most `false_failure` of A/A gates between such draws fail. It is the gate's
    uncalibrated default and the floor of every calibrated margin. 0 when fewer than
    two units remain (the gate then lacks the pairs to pass anyway).
    """
    values, clusters = turn_values(part, name)
    if values.size < 2:
        return 0.0
    found = calibrate_margin(resampled_draws(values, clusters), clusters,
                             false_failure=false_failure)
    return round(found, 4) if math.isfinite(found) else 0.0


# -- power ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _f1(hits: int, false_positives: int, relevant: int) -> float:
    """F1 of a turn from its counts, by the one scoring rule (`metrics.score_turn`)."""
    from memeval.scoring.metrics import score_turn

    picks = [f"r{i}" for i in range(hits)] + [f"x{i}" for i in range(false_positives)]
    return score_turn(picks, {"relevant": [f"r{i}" for i in range(relevant)]}).f1


def loss_power(part: pd.DataFrame, margin: float, loss: float, *,
               trials: int = POWER_TRIALS, seed: int = SEED) -> Power:
    """How often the gate fails a candidate that lost `loss` of the baseline's hits.

    Each trial takes one repeat, removes each of its hits with probability `loss`
    (the pick is gone, its false positives stay) and gates it against another repeat
    (the same one when there is only one) with `stats.non_inferiority` at `margin`.
    `turns_for_80` follows from the normal approximation with the margin recalibrated
    on the bigger suite (margin and bound both shrink as 1/√turns):
    turns × ((z₀.₈ − z + margin/se) · se / δ)², se the bound's standard error and δ the
    mean loss in F1.
    """
    from scipy import stats

    needed = {"hits", "false_positives", "n_relevant", PRIMARY}
    if not needed <= set(part.columns):
        return Power(loss, math.nan, math.nan)
    scored = part[part["scored"].astype(bool)] if "scored" in part.columns else part
    scored = scored[scored[PRIMARY].notna()]
    repeats = sorted(scored["repeat"].unique()) if "repeat" in scored.columns else [0]
    if scored.empty:
        return Power(loss, math.nan, math.nan)
    by_repeat = {r: scored[scored["repeat"] == r].set_index(["scenario", "turn_id"]).sort_index()
                 for r in repeats} if "repeat" in scored.columns else \
        {0: scored.set_index(["scenario", "turn_id"]).sort_index()}
    common = functools.reduce(lambda x, y: x.intersection(y),
                              (t.index for t in by_repeat.values()))
    rng = np.random.default_rng(seed)
    fails, halves, drops = 0, [], []
    clusters = [str(s) for s, _ in common]
    for trial in range(trials):
        cand_rows = by_repeat[repeats[trial % len(repeats)]].loc[common]
        base_rows = by_repeat[repeats[(trial + 1) % len(repeats)]].loc[common]
        hits = cand_rows["hits"].to_numpy(dtype=int)
        kept = hits - rng.binomial(hits, loss)
        regressed = np.array([_f1(int(h), int(fp), int(r)) for h, fp, r in zip(
            kept, cand_rows["false_positives"].to_numpy(dtype=int),
            cand_rows["n_relevant"].to_numpy(dtype=int), strict=True)])
        before = cand_rows[PRIMARY].to_numpy(dtype=float)
        found = non_inferiority(regressed - base_rows[PRIMARY].to_numpy(dtype=float), clusters,
                                margin)
        fails += not found.passed
        halves.append(found.half_width)
        drops.append(float(np.mean(before - regressed)))
    z = stats.norm.ppf(CONFIDENCE)
    se, delta = float(np.nanmean(halves)) / z, float(np.mean(drops))
    turns_for_80 = math.nan
    if delta > 0 and se > 0:
        factor = (stats.norm.ppf(TARGET_POWER) - z + margin / se) * se / delta
        turns_for_80 = float(math.ceil(len(common) * max(factor, 0.0) ** 2))
    return Power(loss, fails / trials, turns_for_80)


# -- calibration ------------------------------------------------------------------------

def _draws(part: pd.DataFrame, name: str) -> tuple[np.ndarray, list[str]]:
    """Repeats × turns of `name`, only turns scored in every repeat."""
    scored = part[part["scored"].astype(bool)] if "scored" in part.columns else part
    table = scored.assign(_v=pd.to_numeric(scored[name], errors="coerce")).pivot_table(
        index="repeat", columns=["scenario", "turn_id"], values="_v", aggfunc="mean",
        dropna=False)
    table = table.loc[:, table.notna().all(axis=0)]
    return table.to_numpy(dtype=float), [str(s) for s, _ in table.columns]


def calibrate_frame(frame: pd.DataFrame, *, metrics: Sequence[str] = GATED,
                    false_failure: float = FALSE_FAILURE) -> list[Calibration]:
    """One `Calibration` per selector × judge × metric of a scored table with repeats.

    Args:
        frame: per-turn scores of a baseline run made with `--repeats` (2 or more).
        metrics: the gated metrics to calibrate (the gate's default ones).
        false_failure: the A/A failure rate of the whole gate; each metric gets
            `false_failure / len(metrics)` (Bonferroni), as the gate spends it.
    """
    share = false_failure / len(metrics)
    out = []
    for (selector, judge), part in frame.groupby(["selector", "judge"], sort=True):
        repeats = sorted(part["repeat"].unique())
        if len(repeats) < 2:
            raise MemevalError(
                f"{selector} × {judge}: one repeat only, so its run-to-run noise cannot be "
                "measured; rerun the baseline with `memeval run --repeats 5` (without a "
                "calibration the gate reads its margin from the baseline's turns)")
        for name in metrics:
            metric(name)  # an unknown name fails here, naming the known ones
            draws, clusters = _draws(part, name)
            if draws.shape[1] < 2:
                continue  # e.g. no turn needing nothing: the gate skips the metric too
            aa = calibrate_margin(draws, clusters, false_failure=share)
            floor = resolvable_margin(part, name, false_failure=share)
            margin = round(max(aa, floor), 4) if math.isfinite(aa) else floor
            power = tuple(loss_power(part, margin, loss) for loss in LOSSES) \
                if name == PRIMARY else ()
            out.append(Calibration(str(selector), str(judge), name, margin,
                                   round(aa, 4), floor, len(repeats), draws.shape[1],
                                   len(set(clusters)), false_failure=share, power=power))
    return out


def calibrate_run(run: Path, *, metrics: Sequence[str] = GATED) -> list[Calibration]:
    """Calibrate from a run folder's summary and write `calibration.json` beside it."""
    from memeval.scoring.compare import per_turn_table

    calibrations = calibrate_frame(per_turn_table(run), metrics=metrics)
    if run.is_dir():
        (run / CALIBRATION_FILE).write_text(json.dumps(
            [c.to_dict() for c in calibrations], indent=2) + "\n", encoding="utf-8")
    return calibrations


def load_calibrations(baseline: Path) -> list[Calibration]:
    """The calibration.json entries stored beside a baseline run (none when absent)."""
    folder = baseline if baseline.is_dir() else baseline.parent
    path = folder / CALIBRATION_FILE
    if not path.exists():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        return [Calibration.from_dict(e) for e in entries]
    except (ValueError, TypeError, AttributeError) as exc:
        raise MemevalError(f"{path}: not a memeval calibration ({exc}); rerun "
                           "`memeval calibrate` on the baseline") from None


__all__ = ["CALIBRATION_FILE", "LOSSES", "Calibration", "Power", "calibrate_frame",
           "calibrate_run", "load_calibrations", "loss_power", "resolvable_margin"]
