"""Selection quality per turn, aggregated with confidence intervals, and paired comparisons.

Per turn (`score_turn`), against the gold labels:

- *hits*: distinct selected keys labelled `relevant`; *false positives*: distinct
  selected keys that are neither `relevant` nor `acceptable`. An acceptable memory is
  harmless: it is neither a hit nor a false positive, and counts in no denominator.
  A key surfacing twice (the duplicate quirk) is scored once; `duplicates` counts
  the extra copies.
- *precision* = hits / (hits + false positives).
- *recall* = min(hits, R) / R with R = min(|relevant|, 5): the session surfaces at
  most five memories, so a turn with eight relevant ones is fully served by five.
- *F1*: harmonic mean; 0 when recall is 0.
- *exact match*: recall 1 and no false positive (acceptable extras allowed).

Empty selections and empty labels (the choices, stated once):

| relevant | selected (non-acceptable) | precision | recall | outcome |
|---|---|---|---|---|
| none | nothing | 1 | 1 | `abstained` (a correct abstention) |
| none | something | 0 | 1 | `false_alarm` (nothing was missed, all of it is noise) |
| some | nothing | NaN (undefined) | 0 | `miss` |
| some | something | hits/(hits+FP) | as above | `exact` / `partial` / `miss` |

Undefined precision is NaN, never 0 or 1: a mean over turns then skips it, and
`precision_n` says how many turns it rests on. A selector error is scored as the
(empty) selection it produced, so failing never looks better than abstaining; the
`errored` column tells the two apart.

Aggregates collapse repeats to a per-turn mean first, then bootstrap over turns
(scipy's percentile bootstrap, seeded), so repeats never count as extra evidence.
"""

from __future__ import annotations

import inspect
import itertools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from memeval.errors import MemevalError

CAP = 5  # memories surfaced per turn at most (SPEC §2.6); caps the recall denominator
CONFIDENCE = 0.95
N_RESAMPLES = 2000  # percentile bootstrap: ~±0.005 on a 95 % bound, fast on 2 cores
POWER = 0.8
SEED = 0

Outcome = Literal["abstained", "false_alarm", "miss", "partial", "exact"]

METRICS: tuple[str, ...] = (
    "precision", "recall", "f1", "exact_match", "false_positives", "surfaced_bytes",
)
ID_COLUMNS: tuple[str, ...] = ("scenario", "turn_id", "category", "selector", "repeat")
REQUIRED_COLUMNS: tuple[str, ...] = ("turn_id", "selected", "relevant")
# Defaults for optional input columns; `selected_keys` is accepted for `selected`.
_DEFAULTS: dict[str, Any] = {
    "scenario": "", "category": "uncategorized", "selector": "", "acceptable": (),
    "surfaced_bytes": 0, "error": None, "repeat": 0,
}


@dataclass(frozen=True)
class TurnScore:
    """How well one selection served one turn (see the module doc for the rules).

    Args:
        precision: hits / (hits + false positives); NaN when undefined.
        recall: capped recall in [0, 1].
        f1: harmonic mean of the two; 0 when recall is 0.
        exact_match: every (capped) relevant memory and no false positive.
        hits: distinct relevant memories selected.
        false_positives: distinct selected memories that are neither relevant nor acceptable.
        acceptable_selected: distinct acceptable memories selected (neither hit nor FP).
        n_selected: distinct memories selected.
        n_relevant: |relevant|, before the cap.
        duplicates: selected entries beyond the first copy of a key.
        outcome: `abstained`, `false_alarm`, `miss`, `partial` or `exact`.
    """

    precision: float
    recall: float
    f1: float
    exact_match: bool
    hits: int
    false_positives: int
    acceptable_selected: int
    n_selected: int
    n_relevant: int
    duplicates: int
    outcome: Outcome

    @property
    def miss(self) -> bool:
        return self.outcome == "miss"


def _key_set(value: Any, field: str) -> frozenset[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return frozenset()
    if isinstance(value, str):
        raise MemevalError(f"metrics: {field} must be a list of memory keys, got the string "
                           f"{value!r}; wrap it in a list")
    return frozenset(str(v) for v in value)


def _label_sets(labels: Any) -> tuple[frozenset[str], frozenset[str]]:
    if isinstance(labels, Mapping):
        return (_key_set(labels.get("relevant"), "relevant"),
                _key_set(labels.get("acceptable"), "acceptable"))
    return (_key_set(getattr(labels, "relevant", None), "relevant"),
            _key_set(getattr(labels, "acceptable", None), "acceptable"))


def score_turn(selected: Sequence[str], labels: Any) -> TurnScore:
    """Score one turn's selection against its gold labels.

    Args:
        selected: memory keys that surfaced, in order (duplicates allowed).
        labels: a `GoldLabels`, or any mapping/object with `relevant` and `acceptable`.
    """
    relevant, acceptable = _label_sets(labels)
    if isinstance(selected, str):
        raise MemevalError(f"metrics: selected must be a list of memory keys, got {selected!r}")
    picked = list(dict.fromkeys(str(k) for k in selected))
    chosen = set(picked)
    hits = len(chosen & relevant)
    # A key labelled both relevant and acceptable is relevant (GoldLabels.verdict_for).
    ok_extra = len((chosen & acceptable) - relevant)
    false_pos = len(chosen - relevant - acceptable)
    if relevant:
        needed = min(len(relevant), CAP)
        recall = min(hits, needed) / needed
        precision = hits / (hits + false_pos) if hits + false_pos else math.nan
    else:
        recall = 1.0
        precision = 0.0 if false_pos else 1.0
    f1 = 0.0 if recall == 0 or precision == 0 else 2 * precision * recall / (precision + recall)
    exact = recall == 1.0 and false_pos == 0
    outcome: Outcome
    if not relevant:
        outcome = "false_alarm" if false_pos else "abstained"
    elif hits == 0:
        outcome = "miss"
    else:
        outcome = "exact" if exact else "partial"
    return TurnScore(precision=precision, recall=recall, f1=f1, exact_match=exact, hits=hits,
                     false_positives=false_pos, acceptable_selected=ok_extra,
                     n_selected=len(picked), n_relevant=len(relevant),
                     duplicates=len(selected) - len(picked), outcome=outcome)


# -- per turn ---------------------------------------------------------------------------

def _as_records(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> list[dict[str, Any]]:
    if isinstance(rows, pd.DataFrame):
        return rows.to_dict(orient="records")  # type: ignore[return-value]
    return [dict(r) for r in rows]


def per_turn_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """One scored row per input row (turn × selector × repeat).

    Args:
        rows: dicts or a DataFrame with `turn_id`, `selected` (or `selected_keys`) and
            `relevant`, and optionally `scenario`, `category`, `selector`,
            `acceptable`, `surfaced_bytes`, `error`, `repeat`; other columns are kept.

    Returns:
        The input columns (key lists as tuples) plus `errored` and every `TurnScore` field.
    """
    records = _as_records(rows)
    out = []
    for index, raw in enumerate(records):
        row = {**_DEFAULTS, **raw}
        if "selected" not in raw and "selected_keys" in raw:
            row["selected"] = row.pop("selected_keys")
        missing = [c for c in REQUIRED_COLUMNS if c not in row]
        if missing:
            raise MemevalError(f"metrics: row {index} lacks {', '.join(missing)}; every row "
                               f"needs {', '.join(REQUIRED_COLUMNS)}")
        selected = () if row["selected"] is None else tuple(str(k) for k in row["selected"])
        score = score_turn(selected, row)
        error = row["error"]
        errored = error is not None and not (isinstance(error, float) and math.isnan(error))
        row.update(selected=selected, relevant=tuple(sorted(_key_set(row["relevant"], "relevant"))),
                   acceptable=tuple(sorted(_key_set(row["acceptable"], "acceptable"))),
                   errored=errored, **asdict(score))
        out.append(row)
    frame = pd.DataFrame(out)
    if frame.empty:
        columns = [*ID_COLUMNS, "selected", "relevant", "acceptable", "surfaced_bytes", "error",
                   "errored", *TurnScore.__dataclass_fields__]
        return pd.DataFrame(columns=columns)
    frame["exact_match"] = frame["exact_match"].astype(bool)
    frame["surfaced_bytes"] = pd.to_numeric(frame["surfaced_bytes"]).fillna(0)
    return frame


# -- bootstrap ------------------------------------------------------------------------

_RNG_KEYWORD = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters \
    else "random_state"  # scipy >= 1.15 renamed the seed argument


def bootstrap_seed(seed: int) -> dict[str, np.random.Generator]:
    """The keyword that seeds `scipy.stats.bootstrap` on this scipy version."""
    return {_RNG_KEYWORD: np.random.default_rng(seed)}


def mean_ci(values: Sequence[float] | np.ndarray, *, confidence: float = CONFIDENCE,
            n_resamples: int = N_RESAMPLES, seed: int = SEED) -> tuple[float, float, float]:
    """Mean and percentile-bootstrap CI of the non-NaN values: `(mean, low, high)`.

    Fewer than two values give a NaN interval: one turn says nothing about spread.
    """
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(np.mean(data))
    if data.size < 2:
        return mean, math.nan, math.nan
    if np.all(data == data[0]):
        return mean, mean, mean  # no spread to resample; scipy would warn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap((data,), np.mean, confidence_level=confidence,
                                 n_resamples=n_resamples, method="percentile",
                                 vectorized=True, **bootstrap_seed(seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    # For tiny skewed samples (or float rounding on near-constant data) a percentile
    # bound can miss its own estimate by a hair; widen it so the CI holds the mean.
    return mean, min(low, mean), max(high, mean)


def _per_turn(frame: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """Collapse repeats: one row per turn, each metric the mean over its repeats."""
    # A turn is one selector's run of one scenario turn, whatever the grouping.
    identity = [c for c in ("selector", "scenario", "turn_id") if c in frame.columns]
    group = [*keys, *(c for c in identity if c not in keys)]
    numeric = frame[[*group, *metrics, "errored"]].copy()
    for m in [*metrics, "errored"]:
        numeric[m] = numeric[m].astype(float)
    return numeric.groupby(group, dropna=False, sort=True).mean().reset_index()


def aggregate(frame: pd.DataFrame, by: Sequence[str] = ("selector", "category", "scenario"), *,
              metrics: Sequence[str] = METRICS, confidence: float = CONFIDENCE,
              n_resamples: int = N_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """Mean of each metric per group, with a bootstrap CI over the group's turns.

    Args:
        frame: a `per_turn_frame`.
        by: grouping columns; `("selector",)` gives one row per selector.
        metrics: which metric columns to summarise.
        confidence: the CI's coverage.
        n_resamples: bootstrap resamples per interval.
        seed: makes the intervals reproducible.

    Returns:
        One row per group: the `by` columns, `n_turns`, `error_rate`, and for each
        metric `<m>`, `<m>_ci_low`, `<m>_ci_high`, `<m>_n` (turns where it is defined).
    """
    by = list(by)
    unknown = [c for c in [*by, *metrics] if c not in frame.columns]
    if unknown:
        raise MemevalError(f"aggregate: no column {', '.join(unknown)} in the frame; "
                           f"it has {', '.join(map(str, frame.columns))}")
    columns = [*by, "n_turns", "error_rate"]
    for m in metrics:
        columns += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m}_n"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    turns = _per_turn(frame, by, metrics)
    out = []
    grouped = turns.groupby(by, dropna=False, sort=True) if by else [((), turns)]
    for key, group in grouped:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key, strict=True))
        row["n_turns"] = len(group)
        row["error_rate"] = float(group["errored"].mean())
        for m in metrics:
            values = group[m].to_numpy(dtype=float)
            mean, low, high = mean_ci(values, confidence=confidence,
                                      n_resamples=n_resamples, seed=seed)
            row.update({m: mean, f"{m}_ci_low": low, f"{m}_ci_high": high,
                        f"{m}_n": int(np.count_nonzero(~np.isnan(values)))})
        out.append(row)
    return pd.DataFrame(out, columns=columns)


# -- paired comparison ----------------------------------------------------------------

@dataclass(frozen=True)
class PairedComparison:
    """Selector A against selector B on the turns both ran.

    Args:
        metric: the compared metric.
        selector_a: A's name (from the frame's `selector` column).
        selector_b: B's name.
        n_pairs: turns with the metric defined for both.
        mean_a: A's mean over those turns.
        mean_b: B's mean over those turns.
        mean_diff: mean of A − B per turn.
        ci_low: lower bound of the paired bootstrap CI of `mean_diff`.
        ci_high: upper bound.
        sd_diff: standard deviation of the per-turn differences.
        mde: the smallest |difference| a paired t-test on `n_pairs` turns detects
            with `power` at the CI's level; NaN below two pairs.
        power: the power `mde` is computed for.
        underpowered: the reported difference is below `mde` (or too few pairs).
        a_only: turns exact-matched by A but not B (McNemar's discordant pair).
        b_only: turns exact-matched by B but not A.
        mcnemar_p: exact two-sided McNemar p-value (binomial test on the discordant turns).
        unmatched_a: A's turns absent from B (not compared).
        unmatched_b: B's turns absent from A.
        warning: a sentence for the report when `underpowered`, else None.
    """

    metric: str
    selector_a: str
    selector_b: str
    n_pairs: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    sd_diff: float
    mde: float
    power: float
    underpowered: bool
    a_only: int
    b_only: int
    mcnemar_p: float
    unmatched_a: int
    unmatched_b: int
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def minimal_detectable_difference(sd: float, n: int, *, alpha: float = 1 - CONFIDENCE,
                                  power: float = POWER) -> float:
    """Smallest mean difference a two-sided paired t-test on `n` pairs finds with `power`.

    Solved on the noncentral t distribution, not the normal shortcut, because
    memeval's suites are small (tens of turns) where the two differ.
    """
    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 0.0
    df = n - 1
    t_crit = stats.t.ppf(1 - alpha / 2, df)

    def shortfall(effect: float) -> float:
        nc = effect * math.sqrt(n)
        achieved = stats.nct.sf(t_crit, df, nc) + stats.nct.cdf(-t_crit, df, nc)
        # Far in the tail scipy's nct can return NaN where the power is simply ~1.
        return float(np.nan_to_num(achieved, nan=1.0)) - power

    # Four times the normal-approximation answer always brackets the root.
    upper = 4 * (t_crit + stats.norm.ppf(power)) / math.sqrt(n)
    effect = optimize.brentq(shortfall, 0.0, upper)  # standardized effect size d
    return float(effect * sd)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: are discordant turns split unevenly between A and B?"""
    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)


def _selector_name(frame: pd.DataFrame) -> str:
    if "selector" not in frame.columns or frame.empty:
        return ""
    names = sorted({str(s) for s in frame["selector"]})
    return names[0] if len(names) == 1 else ",".join(names)


def paired_compare(frame_a: pd.DataFrame, frame_b: pd.DataFrame, metric: str = "f1", *,
                   confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                   seed: int = SEED, power: float = POWER) -> PairedComparison:
    """Compare two selectors on the same turns.

    Turns are matched on (`scenario`, `turn_id`); repeats are averaged per turn first.
    The CI resamples turns, keeping each turn's pair together (a paired bootstrap);
    McNemar uses per-turn exact match (majority of repeats; a tie is not a match).

    Args:
        frame_a: `per_turn_frame` of selector A.
        frame_b: `per_turn_frame` of selector B.
        metric: the metric to compare (`f1`, `recall`, `precision`, ...).
        confidence: the CI's coverage; also sets the test level of `mde`.
        n_resamples: bootstrap resamples.
        seed: makes the CI reproducible.
        power: for the minimal detectable difference.
    """
    for name, frame in (("A", frame_a), ("B", frame_b)):
        missing = [c for c in ("scenario", "turn_id", metric, "exact_match")
                   if c not in frame.columns]
        if missing and not frame.empty:
            raise MemevalError(f"paired_compare: frame {name} lacks {', '.join(missing)}; "
                               "pass per_turn_frame(...) output")
    keys = ["scenario", "turn_id"]
    metrics = sorted({metric, "exact_match"})

    def turns(frame: pd.DataFrame) -> pd.DataFrame:
        if frame.empty:
            return pd.DataFrame(columns=[*keys, *metrics])
        table = frame[[*keys, *metrics]].copy()
        for m in metrics:
            table[m] = table[m].astype(float)
        return table.groupby(keys, sort=True).mean().reset_index()

    ta, tb = turns(frame_a), turns(frame_b)
    joined = ta.merge(tb, on=keys, how="inner", suffixes=("_a", "_b"))
    a_keys = set(map(tuple, ta[keys].to_numpy().tolist()))
    b_keys = set(map(tuple, tb[keys].to_numpy().tolist()))
    col_a = f"{metric}_a" if metric != "exact_match" else "exact_match_a"
    col_b = f"{metric}_b" if metric != "exact_match" else "exact_match_b"
    values_a = joined[col_a].to_numpy(dtype=float)
    values_b = joined[col_b].to_numpy(dtype=float)
    defined = ~(np.isnan(values_a) | np.isnan(values_b))
    diffs = values_a[defined] - values_b[defined]
    n = int(diffs.size)
    mean_diff, low, high = mean_ci(diffs, confidence=confidence, n_resamples=n_resamples,
                                   seed=seed)
    sd = float(np.std(diffs, ddof=1)) if n >= 2 else math.nan
    mde = minimal_detectable_difference(sd, n, alpha=1 - confidence, power=power)
    underpowered = n < 2 or math.isnan(mde) or abs(mean_diff) < mde
    exact_a = joined["exact_match_a"].to_numpy(dtype=float) > 0.5
    exact_b = joined["exact_match_b"].to_numpy(dtype=float) > 0.5
    a_only = int(np.sum(exact_a & ~exact_b))
    b_only = int(np.sum(exact_b & ~exact_a))
    warning = None
    if underpowered:
        if n < 2:
            warning = (f"only {n} paired turn(s) for {metric}: too few to resolve any "
                       "difference; add turns or scenarios")
        else:
            warning = (f"{n} paired turns resolve differences of at least {mde:.3f} in "
                       f"{metric} at {power:.0%} power; the observed {mean_diff:+.3f} is "
                       "smaller, so it may be noise")
    return PairedComparison(
        metric=metric, selector_a=_selector_name(frame_a), selector_b=_selector_name(frame_b),
        n_pairs=n,
        mean_a=float(np.mean(values_a[defined])) if n else math.nan,
        mean_b=float(np.mean(values_b[defined])) if n else math.nan,
        mean_diff=mean_diff, ci_low=low, ci_high=high, sd_diff=sd, mde=mde, power=power,
        underpowered=underpowered, a_only=a_only, b_only=b_only,
        mcnemar_p=mcnemar_exact(a_only, b_only),
        unmatched_a=len(a_keys - b_keys), unmatched_b=len(b_keys - a_keys), warning=warning,
    )


# -- repeats ----------------------------------------------------------------------------

def repeat_summary(frame: pd.DataFrame, *, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Per turn and selector over its repeats: mean metrics, flip rate and pass-all.

    `flip_rate` is the share of consecutive repeats (in `repeat` order) whose selected
    *set* differs from the one before: 0 is a stable selector, 1 changes every time,
    NaN means a single repeat (no evidence either way). Order within a selection is
    ignored, because the session surfaces a set.

    Returns:
        Columns `selector`, `scenario`, `turn_id`, `n_repeats`, `distinct_sets`,
        `flip_rate`, `pass_all` (every repeat exact-matched) and the metric means.
    """
    keys = ["selector", "scenario", "turn_id"]
    columns = [*keys, "n_repeats", "distinct_sets", "flip_rate", "pass_all", *metrics]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for key, group in frame.sort_values("repeat").groupby(keys, sort=True, dropna=False):
        sets = [frozenset(s) for s in group["selected"]]
        flips = sum(1 for x, y in itertools.pairwise(sets) if x != y)
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(n_repeats=len(sets), distinct_sets=len(set(sets)),
                   flip_rate=flips / (len(sets) - 1) if len(sets) > 1 else math.nan,
                   pass_all=bool(group["exact_match"].astype(bool).all()))
        for m in metrics:
            row[m] = float(np.nanmean(group[m].to_numpy(dtype=float))) \
                if group[m].notna().any() else math.nan
        out.append(row)
    return pd.DataFrame(out, columns=columns)


def pass_hat_k(frame: pd.DataFrame, *, k_max: int | None = None,
               success: str = "exact_match") -> pd.DataFrame:
    """pass^k per selector: the chance that k independent repeats of a turn all succeed.

    Per turn with n repeats of which c succeeded, the unbiased estimate is
    C(c, k) / C(n, k); the selector's pass^k is its mean over turns. pass^1 is the
    plain success rate; a falling curve means the selector is right only sometimes.

    Args:
        frame: a `per_turn_frame` with repeats.
        k_max: the largest k (default: the fewest repeats any turn has).
        success: the boolean column that means a repeat succeeded.

    Returns:
        One row per selector: `selector`, `n_turns`, then `pass^1` … `pass^k_max`.
    """
    if frame.empty:
        return pd.DataFrame(columns=["selector", "n_turns"])
    counts = (frame.assign(_ok=frame[success].astype(bool))
              .groupby(["selector", "scenario", "turn_id"], sort=True)["_ok"]
              .agg(["sum", "count"]).reset_index())
    largest = int(counts["count"].min()) if k_max is None else k_max
    if largest < 1 or largest > int(counts["count"].min()):
        raise MemevalError(f"pass_hat_k: k_max={k_max} needs that many repeats of every turn; "
                           f"the fewest is {int(counts['count'].min())}")
    rows = []
    for selector, group in counts.groupby("selector", sort=True):
        row: dict[str, Any] = {"selector": selector, "n_turns": len(group)}
        c, n = group["sum"].to_numpy(), group["count"].to_numpy()
        for k in range(1, largest + 1):
            row[f"pass^{k}"] = float(np.mean(special.comb(c, k) / special.comb(n, k)))
        rows.append(row)
    return pd.DataFrame(rows)
