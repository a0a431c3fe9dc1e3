"""The regression gate: does a run meet its thresholds and hold up against a baseline?

Every check reads the run's scored turns (`summary.json`'s `per_turn`, written by
`memeval.scoring.metrics`); the gate never re-scores, and pairs selectors by the same rule
as `memeval compare`. Checks:

- *error rate*: per selector and judge, the share of turns whose selector or judge
  failed must not exceed `--max-error-rate` (default 0: any error fails the gate).
- *threshold*: a selector's mean of a metric over its scored turns must reach the
  minimum asked for. No scored turn is a failure, not a skip.
- *non-inferiority*: per selector and judge, the paired 95 % cluster-bootstrap
  interval of candidate − baseline must have its lower bound at or above −margin,
  for the primary metric (F1 unless told otherwise). Secondary metrics are tested
  with one-sided p-values on per-scenario differences, Holm-adjusted across them.
  The candidate must cover every baseline turn, and enough paired turns must exist.

The gate fails (never passes) when every check was skipped, when the candidate
misses baseline turns, or when too few pairs exist to test the margin. A margin
below what the suite resolves is flagged in the check's detail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memeval.errors import MemevalError
from memeval.provenance import check_runs_comparable

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MARGIN = 0.03
DEFAULT_MAX_ERROR_RATE = 0.0
PRIMARY_METRIC = "f1"
GATED_METRICS: tuple[str, ...] = ("f1",)
MIN_PAIRS = 10  # fewer paired turns cannot resolve any sensible margin
ALPHA = 0.05
GATE_FILE = "gate.json"

Status = Literal["pass", "fail", "skipped"]
CheckKind = Literal["error-rate", "threshold", "non-inferiority", "coverage"]


class GateInputError(MemevalError):
    """A run folder or baseline summary cannot be read as gate input."""


@dataclass(frozen=True)
class GateCheck:
    """One line of the gate's table.

    Args:
        kind: `error-rate`, `threshold`, `non-inferiority` or `coverage`.
        metric: the metric checked.
        selector: the candidate selector.
        judge: the judge whose scores are checked.
        value: the candidate's mean (threshold) or the CI's lower bound of
            candidate − baseline (non-inferiority).
        limit: the minimum asked for, or −margin.
        status: `pass`, `fail` or `skipped`.
        detail: one sentence for the table: means, pairs, why skipped.
        baseline_selector: the baseline selector paired with (non-inferiority).
    """

    kind: CheckKind
    metric: str
    selector: str
    judge: str
    value: float | None
    limit: float
    status: Status
    detail: str = ""
    baseline_selector: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def message(self) -> str:
        """The failure sentence: names the metric, the value and the threshold."""
        value = "undefined" if self.value is None else f"{self.value:.3f}"
        who = f"selector {self.selector}, judge {self.judge}"
        if self.kind == "threshold":
            return f"{self.metric} = {value} is below the minimum {self.limit:.3f} ({who})"
        if self.kind == "error-rate":
            return (f"{self.metric} = {value} is above the allowed {self.limit:.3f} ({who}; "
                    f"{self.detail}); errored turns are unscored, so the other figures rest "
                    "on fewer turns. Fix the cause, or raise --max-error-rate knowingly")
        if self.kind == "coverage":
            return f"{self.detail} ({who})"
        if self.metric != PRIMARY_METRIC and self.value is not None and self.limit == ALPHA:
            return (f"{self.metric} may have regressed against baseline "
                    f"{self.baseline_selector}: {self.detail} = {value} > {ALPHA} ({who})")
        return (f"{self.metric} regressed against baseline {self.baseline_selector}: the lower "
                f"bound of the 95% CI of candidate − baseline is {value}, below the allowed "
                f"{self.limit:.3f} (margin {-self.limit:.3f}; {who}; {self.detail})")


@dataclass(frozen=True)
class GateResult:
    """Every check of a gate run; `passed` when none failed and at least one ran."""

    checks: tuple[GateCheck, ...]

    @property
    def passed(self) -> bool:
        ran = [c for c in self.checks if c.status != "skipped"]
        return bool(ran) and not any(c.failed for c in self.checks)

    @property
    def failures(self) -> tuple[GateCheck, ...]:
        failed = tuple(c for c in self.checks if c.failed)
        if failed or self.passed:
            return failed
        return (GateCheck("coverage", "-", "-", "-", None, 0.0, "fail",
                          "every check was skipped: nothing was tested"),)

    def to_dict(self) -> dict[str, Any]:
        from memeval.scoring.summary import clean

        return {"passed": self.passed, "checks": [clean(asdict(c)) for c in self.checks]}

    def table(self) -> str:
        """A plain-text table of every check, failures marked, for terminals and CI logs."""
        if not self.checks:
            return "no gate checks (pass --min-precision, --min-recall or --baseline)"
        header = ["status", "check", "selector", "judge", "metric", "value", "limit", "detail"]
        lines = [[c.status.upper(), c.kind, c.selector, c.judge, c.metric,
                  "—" if c.value is None else f"{c.value:.3f}",
                  f"{c.limit:.3f}", c.detail] for c in self.checks]
        widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return "\n".join(fmt.format(*row).rstrip() for row in [header, *lines])

    def markdown(self) -> str:
        """The checks as a Markdown table, fit for a CI job summary."""
        verdict = "✅ PASS" if self.passed else "❌ FAIL"
        lines = [f"### memeval gate: {verdict}", "",
                 "| status | check | selector | judge | metric | value | limit | detail |",
                 "|---|---|---|---|---|---|---|---|"]
        for c in self.checks:
            value = "—" if c.value is None else f"{c.value:.3f}"
            cells = [c.status.upper(), c.kind, c.selector, c.judge, c.metric, value,
                     f"{c.limit:.3f}", c.detail]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        for c in self.failures:
            lines.append(f"\n- **FAIL**: {c.message()}")
        return "\n".join(lines) + "\n"


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# -- inputs -----------------------------------------------------------------------------

def per_turn_table(path: Path) -> pd.DataFrame:
    """Scored turns of a run folder or summary.json (see `memeval.scoring.compare`)."""
    from memeval.scoring.compare import RunInputError, per_turn_table

    try:
        return per_turn_table(Path(path))
    except RunInputError as exc:
        raise GateInputError(str(exc)) from None


# -- checks -----------------------------------------------------------------------------

def _groups(frame: pd.DataFrame) -> list[tuple[str, str]]:
    import pandas as pd

    if frame.empty:
        return []
    judges = frame["judge"] if "judge" in frame.columns else pd.Series(["gold"] * len(frame))
    pairs = {(str(s), str(j)) for s, j in zip(frame["selector"], judges, strict=True)}
    return sorted(pairs)


def _slice(frame: pd.DataFrame, selector: str, judge: str) -> pd.DataFrame:
    judges = frame["judge"].astype(str) if "judge" in frame.columns else "gold"
    return frame[(frame["selector"].astype(str) == selector) & (judges == judge)]


def error_rate_checks(frame: pd.DataFrame, max_rate: float) -> list[GateCheck]:
    """Per selector × judge: the share of turns whose selector or judge failed."""
    checks = []
    for selector, judge in _groups(frame):
        part = _slice(frame, selector, judge)
        for kind in ("selector", "judge"):
            column = f"{kind}_error"
            failed = part[column].astype(bool) if column in part.columns else None
            if failed is None or failed.empty:
                continue
            rate = float(failed.mean())
            checks.append(GateCheck(
                "error-rate", f"{kind} error rate", selector, judge, rate, max_rate,
                "fail" if rate > max_rate else "pass",
                f"{int(failed.sum())} of {len(failed)} turns errored"))
    return checks


def _scored(part: pd.DataFrame) -> pd.DataFrame:
    return part[part["scored"].astype(bool)] if "scored" in part.columns else part


def threshold_checks(frame: pd.DataFrame, minimums: Mapping[str, float]) -> list[GateCheck]:
    """One check per selector × judge × metric with a minimum, over scored turns."""
    import pandas as pd

    checks = []
    for selector, judge in _groups(frame):
        part = _scored(_slice(frame, selector, judge))
        for metric, minimum in minimums.items():
            per_turn = (part.assign(_v=pd.to_numeric(part[metric], errors="coerce"))
                        .groupby(["scenario", "turn_id"])["_v"].mean()).dropna()
            if per_turn.empty:
                checks.append(GateCheck("threshold", metric, selector, judge, None, minimum,
                                        "fail", f"{metric} rests on no scored turn"))
                continue
            mean = float(per_turn.mean())
            checks.append(GateCheck(
                "threshold", metric, selector, judge, mean, minimum,
                "pass" if mean >= minimum else "fail", f"mean over {len(per_turn)} turns"))
    return checks


def _missing_turns(candidate: pd.DataFrame, baseline: pd.DataFrame) -> list[str]:
    have = set(zip(candidate["scenario"], candidate["turn_id"], strict=True))
    need = set(zip(baseline["scenario"], baseline["turn_id"], strict=True))
    return sorted(f"{s}/{t}" for s, t in need - have)


def _one_sided_p(candidate: pd.DataFrame, baseline: pd.DataFrame, metric: str,
                 margin: float) -> float:
    """p-value of H0 "candidate − baseline ≤ −margin", on per-scenario mean differences."""
    from scipy import stats

    joined = (candidate.groupby(["scenario", "turn_id"])[metric].mean().rename("a").to_frame()
              .join(baseline.groupby(["scenario", "turn_id"])[metric].mean().rename("b"),
                    how="inner").dropna())
    if joined.empty:
        return math.nan
    per_scenario = (joined["a"] - joined["b"]).groupby(level=0).mean().to_numpy() + margin
    if per_scenario.size < 2:
        return math.nan
    if (per_scenario == per_scenario[0]).all():
        return 0.0 if per_scenario[0] > 0 else 1.0
    return float(stats.ttest_1samp(per_scenario, 0.0, alternative="greater").pvalue)


def non_inferiority_checks(candidate: pd.DataFrame, baseline: pd.DataFrame, *,
                           margin: float = DEFAULT_MARGIN, primary: str = PRIMARY_METRIC,
                           secondary: Sequence[str] = (),
                           pairs: Sequence[tuple[str, str]] = ()) -> list[GateCheck]:
    """Paired non-inferiority of each candidate selector × judge against the baseline."""
    from memeval.scoring.compare import pair_selectors
    from memeval.scoring.metrics import paired_compare
    from memeval.scoring.stats import holm

    checks: list[GateCheck] = []
    judges = sorted(set(candidate["judge"]) & set(baseline["judge"]))
    if not judges:
        return [GateCheck("coverage", primary, "-", "-", None, 0.0, "fail",
                          "candidate and baseline share no judge")]
    for judge in judges:
        cand_j, base_j = _slice_judge(candidate, judge), _slice_judge(baseline, judge)
        try:
            matched = pair_selectors(sorted(set(base_j["selector"])),
                                     sorted(set(cand_j["selector"])),
                                     [(b, c) for c, b in pairs])
        except MemevalError as exc:
            checks.append(GateCheck("coverage", primary, "-", judge, None, 0.0, "fail", str(exc)))
            continue
        for partner, selector in matched:
            a, b = _slice(cand_j, selector, judge), _slice(base_j, partner, judge)
            missing = _missing_turns(a, b)
            if missing:
                shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
                checks.append(GateCheck("coverage", primary, selector, judge, None, 0.0, "fail",
                                        f"{len(missing)} baseline turns missing: {shown}",
                                        baseline_selector=partner))
            a, b = _scored(a), _scored(b)
            result = paired_compare(a, b, primary)
            low = _finite(result.ci_low)
            detail = (f"{result.n_pairs} paired turns in {result.n_clusters} scenarios, "
                      f"candidate {result.mean_a:.3f} vs baseline {result.mean_b:.3f}")
            if result.n_pairs < MIN_PAIRS or low is None:
                checks.append(GateCheck(
                    "coverage", primary, selector, judge, low, -margin, "fail",
                    f"only {result.n_pairs} paired scored turns (need {MIN_PAIRS}) to test "
                    f"the margin on {primary}; add turns or scenarios",
                    baseline_selector=partner))
            else:
                high = _finite(result.ci_high)
                half = (low if high is None else high) - result.mean_diff
                if half > margin:
                    detail += (f"; the margin {margin:.3f} is below what these turns resolve "
                               f"(±{half:.3f}) — calibrate it with `memeval gate --calibrate`")
                checks.append(GateCheck("non-inferiority", primary, selector, judge, low,
                                        -margin, "fail" if low < -margin else "pass", detail,
                                        baseline_selector=partner))
            pvalues = [_one_sided_p(a, b, m, margin) for m in secondary]
            for metric, p, adjusted in zip(secondary, pvalues, holm(pvalues), strict=True):
                status: Status = "skipped" if math.isnan(p) else \
                    ("pass" if adjusted <= ALPHA else "fail")
                checks.append(GateCheck(
                    "non-inferiority", metric, selector, judge, _finite(adjusted), ALPHA, status,
                    f"Holm-adjusted one-sided p of a drop beyond {margin:.3f} "
                    f"(raw {p:.3g}, {len(secondary)} secondary metrics)",
                    baseline_selector=partner))
    return checks


def _slice_judge(frame: pd.DataFrame, judge: str) -> pd.DataFrame:
    return frame[frame["judge"].astype(str) == judge]


def run_gate(candidate: pd.DataFrame, baseline: pd.DataFrame | None = None, *,
             margin: float = DEFAULT_MARGIN, min_precision: float | None = None,
             min_recall: float | None = None, max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
             primary: str = PRIMARY_METRIC, secondary: Sequence[str] = (),
             pairs: Sequence[tuple[str, str]] = ()) -> GateResult:
    """Every check the options ask for, on per-turn tables (see `per_turn_table`).

    Args:
        candidate: the run under test.
        baseline: the reference run; None skips non-inferiority.
        margin: how far below the baseline the interval's lower bound may reach.
        min_precision: minimum mean precision per selector and judge.
        min_recall: minimum mean recall per selector and judge.
        max_error_rate: the largest share of errored turns allowed (selector or judge).
        primary: the metric whose non-inferiority decides.
        secondary: further metrics, Holm-corrected.
        pairs: explicit (candidate selector, baseline selector) pairs.
    """
    if margin < 0:
        raise MemevalError(f"margin {margin}: must be >= 0 (it is subtracted from 0)")
    minimums = {m: v for m, v in (("precision", min_precision), ("recall", min_recall))
                if v is not None}
    checks = error_rate_checks(candidate, max_error_rate)
    checks += threshold_checks(candidate, minimums)
    if baseline is not None:
        checks += non_inferiority_checks(candidate, baseline, margin=margin, primary=primary,
                                         secondary=secondary, pairs=pairs)
    return GateResult(tuple(checks))


def gate_run(run: Path, baseline: Path | None = None, **options: Any) -> GateResult:
    """`run_gate` on a run folder (or summary.json) against a baseline made the same
    way (`memeval.provenance`)."""
    candidate = per_turn_table(run)
    reference = None if baseline is None else per_turn_table(baseline)
    if baseline is not None:
        check_runs_comparable(baseline, run, (reference, candidate))
    return run_gate(candidate, reference, **options)


__all__ = [
    "DEFAULT_MARGIN", "DEFAULT_MAX_ERROR_RATE", "GATED_METRICS", "GATE_FILE", "GateCheck",
    "GateInputError", "GateResult", "error_rate_checks", "gate_run", "non_inferiority_checks",
    "per_turn_table", "run_gate", "threshold_checks",
]
