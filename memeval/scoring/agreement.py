"""How far two judges agree, verdict by verdict (usually the Claude judge against gold).

A model judge is only worth its cost where it agrees with the labels; Cohen's κ
corrects raw agreement for what two judges would share by chance (with most
memories irrelevant, "always irrelevant" already agrees a lot). The interval
resamples *turns*, not verdicts, because the verdicts of one turn share a query and
are not independent.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from memeval.errors import MemevalError
from memeval.judges.base import Judgement
from memeval.scoring.catalog import CONFIDENCE

if TYPE_CHECKING:  # pandas and scipy load on first use: every row read imports this package
    import pandas as pd

CATEGORIES: tuple[str, ...] = ("relevant", "acceptable", "irrelevant")  # unscored is left out
N_RESAMPLES = 2000
SEED = 0

Level = Literal["selected", "candidates"]


@dataclass(frozen=True)
class Agreement:
    """Agreement of judge A and judge B over the verdicts both gave.

    Args:
        judge_a: A's name.
        judge_b: B's name.
        level: `selected` (verdicts on surfaced memories) or `candidates`.
        n: verdict pairs compared.
        n_turns: turns those pairs come from.
        n_excluded: pairs left out because one side was `unscored` or missing.
        observed: share of pairs with the same verdict.
        kappa: Cohen's κ; NaN when chance agreement is 1 (both judges used one and
            the same verdict throughout, so κ is undefined; `observed` is then 1).
        kappa_ci_low: lower bound of the turn-level bootstrap CI of κ.
        kappa_ci_high: upper bound.
        observed_ci_low: lower bound of the CI of `observed`.
        observed_ci_high: upper bound.
        confusion: counts, rows A's verdict, columns B's, over `CATEGORIES`.
        selector: whose picks were graded, when the pairs come from one selector.
        n_clusters: units the interval resamples (scenarios when given, else turns).
    """

    judge_a: str
    judge_b: str
    level: Level
    n: int
    n_turns: int
    n_excluded: int
    observed: float
    kappa: float
    kappa_ci_low: float
    kappa_ci_high: float
    observed_ci_low: float
    observed_ci_high: float
    confusion: pd.DataFrame
    selector: str | None = None
    n_clusters: int = 0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the confusion table as nested {a_verdict: {b_verdict: count}}."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "confusion"}
        out["confusion"] = {str(r): {str(c): int(v) for c, v in row.items()}
                            for r, row in self.confusion.iterrows()}
        return out


def _confusion_counts(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k)


def cohens_kappa(a: Sequence[str] | np.ndarray, b: Sequence[str] | np.ndarray,
                 categories: Sequence[str] = CATEGORIES) -> float:
    """Cohen's κ of two aligned verdict sequences (NaN when undefined).

    κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e the agreement
    expected from each judge's own verdict frequencies.
    """
    index = {c: i for i, c in enumerate(categories)}
    try:
        codes_a = np.array([index[v] for v in a], dtype=int)
        codes_b = np.array([index[v] for v in b], dtype=int)
    except KeyError as exc:
        raise MemevalError(f"cohens_kappa: verdict {exc.args[0]!r} is not one of "
                           f"{', '.join(categories)}") from None
    if codes_a.shape != codes_b.shape:
        raise MemevalError(f"cohens_kappa: {len(codes_a)} verdicts against {len(codes_b)}; "
                           "the sequences must be aligned")
    return _kappa_codes(codes_a, codes_b, len(categories))


def _kappa_codes(a: np.ndarray, b: np.ndarray, k: int) -> float:
    n = a.size
    if n == 0:
        return math.nan
    table = _confusion_counts(a, b, k) / n
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if math.isclose(expected, 1.0):
        return math.nan
    return (observed - expected) / (1.0 - expected)


def verdict_pairs(turns_a: Sequence[Judgement], turns_b: Sequence[Judgement], *,
                  level: Level = "selected") -> pd.DataFrame:

    """Line up two judges' verdicts: one row per (turn, memory) either judge graded.

    Args:
        turns_a: judge A's Judgements.
        turns_b: judge B's, for the same turns in the same order (turn ids repeat
            across scenarios, so position, not id, says which turn is which).
        level: `selected` or `candidates` (needs judges that grade recall).

    Returns:
        Columns `turn` (position), `turn_id`, `key`, `verdict_a`, `verdict_b`; a side
        that gave no verdict for that memory has None.
    """
    import pandas as pd

    if len(turns_a) != len(turns_b):
        raise MemevalError(f"agreement: judge A scored {len(turns_a)} turns and judge B "
                           f"{len(turns_b)}; pass the Judgements of the same turns")
    rows = []
    for position, (ta, tb) in enumerate(zip(turns_a, turns_b, strict=True)):
        if ta.turn_id != tb.turn_id:
            raise MemevalError(f"agreement: turn {position} is {ta.turn_id!r} for judge A "
                               f"but {tb.turn_id!r} for judge B; align the two lists")
        va = ta.verdicts if level == "selected" else (ta.candidate_verdicts or ())
        vb = tb.verdicts if level == "selected" else (tb.candidate_verdicts or ())
        by_a = {v.key: v.verdict for v in va}
        by_b = {v.key: v.verdict for v in vb}
        for key in dict.fromkeys([*by_a, *by_b]):
            rows.append({"turn": position, "turn_id": ta.turn_id, "key": key,
                         "verdict_a": by_a.get(key), "verdict_b": by_b.get(key)})
    return pd.DataFrame(rows, columns=["turn", "turn_id", "key", "verdict_a", "verdict_b"])


def _judge_name(turns: Sequence[Judgement]) -> str:
    names = sorted({t.judge for t in turns})
    return names[0] if len(names) == 1 else ",".join(names)


def agreement(turns_a: Sequence[Judgement], turns_b: Sequence[Judgement], *,
              level: Level = "selected", confidence: float = CONFIDENCE,
              n_resamples: int = N_RESAMPLES, seed: int = SEED,
              clusters: Sequence[str] | None = None,
              selector: str | None = None) -> Agreement:
    """Cohen's κ, raw agreement and the confusion table of two judges, with CIs.

    Args:
        turns_a: judge A's Judgements (e.g. `claude`).
        turns_b: judge B's for the same turns, in the same order (e.g. `gold`).
        level: `selected` grades what surfaced; `candidates` every candidate.
        confidence: coverage of both intervals.
        n_resamples: bootstrap resamples (of turns).
        seed: makes the intervals reproducible.
        clusters: the scenario of each turn; the interval then resamples scenarios
            (turns of one scenario are not independent), else turns.
        selector: recorded on the result (agreement is reported per selector).
    """
    import pandas as pd
    from scipy import stats

    from memeval.scoring.stats import bootstrap_seed

    if level not in ("selected", "candidates"):
        raise MemevalError(f"agreement: level {level!r}; use 'selected' or 'candidates'")
    pairs = verdict_pairs(turns_a, turns_b, level=level)
    usable = pairs["verdict_a"].isin(CATEGORIES) & pairs["verdict_b"].isin(CATEGORIES)
    kept = pairs[usable]
    k = len(CATEGORIES)
    index = {c: i for i, c in enumerate(CATEGORIES)}
    codes_a = kept["verdict_a"].map(index).to_numpy(dtype=int)
    codes_b = kept["verdict_b"].map(index).to_numpy(dtype=int)
    counts = _confusion_counts(codes_a, codes_b, k)
    confusion = pd.DataFrame(counts, index=pd.Index(CATEGORIES, name=_judge_name(turns_a)),
                             columns=pd.Index(CATEGORIES, name=_judge_name(turns_b)))
    n = int(codes_a.size)
    kappa = cohens_kappa(kept["verdict_a"].tolist(), kept["verdict_b"].tolist())
    observed = float(np.mean(codes_a == codes_b)) if n else math.nan
    turn_ids = kept["turn"].to_numpy(dtype=int)
    n_turns = int(np.unique(turn_ids).size)
    if clusters is not None:
        turn_ids = pd.factorize(pd.Series([clusters[t] for t in turn_ids], dtype=object))[0]
    unique_turns = np.unique(turn_ids)
    ci = {"kappa": (math.nan, math.nan), "observed": (math.nan, math.nan)}
    if unique_turns.size >= 2:
        members = [np.flatnonzero(turn_ids == t) for t in unique_turns]

        def both(sample: np.ndarray) -> np.ndarray:
            rows = np.concatenate([members[int(i)] for i in sample])
            a, b = codes_a[rows], codes_b[rows]
            return np.array([_kappa_codes(a, b, k), float(np.mean(a == b))])

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            result = stats.bootstrap((np.arange(unique_turns.size),), both, vectorized=False,
                                     n_resamples=n_resamples, method="percentile",
                                     confidence_level=confidence,
                                     **bootstrap_seed(seed))
        # Resamples where κ is undefined (one verdict only) are skipped, not counted as 0;
        # as in stats._two_sided, the interval is widened to hold its own estimate.
        tail = (1 - confidence) / 2 * 100
        for name, row, point in (("kappa", 0, kappa), ("observed", 1, observed)):
            dist = result.bootstrap_distribution[row]
            if np.isnan(dist).all() or math.isnan(point):
                continue
            low, high = np.nanpercentile(dist, [tail, 100 - tail])
            ci[name] = (min(float(low), point), max(float(high), point))
    return Agreement(
        judge_a=_judge_name(turns_a), judge_b=_judge_name(turns_b), level=level, n=n,
        n_turns=n_turns, n_excluded=int((~usable).sum()),
        observed=observed, kappa=kappa,
        kappa_ci_low=ci["kappa"][0], kappa_ci_high=ci["kappa"][1],
        observed_ci_low=ci["observed"][0], observed_ci_high=ci["observed"][1],
        confusion=confusion, selector=selector, n_clusters=int(unique_turns.size),
    )
