"""The regression gate: does a run meet its thresholds and hold up against a baseline?

Every check reads the run's scored turns (`summary.json`'s `per_turn`, written by
`memeval.scoring.metrics`); the gate never re-scores, and pairs selectors by the same
rule as `memeval compare`. docs/statistics.md ("The gate") states this procedure;
`run_gate` is its one implementation. Checks, per selector × judge:

- *error rate*, candidate **and** baseline: the share of turns whose selector or
  judge failed must not exceed `max_error_rate` (default 0). An errored baseline turn
  would silently drop out of the pairs, so it fails the gate, named.
- *threshold*: a mean over scored turns must reach the minimum asked for.
- *coverage*: the candidate has every baseline turn, and at least `MIN_PAIRS` turns
  pair up on the primary metric.
- *non-inferiority*, for every gated metric (the catalog's `gated`: F1 and false
  alarm, plus `secondary`): per paired turn the gain is `sign × (candidate −
  baseline)`, signed by the metric's declared direction, and
  `stats.non_inferiority` passes when its one-sided 95 % lower bound is ≥ −margin.
  With m gated metrics each margin allows a false-failure rate of 5 %/m
  (Bonferroni), so an equivalent candidate fails the whole gate at most 5 % of the time.

The margin of each metric comes from one rule (`Margin`): `--margin` when given; else
the baseline's `calibration.json` entry for that selector × judge × metric
(`memeval calibrate`); else the uncalibrated default, `calibrate.resolvable_margin`
of the baseline's own turns. The gate fails (never passes) when every check was skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memeval.errors import MemevalError
from memeval.jsonenc import finite, json_safe
from memeval.log import GATE_FILE, INCOMPLETE_MARKER, RunFolderError, read_config
from memeval.provenance import check_runs_comparable
from memeval.scoring.catalog import CONFIDENCE, FALSE_FAILURE, GATED, PRIMARY, metric

if TYPE_CHECKING:
    import pandas as pd

    from memeval.scoring.calibrate import Calibration

DEFAULT_MAX_ERROR_RATE = 0.0
MIN_PAIRS = 10  # fewer paired turns cannot resolve any sensible margin
SHOWN_TURNS = 5  # errored or missing turns named in a message
WHOLE_RUN = "-"  # the selector and judge of a check on the run as a whole

Status = Literal["pass", "fail", "skipped"]
CheckKind = Literal["error-rate", "threshold", "non-inferiority", "coverage"]
Rule = Literal["given", "calibrated", "uncalibrated default"]


class GateInputError(MemevalError):
    """A run folder or baseline summary cannot be read as gate input."""


@dataclass(frozen=True)
class Margin:
    """How far below the baseline a gated metric may fall, and where that figure came from.

    Args:
        value: the tolerated loss, in the metric's units (≥ 0).
        rule: `given` (--margin), `calibrated` (calibration.json) or
            `uncalibrated default` (read from the baseline's own turns).
        why: one sentence for the gate's output.
    """

    value: float
    rule: Rule
    why: str


@dataclass(frozen=True)
class GateCheck:
    """One line of the gate's table.

    Args:
        kind: `error-rate`, `threshold`, `non-inferiority` or `coverage`.
        metric: the metric checked.
        selector: the candidate selector (the baseline's, for a baseline error rate).
        judge: the judge whose scores are checked.
        value: the candidate's mean (threshold), the error rate, or the one-sided
            lower bound of the gain over the baseline (non-inferiority).
        limit: the minimum asked for, the allowed error rate, or −margin.
        status: `pass`, `fail` or `skipped`.
        detail: one sentence for the table: means, pairs, turns, why skipped.
        baseline_selector: the baseline selector paired with (non-inferiority).
        rule: where the margin came from and why (non-inferiority).
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
    rule: str = ""

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
            return self.detail if self.selector == WHOLE_RUN else f"{self.detail} ({who})"
        declared = metric(self.metric)
        gain = ("candidate − baseline" if declared.direction == "higher"
                else "baseline − candidate, as lower is better")
        return (f"{declared.label} regressed against baseline {self.baseline_selector}: the "
                f"one-sided {CONFIDENCE:.0%} lower bound of the gain ({gain}) is {value}, "
                f"below the allowed {self.limit:.3f} (margin {-self.limit:.3f}, {self.rule}; "
                f"{who}; {self.detail})")


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

    def rules(self) -> list[str]:
        """One line per gated metric and selector: the margin, its rule and why."""
        seen = dict.fromkeys(f"{c.metric} ({c.selector} vs {c.baseline_selector}, {c.judge}): "
                             f"margin {-c.limit:.3f}, {c.rule}"
                             for c in self.checks if c.kind == "non-inferiority" and c.rule)
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "rules": self.rules(),
                "checks": [json_safe(asdict(c)) for c in self.checks]}

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
        table = "\n".join(fmt.format(*row).rstrip() for row in [header, *lines])
        return "\n".join([table, *(f"rule: {r}" for r in self.rules())])

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
        lines += [f"\n- rule: {r}" for r in self.rules()]
        for c in self.failures:
            lines.append(f"\n- **FAIL**: {c.message()}")
        return "\n".join(lines) + "\n"


# -- inputs -----------------------------------------------------------------------------

def per_turn_table(path: Path) -> pd.DataFrame:
    """Scored turns of a run folder or summary.json (see `memeval.scoring.compare`)."""
    from memeval.log import RunFolderError
    from memeval.scoring.compare import per_turn_table

    try:
        return per_turn_table(Path(path))
    except RunFolderError as exc:
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


def _named(turns: Sequence[str]) -> str:
    shown = ", ".join(turns[:SHOWN_TURNS])
    return shown + (" …" if len(turns) > SHOWN_TURNS else "")


def error_rate_checks(frame: pd.DataFrame, max_rate: float, *,
                      run: str = "candidate") -> list[GateCheck]:
    """Per selector × judge: the share of turns whose selector or judge failed, naming them.

    Args:
        frame: the run's per-turn table.
        max_rate: the largest share allowed.
        run: `candidate` or `baseline`, for the check's name.
    """
    checks = []
    prefix = "" if run == "candidate" else "baseline "
    for selector, judge in _groups(frame):
        part = _slice(frame, selector, judge)
        for kind in ("selector", "judge"):
            column = f"{kind}_error"
            failed = part[column].astype(bool) if column in part.columns else None
            if failed is None or failed.empty:
                continue
            rate = float(failed.mean())
            turns = [f"{s}/{t}" for s, t in zip(part.loc[failed, "scenario"],
                                                 part.loc[failed, "turn_id"], strict=True)]
            detail = f"{int(failed.sum())} of {len(failed)} turns errored"
            if turns:
                detail += f": {_named(sorted(turns))}"
            if run == "baseline" and turns:
                detail += ("; errored baseline turns would drop out of the pairs unseen — "
                           "rerun the baseline")
            checks.append(GateCheck(
                "error-rate", f"{prefix}{kind} error rate", selector, judge, rate, max_rate,
                "fail" if rate > max_rate else "pass", detail))
    return checks


def _scored(part: pd.DataFrame) -> pd.DataFrame:
    return part[part["scored"].astype(bool)] if "scored" in part.columns else part


def threshold_checks(frame: pd.DataFrame, minimums: Mapping[str, float]) -> list[GateCheck]:
    """One check per selector × judge × metric with a minimum, over scored turns."""
    import pandas as pd

    checks = []
    for selector, judge in _groups(frame):
        part = _scored(_slice(frame, selector, judge))
        for name, minimum in minimums.items():
            per_turn = (part.assign(_v=pd.to_numeric(part[name], errors="coerce"))
                        .groupby(["scenario", "turn_id"])["_v"].mean()).dropna()
            if per_turn.empty:
                checks.append(GateCheck("threshold", name, selector, judge, None, minimum,
                                        "fail", f"{name} rests on no scored turn"))
                continue
            mean = float(per_turn.mean())
            checks.append(GateCheck(
                "threshold", name, selector, judge, mean, minimum,
                "pass" if mean >= minimum else "fail", f"mean over {len(per_turn)} turns"))
    return checks


def _missing_turns(candidate: pd.DataFrame, baseline: pd.DataFrame) -> list[str]:
    have = set(zip(candidate["scenario"], candidate["turn_id"], strict=True))
    need = set(zip(baseline["scenario"], baseline["turn_id"], strict=True))
    return sorted(f"{s}/{t}" for s, t in need - have)


def margin_for(baseline: pd.DataFrame, name: str, *, half_width: float,
               given: float | None = None, calibration: Calibration | None = None,
               false_failure: float = FALSE_FAILURE) -> Margin:
    """The margin of one gated metric for one baseline selector × judge (the one rule).

    Args:
        baseline: the baseline selector's scored turns under one judge.
        name: the gated metric.
        half_width: how far the comparison's one-sided bound sits below its estimate.
        given: `--margin`, which overrides everything.
        calibration: the baseline's calibration.json entry, if any.
        false_failure: the A/A failure rate this metric may spend (5 % / gated metrics).
    """
    from scipy import stats

    from memeval.scoring.calibrate import resolvable_margin

    if given is not None:
        why = "as given by --margin"
        if calibration is not None and given < calibration.margin:
            why += (f"; below the calibrated {calibration.margin:.3f}, so equivalent runs "
                    f"fail more than {calibration.false_failure:.1%} of the time")
        return Margin(given, "given", why)
    if calibration is not None and math.isfinite(calibration.margin):
        return Margin(calibration.margin, "calibrated",
                      f"from calibration.json ({calibration.repeats} repeats, at most "
                      f"{calibration.false_failure:.1%} A/A failures)")
    suite = resolvable_margin(baseline, name, false_failure=false_failure)
    # An equal candidate's estimate strays z(1 − ff)·se below 0 at most ff of the time,
    # and its bound sits z(confidence)·se lower still: half-width × (1 + ratio of z's).
    scale = 1 + stats.norm.ppf(1 - false_failure) / stats.norm.ppf(CONFIDENCE)
    pair = round(half_width * scale, 4) if math.isfinite(half_width) else 0.0
    return Margin(max(suite, pair), "uncalibrated default",
                  f"no calibration.json entry for this selector × judge, so the larger of "
                  f"what the baseline's turn-to-turn spread resolves ({suite:.3f}) and what "
                  f"these paired turns resolve ({pair:.3f}): an equivalent candidate fails "
                  f"at most {false_failure:.1%} of the time; `memeval calibrate` on a "
                  "baseline run with --repeats measures its run-to-run noise instead")


def _non_inferiority_check(cand: pd.DataFrame, base: pd.DataFrame, name: str, *,
                           selector: str, partner: str, judge: str,
                           **rule: Any) -> GateCheck:
    """`stats.non_inferiority` of the gain on one metric; `rule` goes to `margin_for`."""
    from memeval.scoring.metrics import paired_turns
    from memeval.scoring.stats import non_inferiority

    declared = metric(name)
    if name not in cand.columns or name not in base.columns:
        return GateCheck("non-inferiority", name, selector, judge, None, 0.0, "skipped",
                         f"no {name} in the per-turn table", baseline_selector=partner)
    pairs = paired_turns(cand, base, [name]).dropna()
    gain = declared.sign * (pairs[f"{name}_a"] - pairs[f"{name}_b"]).to_numpy()
    clusters = pairs["scenario"].tolist()
    margin = margin_for(base, name, half_width=non_inferiority(gain, clusters, 0.0).half_width,
                        **rule)
    found = non_inferiority(gain, clusters, margin.value)
    low = finite(found.lower_bound)
    said = f"{margin.rule}: {margin.why}"
    detail = (f"{found.n} paired turns in {found.n_clusters} scenarios, candidate "
              f"{pairs[f'{name}_a'].mean():.3f} vs baseline {pairs[f'{name}_b'].mean():.3f} "
              f"({declared.direction} is better)")
    if found.n < MIN_PAIRS or low is None:
        why = (f"only {found.n} paired scored turns (need {MIN_PAIRS}) to test the margin on "
               f"{name} (over {declared.denominator})")
        if name == PRIMARY:  # the deciding metric untested is a failure, never a pass
            return GateCheck("coverage", name, selector, judge, low, -margin.value, "fail",
                             f"{why}; add turns or scenarios", baseline_selector=partner,
                             rule=said)
        return GateCheck("non-inferiority", name, selector, judge, low, -margin.value,
                         "skipped", why, baseline_selector=partner, rule=said)
    if not found.resolvable:
        detail += (f"; the margin {margin.value:.3f} is below what these turns resolve "
                   f"(±{found.half_width:.3f}) — calibrate it with `memeval calibrate`")
    return GateCheck("non-inferiority", name, selector, judge, low, -margin.value,
                     "fail" if low < -margin.value else "pass", detail,
                     baseline_selector=partner, rule=said)


def non_inferiority_checks(candidate: pd.DataFrame, baseline: pd.DataFrame, *,
                           margin: float | None = None, gated: Sequence[str] = GATED,
                           calibrations: Sequence[Calibration] = (),
                           pairs: Sequence[tuple[str, str]] = (),
                           max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> list[GateCheck]:
    """Paired non-inferiority of each candidate selector × judge on every gated metric,
    after the error rates of the baseline selector it is paired with."""
    from memeval.scoring.compare import pair_selectors

    checks: list[GateCheck] = []
    judges = sorted(set(candidate["judge"]) & set(baseline["judge"]))
    if not judges:
        return [GateCheck("coverage", PRIMARY, "-", "-", None, 0.0, "fail",
                          "candidate and baseline share no judge")]
    stored = {(c.selector, c.judge, c.metric): c for c in calibrations}
    share = FALSE_FAILURE / len(gated)  # Bonferroni: the whole gate fails A/A ≤ 5 %
    for judge in judges:
        cand_j, base_j = _slice_judge(candidate, judge), _slice_judge(baseline, judge)
        try:
            matched = pair_selectors(sorted(set(base_j["selector"])),
                                     sorted(set(cand_j["selector"])),
                                     [(b, c) for c, b in pairs])
        except MemevalError as exc:
            checks.append(GateCheck("coverage", PRIMARY, "-", judge, None, 0.0, "fail",
                                    str(exc)))
            continue
        for partner, selector in matched:
            a, b = _slice(cand_j, selector, judge), _slice(base_j, partner, judge)
            checks += error_rate_checks(b, max_error_rate, run="baseline")
            missing = _missing_turns(a, b)
            if missing:
                checks.append(GateCheck("coverage", PRIMARY, selector, judge, None, 0.0, "fail",
                                        f"{len(missing)} baseline turns missing: "
                                        f"{_named(missing)}", baseline_selector=partner))
            a, b = _scored(a), _scored(b)
            for name in gated:
                checks.append(_non_inferiority_check(
                    a, b, name, selector=selector, partner=partner, judge=judge, given=margin,
                    calibration=stored.get((partner, judge, name)), false_failure=share))
    return checks


def _slice_judge(frame: pd.DataFrame, judge: str) -> pd.DataFrame:
    return frame[frame["judge"].astype(str) == judge]


def gated_metrics(secondary: Sequence[str] = ()) -> tuple[str, ...]:
    """The default gated metrics (catalog) plus any `--secondary`, each named once."""
    for name in secondary:
        declared = metric(name)
        if not declared.per_turn or declared.kind == "count":
            raise MemevalError(f"--secondary {name}: a {declared.kind} cannot be gated; "
                               "gate a per-turn ratio or proportion")
    return tuple(dict.fromkeys([*GATED, *secondary]))


def run_gate(candidate: pd.DataFrame, baseline: pd.DataFrame | None = None, *,
             margin: float | None = None, min_precision: float | None = None,
             min_recall: float | None = None, max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
             secondary: Sequence[str] = (), calibrations: Sequence[Calibration] = (),
             pairs: Sequence[tuple[str, str]] = ()) -> GateResult:
    """Every check the options ask for, on per-turn tables (see `per_turn_table`).

    Args:
        candidate: the run under test.
        baseline: the reference run; None skips the baseline's checks.
        margin: one margin for every gated metric; None applies the rule of `margin_for`.
        min_precision: minimum mean precision per selector and judge.
        min_recall: minimum mean recall per selector and judge.
        max_error_rate: the largest share of errored turns allowed (selector or judge),
            in the candidate and in the baseline.
        secondary: metrics gated on top of the catalog's default ones.
        calibrations: the baseline's calibration.json entries.
        pairs: explicit (candidate selector, baseline selector) pairs.
    """
    if margin is not None and margin < 0:
        raise MemevalError(f"margin {margin}: must be >= 0 (it is subtracted from 0)")
    minimums = {m: v for m, v in (("precision", min_precision), ("recall", min_recall))
                if v is not None}
    checks = error_rate_checks(candidate, max_error_rate)
    checks += threshold_checks(candidate, minimums)
    if baseline is not None:
        checks += non_inferiority_checks(candidate, baseline, margin=margin,
                                         gated=gated_metrics(secondary),
                                         calibrations=calibrations, pairs=pairs,
                                         max_error_rate=max_error_rate)
    return GateResult(tuple(checks))


def completeness_checks(run: Path, frame: pd.DataFrame) -> list[GateCheck]:
    """A run that stopped before it finished (`RUN_INCOMPLETE`), or whose rows cover
    fewer turns than its plan (`config.json`), fails whatever else is checked: its
    scores rest on part of the picture."""
    folder = run if run.is_dir() else run.parent
    checks = []
    if (folder / INCOMPLETE_MARKER).exists():
        checks.append(GateCheck(
            "coverage", "run complete", WHOLE_RUN, WHOLE_RUN, None, 0.0, "fail",
            f"{folder} is marked {INCOMPLETE_MARKER}: the run stopped before it finished, "
            "so its scores rest on part of its turns; rerun its command (it resumes), "
            "then gate"))
    try:
        planned = (read_config(folder).get("plan") or {}).get("rows")
    except RunFolderError:  # a summary.json on its own, or a run before plans
        planned = None
    if isinstance(planned, int) and planned > 0:
        keys = [c for c in ("scenario", "turn_id", "selector", "repeat") if c in frame.columns]
        held = len(frame.drop_duplicates(keys)) if keys and not frame.empty else 0
        checks.append(GateCheck(
            "coverage", "planned turns", WHOLE_RUN, WHOLE_RUN, float(held), float(planned),
            "pass" if held >= planned else "fail",
            f"{held} of the {planned} turns its plan holds" + (
                "" if held >= planned else f"; {folder} does not cover its plan: rerun its "
                "command to complete it, then gate")))
    return checks


def gate_run(run: Path, baseline: Path | None = None, **options: Any) -> GateResult:
    """`run_gate` on a run folder (or summary.json) against a baseline made the same
    way (`memeval.provenance`), reading the baseline's calibration.json when one lies
    beside it; the run must be complete (see `completeness_checks`)."""
    from memeval.scoring.calibrate import load_calibrations

    candidate = per_turn_table(run)
    reference = None if baseline is None else per_turn_table(baseline)
    if baseline is not None:
        check_runs_comparable(baseline, run, (reference, candidate))
    calibrations = () if baseline is None else load_calibrations(Path(baseline))
    result = run_gate(candidate, reference, calibrations=calibrations, **options)
    return GateResult((*completeness_checks(Path(run), candidate), *result.checks))


__all__ = [
    "DEFAULT_MAX_ERROR_RATE", "GATE_FILE", "GateCheck", "GateInputError", "GateResult", "Margin",
    "completeness_checks", "error_rate_checks", "gate_run", "gated_metrics", "margin_for",
    "non_inferiority_checks", "per_turn_table", "run_gate", "threshold_checks",
]
