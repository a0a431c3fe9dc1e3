"""Intervals, tests and calibration that respect how memeval's evidence is grouped.

The turns of one scenario share a memdir and a conversation, so they are not
independent draws: a bootstrap that resamples turns treats 30 correlated turns as 30
pieces of evidence and gives intervals that are too narrow. Every interval here
resamples whole *clusters* (a scenario, or a conversation of an imported set); a
suite whose clusters are single turns gets the ordinary bootstrap back.

All functions are pure (numbers in, frozen records out), skip NaN / None inputs and
count what they skipped, and report the `n` and `n_clusters` a figure rests on.
See docs/statistics.md for the reasoning and a worked example.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special, stats

from memeval.errors import MemevalError
from memeval.scoring.catalog import CONFIDENCE, FALSE_FAILURE

N_RESAMPLES = 2000  # percentile bootstrap: ~±0.005 on a 95 % bound, fast on 2 cores
SEED = 0
CALIBRATION_TRIALS = 400  # pseudo A/A comparisons behind a calibrated margin

Method = Literal["percentile", "bca"]

_RNG_KEYWORD = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters \
    else "random_state"  # scipy >= 1.15 renamed the seed argument


def bootstrap_seed(seed: int) -> dict[str, np.random.Generator]:
    """The keyword that seeds `scipy.stats.bootstrap` on this scipy version."""
    return {_RNG_KEYWORD: np.random.default_rng(seed)}


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval and the evidence behind it.

    Args:
        value: the statistic on the data as given (NaN when nothing is left).
        low: lower bound (NaN below two observations).
        high: upper bound.
        n: observations used (turns, or items for pass^k and flip rate).
        n_clusters: distinct clusters among them; the interval's real sample size.
            With one cluster the turns are resampled instead and the interval is
            optimistic; `method` then says so.
        method: how the interval was made, e.g. `cluster bootstrap (percentile)`.
        confidence: the interval's coverage.
        n_skipped: inputs left out (NaN / None values, or items with too few repeats).
    """

    value: float
    low: float
    high: float
    n: int
    n_clusters: int
    method: str = "cluster bootstrap (percentile)"
    confidence: float = CONFIDENCE
    n_skipped: int = 0

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class NonInferiority:
    """Is the candidate at most `margin` worse than the baseline?

    Args:
        estimate: mean paired difference, candidate − baseline (higher is better).
        lower_bound: one-sided lower confidence bound of that difference.
        margin: the tolerated loss (positive).
        passed: `lower_bound >= -margin`; False whenever the bound is undefined.
        n: paired observations used.
        n_clusters: clusters among them.
        half_width: `estimate - lower_bound`, the bound's distance from the estimate.
        resolvable: `margin >= 2 * half_width`. A candidate exactly as good as the
            baseline then fails about `1 - confidence` of the time; below it the gate
            fails equal candidates far more often, i.e. the suite cannot resolve
            the margin.
        confidence: the one-sided bound's coverage.
        n_skipped: NaN differences left out.
    """

    estimate: float
    lower_bound: float
    margin: float
    passed: bool
    n: int
    n_clusters: int
    half_width: float
    resolvable: bool
    confidence: float = CONFIDENCE
    n_skipped: int = 0


# -- the resampling engine ----------------------------------------------------------------

def _codes(clusters: Sequence[Hashable], size: int, caller: str) -> np.ndarray:
    if len(clusters) != size:
        raise MemevalError(f"{caller}: {size} values but {len(clusters)} cluster keys; "
                           "give one cluster key per value")
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(c, len(index)) for c in clusters], dtype=np.intp)


@functools.lru_cache(maxsize=32)
def _resample_weights(n_clusters: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each cluster appears in each resample: shape (n_resamples, n_clusters).

    Drawing cluster indices (rather than multinomial counts) keeps a brute-force
    reference with the same seed identical, which the tests rely on. A summary asks
    for the same draws for every figure over the same clusters, so they are kept
    (read-only).
    """
    picks = np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))
    cells = (np.arange(n_resamples)[:, None] * n_clusters + picks).ravel()
    weights = np.bincount(cells, minlength=n_resamples * n_clusters).astype(float)
    weights = weights.reshape(n_resamples, n_clusters)
    weights.flags.writeable = False
    return weights


def _bounds(statistic: Callable[[np.ndarray], np.ndarray], n_clusters: int, *,
            tails: Sequence[float], method: Method, n_resamples: int,
            seed: int) -> tuple[float, list[float]]:
    """The statistic on all clusters and its bootstrap quantiles at `tails`.

    `statistic` maps cluster weights (..., n_clusters) to values (...): a resample is
    a weight vector, the data itself all ones, a jackknife replicate one zero.
    """
    estimate = float(statistic(np.ones(n_clusters)))
    if n_clusters < 2 or not math.isfinite(estimate):
        return estimate, [math.nan] * len(tails)
    draws = statistic(_resample_weights(n_clusters, n_resamples, seed))
    draws = draws[np.isfinite(draws)]
    if draws.size == 0:
        return estimate, [math.nan] * len(tails)
    if np.ptp(draws) == 0:
        return estimate, [estimate] * len(tails)  # nothing varies: a zero-width interval
    levels = np.asarray(tails, dtype=float)
    if method == "bca":
        # Efron's bias-corrected and accelerated percentiles; the acceleration comes
        # from leaving out one cluster at a time.
        below = (np.count_nonzero(draws < estimate) + 0.5 * np.count_nonzero(draws == estimate))
        z0 = stats.norm.ppf(below / draws.size)
        jack = statistic(1.0 - np.eye(n_clusters))
        jack = jack[np.isfinite(jack)]
        spread = jack.mean() - jack
        denom = 6.0 * np.sum(spread**2) ** 1.5
        accel = float(np.sum(spread**3) / denom) if denom > 0 else 0.0
        z = stats.norm.ppf(levels)
        levels = stats.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        if not np.all(np.isfinite(levels)):
            return estimate, [math.nan] * len(tails)
    elif method != "percentile":
        raise MemevalError(f"bootstrap method {method!r} is not one of percentile, bca")
    found = np.quantile(draws, levels)
    return estimate, [float(v) for v in found]


def _two_sided(statistic: Callable[[np.ndarray], np.ndarray], n_clusters: int, *,
               confidence: float, method: Method, n_resamples: int,
               seed: int) -> tuple[float, float, float]:
    alpha = 1 - confidence
    estimate, (low, high) = _bounds(statistic, n_clusters, tails=(alpha / 2, 1 - alpha / 2),
                                    method=method, n_resamples=n_resamples, seed=seed)
    if math.isfinite(low):
        # A percentile bound can miss its own estimate by a hair on tiny skewed samples.
        low, high = min(low, estimate), max(high, estimate)
    return estimate, low, high


def _units(codes: np.ndarray, method: Method) -> tuple[np.ndarray, int, str]:
    """What to resample: clusters, or the turns themselves when there is only one cluster.

    A one-scenario suite has no between-cluster spread to read; resampling its
    turns still says something, but too little, and the label says so.
    """
    if codes.size and codes.min() == codes.max():  # one cluster (a group of one scenario)
        codes, n_clusters = np.zeros(codes.size, dtype=np.intp), 1
    else:
        _, codes = np.unique(codes, return_inverse=True)
        n_clusters = int(codes.max(initial=-1)) + 1
    if n_clusters == 1 and codes.size > 1:
        return np.arange(codes.size), 1, f"bootstrap over turns, one cluster ({method})"
    return codes, n_clusters, f"cluster bootstrap ({method})"


def _cluster_sums(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.bincount(codes, weights=values, minlength=int(codes.max(initial=-1)) + 1)


# -- means and ratios -----------------------------------------------------------------

def cluster_bootstrap_ratio(numerators: Sequence[float] | np.ndarray,
                            denominators: Sequence[float] | np.ndarray,
                            clusters: Sequence[Hashable], *, confidence: float = CONFIDENCE,
                            n_resamples: int = N_RESAMPLES, seed: int = SEED,
                            method: Method = "percentile") -> Interval:
    """Σ numerators / Σ denominators with an interval over resampled clusters.

    The micro average (e.g. all hits / all picks) weighs each turn by its size; it
    is a ratio of sums, so it is resampled as one, never as a mean of ratios.
    A row with a NaN on either side is skipped and counted.
    """
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.shape != den.shape:
        raise MemevalError(f"cluster_bootstrap_ratio: {num.size} numerators but "
                           f"{den.size} denominators")
    codes = _codes(list(clusters), num.size, "cluster_bootstrap_ratio")
    keep = np.isfinite(num) & np.isfinite(den)
    num, den = num[keep], den[keep]
    units, n_clusters, label = _units(codes[keep], method)
    if num.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 0, label, confidence,
                        int(np.count_nonzero(~keep)))
    num_sums, den_sums = _cluster_sums(num, units), _cluster_sums(den, units)

    def ratio(weights: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (weights @ num_sums) / (weights @ den_sums)

    estimate, low, high = _two_sided(ratio, num_sums.size, confidence=confidence,
                                     method=method, n_resamples=n_resamples, seed=seed)
    return Interval(estimate, low, high, int(num.size), n_clusters, label, confidence,
                    int(np.count_nonzero(~keep)))


def cluster_bootstrap_mean(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable],
                           *, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                           seed: int = SEED, method: Method = "percentile") -> Interval:
    """Mean of the non-NaN values with an interval that resamples whole clusters.

    The default interval for a macro average over turns: turns of one scenario move
    together, so the scenario is the unit that is resampled.
    """
    data = np.asarray(values, dtype=float)
    return cluster_bootstrap_ratio(data, np.where(np.isnan(data), np.nan, 1.0), clusters,
                                   confidence=confidence, n_resamples=n_resamples, seed=seed,
                                   method=method)


def cluster_bootstrap_ratios(numerators: Sequence[Sequence[float]] | np.ndarray,
                             denominators: Sequence[Sequence[float]] | np.ndarray,
                             clusters: Sequence[Hashable], *,
                             intervals: Sequence[bool] | None = None,
                             confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                             seed: int = SEED, method: Method = "percentile") -> list[Interval]:
    """Many `cluster_bootstrap_ratio`s over the same clusters: row i of `numerators` and
    `denominators` (figures × values) gives the i-th interval, equal to
    `cluster_bootstrap_ratio(numerators[i], denominators[i], clusters, ...)`.

    A summary asks for a dozen figures per group, all over the same scenarios; one
    call here reads the cluster keys once, shares the resampling units between rows
    that skip the same values and the resampled denominators between rows with the
    same cluster totals, and takes every percentile in one quantile call.
    `intervals[i]` false asks for the estimate, `n` and `n_clusters` only (bounds
    NaN), for a figure whose interval comes from elsewhere (a Wilson interval).

    The results are bit-for-bit those of the one-figure function: each resample is
    the same matrix-vector product (one matrix-matrix product would round
    differently), and a row with a non-finite resample, or any method other than
    percentile, is handed to `cluster_bootstrap_ratio` itself.
    """
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.ndim != 2 or num.shape != den.shape:
        raise MemevalError(f"cluster_bootstrap_ratios: numerators {num.shape} and denominators "
                           f"{den.shape} must be two tables of the same shape (figures × values)")
    figures, size = num.shape
    wanted = [True] * figures if intervals is None else [bool(w) for w in intervals]
    if len(wanted) != figures:
        raise MemevalError(f"cluster_bootstrap_ratios: {figures} figures but {len(wanted)} "
                           "interval flags")
    keys = list(clusters)
    codes = _codes(keys, size, "cluster_bootstrap_ratios")
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed,
               "method": method}
    if method != "percentile":
        return [cluster_bootstrap_ratio(num[i], den[i], keys, **options) for i in range(figures)]
    keep = np.isfinite(num) & np.isfinite(den)
    alike: dict[bytes, list[int]] = {}  # figures that skip the same values share their units
    for i in range(figures):
        alike.setdefault(keep[i].tobytes(), []).append(i)
    facts: list[tuple[float, int, int, str, int]] = [(math.nan, 0, 0, "", 0)] * figures
    pending: list[tuple[int, np.ndarray, np.ndarray]] = []  # figure, Σ num and Σ den per resample
    below_of: dict[bytes, np.ndarray] = {}
    for rows in alike.values():
        mask = keep[rows[0]]
        units, n_clusters, label = _units(codes[mask], method)
        skipped = int(np.count_nonzero(~mask))
        if units.size == 0:
            for i in rows:
                facts[i] = (math.nan, 0, 0, label, skipped)
            continue
        # every figure's cluster sums in one bincount: each bin still adds its values in
        # row order, so the sums equal `_cluster_sums` of each figure alone
        k = int(units.max()) + 1
        cells = (units + k * np.arange(len(rows))[:, None]).ravel()
        num_sums, den_sums = (
            np.bincount(cells, weights=table[rows][:, mask].ravel(),
                        minlength=k * len(rows)).reshape(len(rows), k)
            for table in (num, den))
        ones = np.ones(k)
        weights = _resample_weights(k, n_resamples, seed) if k >= 2 else None
        with np.errstate(invalid="ignore", divide="ignore"):
            for i, top, bottom in zip(rows, num_sums, den_sums, strict=True):
                estimate = float((ones @ top) / (ones @ bottom))
                facts[i] = (estimate, int(units.size), n_clusters, label, skipped)
                if weights is None or not wanted[i] or not math.isfinite(estimate):
                    continue
                below = below_of.get(bottom.tobytes())
                if below is None:
                    below = below_of[bottom.tobytes()] = weights @ bottom
                pending.append((i, weights @ top, below))
    bounds: dict[int, tuple[float, float]] = {}
    fallback: set[int] = set()  # a non-finite resample: the one-figure function drops it
    if pending:
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = np.stack([top for _, top, _ in pending]) / \
                np.stack([below for _, _, below in pending])
            finite = np.all(np.isfinite(draws), axis=1)
            varying = finite & (np.ptp(draws, axis=1) != 0)
        alpha = 1 - confidence
        levels = np.asarray((alpha / 2, 1 - alpha / 2), dtype=float)
        found = iter(np.quantile(draws[varying], levels, axis=1).T.tolist()
                     if varying.any() else ())
        for (i, _, _), ok, varies in zip(pending, finite.tolist(), varying.tolist(),
                                         strict=True):
            if not ok:
                fallback.add(i)
                continue
            estimate = facts[i][0]
            low, high = next(found) if varies else (estimate, estimate)
            # as `_two_sided`: a percentile bound can miss its own estimate by a hair
            bounds[i] = (min(low, estimate), max(high, estimate))
    return [cluster_bootstrap_ratio(num[i], den[i], keys, **options) if i in fallback
            else Interval(estimate, *bounds.get(i, (math.nan, math.nan)), n, n_clusters, label,
                          confidence, skipped)
            for i, (estimate, n, n_clusters, label, skipped) in enumerate(facts)]


def paired_cluster_bootstrap(diffs: Sequence[float] | np.ndarray, clusters: Sequence[Hashable],
                             *, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                             seed: int = SEED, method: Method = "percentile") -> Interval:
    """Interval of the mean paired difference (A − B per turn), clusters resampled whole.

    Pairing removes what the two share (the turn's difficulty); clustering keeps the
    scenario-level noise that remains.
    """
    found = cluster_bootstrap_mean(diffs, clusters, confidence=confidence,
                                   n_resamples=n_resamples, seed=seed, method=method)
    return Interval(found.value, found.low, found.high, found.n, found.n_clusters,
                    f"paired cluster bootstrap ({method})", confidence, found.n_skipped)


def non_inferiority(diffs: Sequence[float] | np.ndarray, clusters: Sequence[Hashable],
                    margin: float, *, confidence: float = CONFIDENCE,
                    n_resamples: int = N_RESAMPLES, seed: int = SEED,
                    method: Method = "percentile") -> NonInferiority:
    """One-sided test that the candidate loses at most `margin` (diffs: candidate − baseline).

    Passes when the lower `confidence` bound of the mean difference is at least
    `-margin`. Too few clusters to bound anything is a failure, never a pass.
    """
    if not margin >= 0:
        raise MemevalError(f"non_inferiority: margin must be a non-negative loss, got {margin}")
    data = np.asarray(diffs, dtype=float)
    codes = _codes(list(clusters), data.size, "non_inferiority")
    keep = np.isfinite(data)
    data = data[keep]
    units, n_clusters, _ = _units(codes[keep], method)
    skipped = int(np.count_nonzero(~keep))
    if data.size == 0:
        return NonInferiority(math.nan, math.nan, margin, False, 0, 0, math.nan, False,
                              confidence, skipped)
    sums, counts = _cluster_sums(data, units), np.bincount(units).astype(float)
    estimate, (lower,) = _bounds(lambda w: (w @ sums) / (w @ counts), sums.size,
                                 tails=(1 - confidence,), method=method,
                                 n_resamples=n_resamples, seed=seed)
    lower = min(lower, estimate)
    half = estimate - lower
    passed = math.isfinite(lower) and lower >= -margin
    return NonInferiority(estimate, lower, margin, bool(passed), int(data.size), n_clusters,
                          half, bool(math.isfinite(half) and margin >= 2 * half),
                          confidence, skipped)


# -- proportions and multiplicity ------------------------------------------------------

def wilson_interval(k: int, n: int, *, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval for k successes in n trials.

    Unlike k/n ± z·SE it never collapses to zero width at 0/n or n/n, and it stays
    close to nominal coverage in the small cells a per-category table produces.
    Closed form rather than statsmodels: a summary asks for hundreds of these.
    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise MemevalError(f"wilson: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 0, "wilson", confidence)
    z = float(special.ndtri(0.5 + confidence / 2))
    share, z2n = k / n, z * z / n
    center = (share + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(share * (1 - share) / n + z2n / (4 * n))
    # at 0/n and n/n a bound is exactly the estimate; rounding must not move it
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == n else min(1.0, center + half)
    # n_clusters = n: the interval assumes independent trials.
    return Interval(k / n, low, high, n, n, "wilson", confidence)


def holm(pvalues: Sequence[float] | np.ndarray) -> list[float]:
    """Holm step-down adjusted p-values (NaN kept in place, not counted as a test).

    Controls the chance of any false alarm across a family (per-category
    comparisons, a gate's secondary metrics) without assuming independence, and is
    uniformly more powerful than Bonferroni.
    """
    raw = np.asarray(pvalues, dtype=float)
    out = np.full(raw.shape, np.nan)
    tested = np.flatnonzero(np.isfinite(raw))
    if tested.size == 0:
        return out.tolist()
    if np.any((raw[tested] < 0) | (raw[tested] > 1)):
        raise MemevalError("holm: p-values must lie in [0, 1]")
    order = tested[np.argsort(raw[tested], kind="stable")]
    m = order.size
    scaled = (m - np.arange(m)) * raw[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out.tolist()


# -- gate calibration --------------------------------------------------------------------

def calibrate_margin(draws: Sequence[Sequence[float]] | np.ndarray,
                     clusters: Sequence[Hashable], *, false_failure: float = FALSE_FAILURE,
                     confidence: float = CONFIDENCE, n_trials: int = CALIBRATION_TRIALS,
                     n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Smallest non-inferiority margin that an A/A comparison of the baseline passes.

    `draws` is (repeats × turns): the baseline's per-turn metric from equivalent runs.
    Each pseudo A/A trial picks, per cluster, two different repeats at random as
    "baseline" and "candidate" — under A/A the two are exchangeable, and whole
    clusters keep a run's within-scenario correlation — and computes the same
    lower bound `non_inferiority` would. The margin is the (1 − false_failure)
    quantile of −bound over the trials, so at most that share of A/A gates fail.
    NaN when fewer than two units (clusters, or turns of a one-scenario suite) remain.
    """
    data = np.asarray(draws, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2:
        raise MemevalError("calibrate_margin: need at least two equivalent draws (repeats × "
                           f"turns), got shape {data.shape}; rerun the baseline with repeats "
                           "or build draws with resampled_draws()")
    if not 0 < false_failure < 1:
        raise MemevalError(f"calibrate_margin: false_failure must lie in (0, 1), "
                           f"got {false_failure}")
    codes = _codes(list(clusters), data.shape[1], "calibrate_margin")
    keep = np.all(np.isfinite(data), axis=0)  # a turn unscored in some draw is left out
    data = data[:, keep]
    codes, _, _ = _units(codes[keep], "percentile")  # the units non_inferiority resamples
    n_repeats, n_turns = data.shape
    n_clusters = int(codes.max(initial=-1)) + 1
    if n_clusters < 2:
        return math.nan
    rng = np.random.default_rng(seed)
    # Per trial and cluster an ordered pair of distinct repeats (baseline, candidate).
    base = rng.integers(0, n_repeats, size=(n_trials, n_clusters))
    cand = (base + rng.integers(1, n_repeats, size=(n_trials, n_clusters))) % n_repeats
    turn_diffs = data[cand[:, codes], np.arange(n_turns)] - data[base[:, codes], np.arange(n_turns)]
    sums = np.stack([_cluster_sums(row, codes) for row in turn_diffs])  # trials × clusters
    counts = np.bincount(codes).astype(float)
    weights = _resample_weights(n_clusters, n_resamples, seed)  # the same as non_inferiority's
    means = (weights @ sums.T) / (weights @ counts)[:, None]  # resamples × trials
    lower = np.minimum(np.quantile(means, 1 - confidence, axis=0), sums.sum(1) / counts.sum())
    margin = float(np.quantile(-lower, 1 - false_failure, method="higher"))
    return max(0.0, margin)  # never -0.0


def resampled_draws(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable], *,
                    n_draws: int = 20, seed: int = SEED) -> np.ndarray:
    """Stand-in draws for a baseline that ran once: each turn replaced by a random turn
    of its own cluster.

    One run shows no run-to-run noise, so this reads it from the spread between the
    turns of a scenario, which holds that noise plus the turns' real differences:
    the margin errs on the wide side (the gate will not cry wolf, but may let a
    small regression through). Deviations from the cluster mean are scaled by
    √(m/(m−1)) so that drawing with replacement does not shrink the spread; a
    cluster of one turn shows no spread at all. Repeats give the sharper answer.
    """
    data = np.asarray(values, dtype=float)
    codes = _codes(list(clusters), data.size, "resampled_draws")
    rng = np.random.default_rng(seed)
    out = np.full((n_draws, data.size), np.nan)  # a NaN turn stays unscored in every draw
    for cluster in np.unique(codes):
        members = np.flatnonzero((codes == cluster) & np.isfinite(data))
        if members.size == 0:
            continue
        centre = data[members].mean()
        scale = math.sqrt(members.size / (members.size - 1)) if members.size > 1 else 0.0
        picks = data[rng.choice(members, size=(n_draws, members.size))]
        out[:, members] = centre + scale * (picks - centre)
    return out
