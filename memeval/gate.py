"""The regression gate: does a run meet its thresholds and hold up against a baseline?

Two kinds of checks, both on a run's per-turn scores (results.jsonl scored by
`memeval.summary.scored_frame`, or the `per_turn` table of a summary.json):

- *threshold*: a selector's mean of a metric (per judge) must be at least the
  minimum asked for. The mean, not a CI bound, so the number in the message is the
  one in the report.
- *non-inferiority*: per selector and judge, the paired 95 % bootstrap CI of
  candidate − baseline over the turns both ran (matched on scenario and turn id,
  repeats averaged) must have its lower bound at or above −margin. A candidate
  selector with no same-named baseline selector is paired with the baseline's only
  selector under that judge, when there is exactly one: that is how a prompt change
  (`claude?prompt=a` → `claude?prompt=b`) is gated.

A metric that is undefined (no turn defines it, e.g. recall under a judge that did
not grade candidates) is reported as `skipped`, never as a pass or a failure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memeval.errors import MemevalError

if TYPE_CHECKING:
    import pandas as pd

# pandas and the metrics (scipy) load inside the functions that need them: the CLI
# imports every command module at start, and `memeval --help` should not wait for them.
from memeval.results import RESULTS_FILE, SUMMARY_FILE, read_results

DEFAULT_MARGIN = 0.03  # a drop smaller than this is within what the suite can resolve
GATED_METRICS: tuple[str, ...] = ("precision", "recall", "f1")
GATE_FILE = "gate.json"

Status = Literal["pass", "fail", "skipped"]
CheckKind = Literal["threshold", "non-inferiority"]


class GateInputError(MemevalError):
    """A run folder or baseline summary cannot be read as gate input."""


@dataclass(frozen=True)
class GateCheck:
    """One line of the gate's table.

    Args:
        kind: `threshold` or `non-inferiority`.
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
        return (f"{self.metric} regressed against baseline {self.baseline_selector}: the lower "
                f"bound of the 95% CI of candidate − baseline is {value}, below the allowed "
                f"{self.limit:.3f} (margin {-self.limit:.3f}; {who}; {self.detail})")


@dataclass(frozen=True)
class GateResult:
    """Every check of a gate run; `passed` when none failed."""

    checks: tuple[GateCheck, ...]

    @property
    def passed(self) -> bool:
        return not any(c.failed for c in self.checks)

    @property
    def failures(self) -> tuple[GateCheck, ...]:
        return tuple(c for c in self.checks if c.failed)

    def to_dict(self) -> dict[str, Any]:
        from memeval.summary import _clean  # JSON has no NaN; summary pulls in the judges

        return {"passed": self.passed, "checks": [_clean(asdict(c)) for c in self.checks]}

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


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# -- inputs -----------------------------------------------------------------------------

def per_turn_table(path: Path) -> pd.DataFrame:
    """Per-turn scores of a run folder or a summary.json.

    A folder's results.jsonl is the truth (scored as the summary scores it); without
    it, the `per_turn` table of its summary.json is used.
    """
    import pandas as pd

    from memeval.summary import scored_frame

    if path.is_dir():
        results = path / RESULTS_FILE
        if results.exists():
            return scored_frame(read_results(results))
        path = path / SUMMARY_FILE
    summary = load_summary(path)
    rows = summary.get("per_turn")
    if not isinstance(rows, list):
        raise GateInputError(f"{path}: no 'per_turn' table; it is not a memeval summary.json "
                             "(write one with `memeval run` or the pytest plugin)")
    return pd.DataFrame(rows)


def load_summary(path: Path) -> dict[str, Any]:
    """A summary.json (or the one inside a run folder), with errors that name the file."""
    if path.is_dir():
        path = path / SUMMARY_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateInputError(f"{path}: not found; pass a run folder or its summary.json") \
            from None
    except (OSError, json.JSONDecodeError) as exc:
        raise GateInputError(f"{path}: not readable as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise GateInputError(f"{path}: expected a JSON object (a memeval summary.json)")
    return data


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


def threshold_checks(frame: pd.DataFrame, minimums: Mapping[str, float]) -> list[GateCheck]:
    """One check per selector × judge × metric with a minimum."""
    import pandas as pd

    checks = []
    for selector, judge in _groups(frame):
        part = _slice(frame, selector, judge)
        # Repeats count once per turn, as in the summary's aggregates.
        for metric, minimum in minimums.items():
            per_turn = (part.assign(_v=pd.to_numeric(part[metric], errors="coerce"))
                        .groupby(["scenario", "turn_id"])["_v"].mean())
            defined = per_turn.dropna()
            if defined.empty:
                checks.append(GateCheck("threshold", metric, selector, judge, None, minimum,
                                        "skipped", f"{metric} is undefined on every turn"))
                continue
            mean = float(defined.mean())
            checks.append(GateCheck(
                "threshold", metric, selector, judge, mean, minimum,
                "pass" if mean >= minimum else "fail", f"mean over {len(defined)} turns"))
    return checks


def _baseline_for(selector: str, judge: str, baseline: pd.DataFrame) -> str | None:
    names = sorted({s for s, j in _groups(baseline) if j == judge})
    if selector in names:
        return selector
    return names[0] if len(names) == 1 else None


def non_inferiority_checks(candidate: pd.DataFrame, baseline: pd.DataFrame, *,
                           margin: float = DEFAULT_MARGIN,
                           metrics: Sequence[str] = GATED_METRICS) -> list[GateCheck]:
    """Paired non-inferiority of each candidate selector × judge against the baseline."""
    from memeval.metrics import paired_compare

    checks = []
    for selector, judge in _groups(candidate):
        partner = _baseline_for(selector, judge, baseline)
        for metric in metrics:
            if partner is None:
                checks.append(GateCheck(
                    "non-inferiority", metric, selector, judge, None, -margin, "skipped",
                    f"baseline has no selector {selector!r} under judge {judge!r}"))
                continue
            a = _numeric(_slice(candidate, selector, judge), metric)
            b = _numeric(_slice(baseline, partner, judge), metric)
            result = paired_compare(a, b, metric)
            detail = (f"{result.n_pairs} paired turns, candidate {result.mean_a:.3f} vs "
                      f"baseline {result.mean_b:.3f}") if result.n_pairs else "no paired turns"
            low = _finite(result.ci_low)
            if result.n_pairs == 0:
                status: Status = "skipped"
            elif low is None:  # one pair: no interval; judge the point difference
                low = _finite(result.mean_diff)
                status = "fail" if low is not None and low < -margin else "pass"
                detail += " (one pair: no CI)"
            else:
                status = "fail" if low < -margin else "pass"
            checks.append(GateCheck("non-inferiority", metric, selector, judge, low, -margin,
                                    status, detail, baseline_selector=partner))
    return checks


def _numeric(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """summary.json stores undefined scores as null; paired_compare wants floats."""
    import pandas as pd

    out = frame.copy()
    for column in (metric, "exact_match"):
        out[column] = pd.to_numeric(out[column], errors="coerce").astype(float)
    return out


def run_gate(candidate: pd.DataFrame, baseline: pd.DataFrame | None = None, *,
             margin: float = DEFAULT_MARGIN, min_precision: float | None = None,
             min_recall: float | None = None,
             metrics: Sequence[str] = GATED_METRICS) -> GateResult:
    """Every check the options ask for, on per-turn tables (see `per_turn_table`).

    Args:
        candidate: the run under test.
        baseline: the reference run; None skips non-inferiority.
        margin: how far below the baseline the CI's lower bound may reach.
        min_precision: minimum mean precision per selector and judge.
        min_recall: minimum mean recall per selector and judge.
        metrics: metrics checked for non-inferiority.
    """
    if margin < 0:
        raise MemevalError(f"margin {margin}: must be >= 0 (it is subtracted from 0)")
    minimums = {m: v for m, v in (("precision", min_precision), ("recall", min_recall))
                if v is not None}
    checks = threshold_checks(candidate, minimums)
    if baseline is not None:
        checks += non_inferiority_checks(candidate, baseline, margin=margin, metrics=metrics)
    return GateResult(tuple(checks))


def gate_run(run: Path, baseline: Path | None = None, **options: Any) -> GateResult:
    """`run_gate` on a run folder (or summary.json) against a baseline summary.json."""
    return run_gate(per_turn_table(run),
                    None if baseline is None else per_turn_table(baseline), **options)


__all__ = [
    "DEFAULT_MARGIN", "GATED_METRICS", "GATE_FILE", "GateCheck", "GateInputError",
    "GateResult", "gate_run", "load_summary", "non_inferiority_checks", "per_turn_table",
    "run_gate", "threshold_checks",
]
