"""memeval.scoring.stats and the repeat statistics against scipy, statsmodels and brute force."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sp
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from memeval.errors import MemevalError
from memeval.scoring.agreement import cohens_kappa
from memeval.scoring.calibrate import Calibration, calibrate_frame
from memeval.scoring.metrics import flip_rate, pass_hat_k, per_turn_frame, repeat_summary
from memeval.scoring.stats import (
    bootstrap_seed,
    calibrate_margin,
    cluster_bootstrap_mean,
    cluster_bootstrap_ratio,
    cluster_bootstrap_ratios,
    holm,
    non_inferiority,
    paired_cluster_bootstrap,
    resampled_draws,
    wilson_interval,
)


def wilson_reference(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 29), (29, 29), (7, 40), (150, 317)])
def test_wilson_matches_the_closed_form(k: int, n: int) -> None:
    found = wilson_interval(k, n)
    assert (found.low, found.high) == pytest.approx(wilson_reference(k, n), abs=1e-9)


def test_holm_matches_the_step_down_definition() -> None:
    # statsmodels' multipletests(method="holm") on these gives these adjusted values
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, math.nan]) == [0.5, pytest.approx(math.nan, nan_ok=True)]
    rng = np.random.default_rng(3)
    for _ in range(50):
        p = rng.uniform(0, 0.2, size=6)
        order = np.argsort(p)
        brute = np.empty(6)
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (6 - rank) * p[i]))
            brute[i] = running
        assert holm(p) == pytest.approx(brute)


def test_cluster_bootstrap_agrees_with_a_bootstrap_of_cluster_means() -> None:
    rng = np.random.default_rng(11)
    means = rng.uniform(0.2, 0.8, size=25)
    values = np.concatenate([rng.binomial(1, m, size=12) for m in means]).astype(float)
    clusters = np.repeat(np.arange(25), 12)
    ours = cluster_bootstrap_mean(values, clusters, n_resamples=4000)
    per_cluster = values.reshape(25, 12).mean(axis=1)  # equal sizes: mean of means
    ref = sp.bootstrap((per_cluster,), np.mean, n_resamples=4000, method="percentile",
                       random_state=np.random.default_rng(0)).confidence_interval
    assert ours.value == pytest.approx(values.mean())
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), abs=0.015)
    assert (ours.n, ours.n_clusters) == (300, 25)


def test_a_micro_ratio_pools_counts() -> None:
    est = cluster_bootstrap_ratio(np.array([1, 3, 0]), np.array([2, 4, 1]), ["a", "b", "c"])
    assert est.value == pytest.approx(4 / 7)


def test_pass_hat_k_is_the_chance_that_k_of_n_repeats_all_succeed() -> None:
    outcomes = [[1, 1, 0, 1, 0], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]
    rows = [{"scenario": "s", "turn_id": f"t{t}", "selector": "x", "judge": "gold",
             "repeat": r, "relevant": ["a.md"], "selected": ["a.md"] if ok else []}
            for t, runs in enumerate(outcomes) for r, ok in enumerate(runs)]
    table = pass_hat_k(per_turn_frame(rows)).iloc[0]
    for k in range(1, 6):
        brute = np.mean([np.mean([all(c) for c in itertools.combinations(runs, k)])
                         for runs in outcomes])
        assert table[f"pass^{k}"] == pytest.approx(brute)


def test_flip_rate_is_the_share_of_disagreeing_pairs() -> None:
    picks = [["a.md"], ["b.md"], ["a.md"], [], ["a.md"]]
    rows = [{"scenario": "s", "turn_id": "t", "selector": "x", "judge": "gold",
             "repeat": r, "relevant": ["a.md"], "selected": p} for r, p in enumerate(picks)]
    brute = np.mean([set(x) != set(y) for x, y in itertools.combinations(picks, 2)])
    assert repeat_summary(per_turn_frame(rows)).iloc[0]["flip_rate"] == pytest.approx(brute)


def test_kappa_matches_the_textbook_formula() -> None:
    a = ["relevant", "irrelevant", "irrelevant", "acceptable", "relevant", "irrelevant"] * 5
    b = ["relevant", "irrelevant", "relevant", "acceptable", "irrelevant", "irrelevant"] * 5
    cats = sorted(set(a) | set(b))
    po = np.mean([x == y for x, y in zip(a, b, strict=True)])
    pe = sum((a.count(c) / len(a)) * (b.count(c) / len(b)) for c in cats)
    assert cohens_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))


# -- memeval.scoring.stats in full ------------------------------------------------------------

def clustered(seed: int, n_clusters: int = 12, per: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Values whose clusters differ a lot (a shared scenario effect) plus turn noise."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(n_clusters), per)
    values = rng.normal(0, 1, n_clusters)[clusters] + rng.normal(0, 0.3, clusters.size)
    return values, clusters


def brute_force_cluster_bounds(values, clusters, *, tails, n_resamples, seed):
    """Resample whole clusters one resample at a time, the way the method is described."""
    keys = list(dict.fromkeys(clusters))
    groups = [np.array([v for v, c in zip(values, clusters, strict=True) if c == k])
              for k in keys]
    picks = np.random.default_rng(seed).integers(0, len(keys), size=(n_resamples, len(keys)))
    means = [np.mean(np.concatenate([groups[i] for i in row])) for row in picks]
    return np.quantile(means, tails)


# -- cluster bootstrap -------------------------------------------------------------------

def test_cluster_mean_matches_a_brute_force_cluster_resampler() -> None:
    values, clusters = clustered(1)
    found = cluster_bootstrap_mean(values, clusters, n_resamples=500, seed=3)
    low, high = brute_force_cluster_bounds(values, clusters, tails=[0.025, 0.975],
                                           n_resamples=500, seed=3)
    assert found.value == pytest.approx(values.mean())
    assert (found.low, found.high) == pytest.approx((low, high), abs=1e-12)
    assert (found.n, found.n_clusters, found.n_skipped) == (120, 12, 0)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_single_turn_clusters_agree_with_scipy_bootstrap(method: str) -> None:
    data = np.random.default_rng(4).exponential(size=60)  # skewed, so BCa differs
    ours = cluster_bootstrap_mean(data, range(60), n_resamples=20000, method=method)
    ref = sp.bootstrap((data,), np.mean, n_resamples=20000, method=method,
                        **bootstrap_seed(5)).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.02)
    assert ours.high == pytest.approx(ref.high, abs=0.02)


def test_clustering_widens_the_interval_of_correlated_turns() -> None:
    values, clusters = clustered(2)
    by_cluster = cluster_bootstrap_mean(values, clusters)
    by_turn = cluster_bootstrap_mean(values, range(values.size))
    assert by_cluster.high - by_cluster.low > 2 * (by_turn.high - by_turn.low)
    assert by_turn.n_clusters == values.size


def test_nan_values_are_skipped_and_counted() -> None:
    values, clusters = clustered(3)
    values[:10] = np.nan  # the whole first cluster
    values[15] = np.nan
    found = cluster_bootstrap_mean(values, clusters)
    assert found.value == pytest.approx(np.nanmean(values))
    assert (found.n, found.n_clusters, found.n_skipped) == (109, 11, 11)


def test_one_cluster_falls_back_to_its_turns_and_says_so() -> None:
    found = cluster_bootstrap_mean([0.2, 0.4, 0.9], ["s", "s", "s"], n_resamples=300, seed=2)
    turns = cluster_bootstrap_mean([0.2, 0.4, 0.9], ["a", "b", "c"], n_resamples=300, seed=2)
    assert found.value == pytest.approx(0.5)
    assert (found.low, found.high) == (turns.low, turns.high)
    assert found.n_clusters == 1 and "one cluster" in found.method
    lone = cluster_bootstrap_mean([0.7], ["s"])
    assert lone.value == 0.7 and math.isnan(lone.low)


def test_constant_values_give_a_zero_width_interval() -> None:
    found = cluster_bootstrap_mean([1.0] * 6, [0, 0, 1, 1, 2, 2], method="bca")
    assert (found.low, found.value, found.high) == (1.0, 1.0, 1.0)


def test_cluster_keys_must_match_the_values() -> None:
    with pytest.raises(MemevalError, match="3 values but 2 cluster keys"):
        cluster_bootstrap_mean([1.0, 2.0, 3.0], ["a", "b"])


def test_ratio_is_the_micro_average_resampled_by_cluster() -> None:
    rng = np.random.default_rng(6)
    clusters = np.repeat(np.arange(15), 8)
    den = rng.integers(0, 5, clusters.size).astype(float)
    num = rng.binomial(den.astype(int), 0.6).astype(float)
    found = cluster_bootstrap_ratio(num, den, clusters, n_resamples=400, seed=2)
    assert found.value == pytest.approx(num.sum() / den.sum())
    picks = np.random.default_rng(2).integers(0, 15, size=(400, 15))
    ratios = [sum(num[clusters == i].sum() for i in row) / sum(den[clusters == i].sum()
              for i in row) for row in picks]
    assert (found.low, found.high) == pytest.approx(tuple(np.quantile(ratios, [0.025, 0.975])))


# What a summary group looks like to the batched intervals: a few clusters (sometimes
# one, sometimes one row), metrics defined on different turns, constant columns, and
# micro ratios whose denominators can be zero (a resample of only those is not finite).
cells = st.one_of(st.floats(-3, 3, allow_nan=False), st.sampled_from([0.0, 1.0, 0.5]),
                  st.just(math.nan), st.just(math.inf))


@st.composite
def figure_tables(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, list[str], list[bool]]:
    size = draw(st.integers(0, 14))
    clusters = draw(st.lists(st.sampled_from("abcd"), min_size=size, max_size=size))
    figures = draw(st.integers(1, 6))
    num, den = np.empty((figures, size)), np.empty((figures, size))
    for i in range(figures):
        kind = draw(st.sampled_from(["mean", "constant", "copy", "ratio"]))
        row = np.array(draw(st.lists(cells, min_size=size, max_size=size)), dtype=float)
        if kind == "constant":
            row = np.where(np.isnan(row), np.nan, draw(st.sampled_from([0.0, 0.25, 1.0])))
        elif kind == "copy" and i:
            row = num[i - 1]  # skips the same values: shares its units and denominators
        num[i] = row
        den[i] = np.where(np.isnan(row), np.nan, 1.0) if kind != "ratio" else np.array(
            draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, math.nan]), min_size=size,
                          max_size=size)))
    intervals = draw(st.lists(st.booleans(), min_size=figures, max_size=figures))
    return num, den, clusters, intervals


@settings(max_examples=300, deadline=None)
@given(figure_tables(), st.sampled_from([1, 2, 60, 2000]), st.integers(0, 3),
       st.sampled_from([0.95, 0.8]))
def test_batched_ratios_are_the_one_figure_intervals_bit_for_bit(
        table: tuple[np.ndarray, np.ndarray, list[str], list[bool]], n_resamples: int,
        seed: int, confidence: float) -> None:
    num, den, clusters, intervals = table
    options = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    batched = cluster_bootstrap_ratios(num, den, clusters, intervals=intervals, **options)
    assert len(batched) == num.shape[0]
    for i, (found, wanted) in enumerate(zip(batched, intervals, strict=True)):
        alone = cluster_bootstrap_ratio(num[i], den[i], clusters, **options)
        if not wanted:  # the estimate and its evidence only
            assert math.isnan(found.low) and math.isnan(found.high)
            found = dataclasses.replace(found, low=alone.low, high=alone.high)
        # repr: bit-for-bit floats, NaN equal to NaN
        assert repr(found) == repr(alone)
        if np.all(den[i][np.isfinite(num[i])] == 1.0):
            assert repr(found) == repr(cluster_bootstrap_mean(num[i], clusters, **options))


def test_batched_ratios_hand_other_methods_and_bad_shapes_back() -> None:
    values, clusters = clustered(3)
    num = np.stack([values, values[::-1]])
    den = np.ones_like(num)
    bca = cluster_bootstrap_ratios(num, den, clusters, method="bca", n_resamples=300)
    assert bca == [cluster_bootstrap_ratio(num[i], den[i], clusters, method="bca",
                                           n_resamples=300) for i in range(2)]
    # a cluster with nothing judged: a resample of only it is 0/0, which the one-figure
    # function drops before taking percentiles; the batch hands that figure to it
    hits, judged = np.array([[0.0, 0.0, 1.0, 2.0, 1.0]]), np.array([[0.0, 0.0, 2.0, 2.0, 3.0]])
    keys = ["a", "a", "b", "c", "c"]
    (found,) = cluster_bootstrap_ratios(hits, judged, keys)
    assert found == cluster_bootstrap_ratio(hits[0], judged[0], keys)
    assert found.low < found.value < found.high
    with pytest.raises(MemevalError, match="same shape"):
        cluster_bootstrap_ratios(num, den[:1], clusters)
    with pytest.raises(MemevalError, match="interval flags"):
        cluster_bootstrap_ratios(num, den, clusters, intervals=[True])
    with pytest.raises(MemevalError, match="cluster keys"):
        cluster_bootstrap_ratios(num, den, clusters[:-1])


def test_paired_bootstrap_is_the_cluster_interval_of_the_differences() -> None:
    values, clusters = clustered(7)
    found = paired_cluster_bootstrap(values, clusters, seed=1)
    plain = cluster_bootstrap_mean(values, clusters, seed=1)
    assert (found.value, found.low, found.high) == (plain.value, plain.low, plain.high)
    assert found.method.startswith("paired cluster bootstrap")


# -- non-inferiority --------------------------------------------------------------------

def test_non_inferiority_bound_is_the_one_sided_cluster_percentile() -> None:
    values, clusters = clustered(8)
    diffs = 0.1 * values
    found = non_inferiority(diffs, clusters, 0.2, n_resamples=500, seed=9)
    (lower,) = brute_force_cluster_bounds(diffs, clusters, tails=[0.05], n_resamples=500,
                                          seed=9)
    assert found.lower_bound == pytest.approx(lower)
    assert found.passed == (lower >= -0.2)
    assert found.half_width == pytest.approx(diffs.mean() - lower)


def test_a_clear_loss_fails_and_an_equal_candidate_passes_a_wide_margin() -> None:
    rng = np.random.default_rng(10)
    clusters = np.repeat(np.arange(30), 10)
    noise = rng.normal(0, 0.2, clusters.size)
    assert non_inferiority(noise - 0.3, clusters, 0.1).passed is False
    equal = non_inferiority(noise, clusters, 0.1)
    assert equal.passed and equal.resolvable


def test_a_margin_below_the_suite_resolution_is_flagged() -> None:
    values, clusters = clustered(11)
    found = non_inferiority(values, clusters, 0.01)
    assert not found.resolvable
    assert found.half_width > 0.005


def test_too_little_evidence_fails_rather_than_passes() -> None:
    assert non_inferiority([0.5], ["s"], 0.1).passed is False
    empty = non_inferiority([math.nan, math.nan], ["a", "b"], 0.1)
    assert (empty.passed, empty.n, empty.n_skipped) == (False, 0, 2)


# -- proportions --------------------------------------------------------------------------

@pytest.mark.parametrize(("k", "n"), [(0, 29), (29, 29), (3, 10), (1, 1), (57, 317)])
def test_proportion_intervals_match_statsmodels(k: int, n: int) -> None:
    ours = wilson_interval(k, n)
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-9)
    assert ours.value == k / n and ours.n == n


def test_zero_of_29_is_not_a_zero_width_interval() -> None:
    assert wilson_interval(0, 29).high > 0.1


def test_an_empty_cell_has_no_proportion() -> None:
    found = wilson_interval(0, 0)
    assert math.isnan(found.value) and found.n == 0
    with pytest.raises(MemevalError):
        wilson_interval(5, 3)


# -- Holm -----------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_matches_statsmodels(pvalues: list[float]) -> None:
    expected = multipletests(pvalues, method="holm")[1]
    assert holm(pvalues) == pytest.approx(expected)


def test_holm_leaves_missing_p_values_out_of_the_family() -> None:
    found = holm([0.01, math.nan, 0.04])
    assert math.isnan(found[1])
    assert [found[0], found[2]] == pytest.approx(multipletests([0.01, 0.04], method="holm")[1])


# -- pass^k and flip rate ------------------------------------------------------------------

def brute_pass_hat_k(outcomes: list[bool], k: int) -> float:
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


def repeat_rows(successes: dict) -> list[dict]:
    """One row per repeat of each item; a None repeat is an errored (unscored) one."""
    return [{"scenario": "s", "turn_id": f"t{item}", "selector": "x", "judge": "gold",
             "repeat": r, "relevant": ["a.md"], "selected": ["a.md"] if ok else [],
             "error": "boom" if ok is None else None}
            for item, outcomes in successes.items() for r, ok in enumerate(outcomes)]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.integers(0, 20), st.lists(st.one_of(st.booleans(), st.none()),
                                                     min_size=1, max_size=7),
                       min_size=1, max_size=8),
       st.integers(1, 4))
def test_pass_hat_k_is_the_share_of_all_k_subsets_that_pass(successes, k) -> None:
    observed = {i: [v for v in vs if v is not None] for i, vs in successes.items()}
    usable = {i: vs for i, vs in observed.items() if len(vs) >= k}
    frame = per_turn_frame(repeat_rows(successes))
    if not usable:
        with pytest.raises(MemevalError, match="k_max"):
            pass_hat_k(frame, k_max=k)
        return
    found = pass_hat_k(frame, k_max=k).iloc[0]
    assert found[f"pass^{k}_n"] == len(usable)
    expected = np.mean([brute_pass_hat_k(vs, k) for vs in usable.values()])
    assert found[f"pass^{k}"] == pytest.approx(expected)


def test_a_missing_repeat_is_never_a_success() -> None:
    frame = per_turn_frame(repeat_rows({1: [True, None, None], 2: [False, None, True]}))
    assert pass_hat_k(frame, k_max=1).iloc[0]["pass^1"] == pytest.approx((1.0 + 0.5) / 2)


def brute_flip(outcomes: list) -> float:
    pairs = list(itertools.combinations(outcomes, 2))
    return sum(a != b for a, b in pairs) / len(pairs)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=0, max_size=8),
       st.randoms(use_true_random=False))
def test_flip_rate_counts_disagreeing_pairs_whatever_the_order(outcomes, rnd) -> None:
    shuffled = list(outcomes)
    rnd.shuffle(shuffled)
    if len(outcomes) < 2:
        assert math.isnan(flip_rate(outcomes))
        return
    assert flip_rate(outcomes) == pytest.approx(brute_flip(outcomes))
    assert flip_rate(shuffled) == pytest.approx(flip_rate(outcomes))


def test_flip_rate_of_selected_sets_ignores_order_within_a_set() -> None:
    sets = [frozenset({"a", "b"}), frozenset({"b", "a"}), frozenset({"c"})]
    assert flip_rate(sets) == pytest.approx(2 / 3)


# -- Cohen's kappa -----------------------------------------------------------------------

def test_kappa_matches_statsmodels() -> None:
    rng = np.random.default_rng(12)
    truth = rng.choice(["relevant", "acceptable", "irrelevant"], 200, p=[0.2, 0.1, 0.7])
    other = np.where(rng.random(200) < 0.8, truth, rng.choice(["relevant", "irrelevant"], 200))
    labels = ["relevant", "acceptable", "irrelevant"]
    table = np.zeros((3, 3))
    for x, y in zip(truth, other, strict=True):
        table[labels.index(x), labels.index(y)] += 1
    assert cohens_kappa(list(truth), list(other)) == pytest.approx(sm_kappa(table).kappa)


def test_kappa_is_undefined_when_both_raters_use_one_label() -> None:
    assert math.isnan(cohens_kappa(["irrelevant"] * 4, ["irrelevant"] * 4))


# -- gate calibration: the A/A property ------------------------------------------------------

class NoisySelector:
    """A synthetic selector whose per-turn F1 varies from run to run.

    Scenarios differ in difficulty (so turns of one scenario are correlated); every
    run draws its hits and false alarms afresh.
    """

    def __init__(self, n_clusters: int = 20, per: int = 16, seed: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.clusters = np.repeat(np.arange(n_clusters), per)
        size = self.clusters.size
        difficulty = rng.beta(4, 3, n_clusters)[self.clusters]
        self.p_hit = np.clip(difficulty + rng.normal(0, 0.15, size), 0.05, 0.95)
        self.n_relevant = rng.integers(1, 4, size)
        self.p_false = rng.uniform(0.05, 0.4, size)

    def f1(self, rng: np.random.Generator, *, regressed: bool = False) -> np.ndarray:
        hits = rng.binomial(self.n_relevant, self.p_hit)
        if regressed:
            hits = hits - rng.binomial(hits, 0.5)  # half the correct picks removed
        false = rng.binomial(3, self.p_false)
        precision = hits / np.maximum(hits + false, 1)
        recall = hits / self.n_relevant
        return np.where(hits > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12),
                        0.0)


def test_a_calibrated_gate_neither_cries_wolf_nor_sleeps() -> None:
    selector = NoisySelector()
    rng = np.random.default_rng(2)
    repeats = np.stack([selector.f1(rng) for _ in range(10)])
    margin = calibrate_margin(repeats, selector.clusters)
    equal_fails = regressed_fails = 0
    for draw in range(20):
        baseline = selector.f1(rng)
        equal = non_inferiority(selector.f1(rng) - baseline, selector.clusters,
                                margin, seed=draw)
        worse = non_inferiority(selector.f1(rng, regressed=True) - baseline,
                                selector.clusters, margin, seed=draw)
        equal_fails += not equal.passed
        regressed_fails += not worse.passed
    assert equal_fails <= 1
    assert regressed_fails == 20


def test_the_calibrated_margin_holds_its_false_failure_rate() -> None:
    selector = NoisySelector(seed=3)
    rng = np.random.default_rng(4)
    repeats = np.stack([selector.f1(rng) for _ in range(10)])
    margin = calibrate_margin(repeats, selector.clusters)
    fails = [not non_inferiority(selector.f1(rng) - selector.f1(rng), selector.clusters,
                                 margin, n_resamples=500, seed=i).passed for i in range(300)]
    # 5 % allowed; three binomial standard errors above it is a calibration bug.
    assert np.mean(fails) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


def test_an_uncalibrated_small_margin_cries_wolf() -> None:
    selector = NoisySelector(seed=5)
    rng = np.random.default_rng(6)
    fails = sum(not non_inferiority(selector.f1(rng) - selector.f1(rng), selector.clusters,
                                    0.01, n_resamples=500, seed=i).passed for i in range(20))
    assert fails >= 10


def test_turns_needed_predicts_the_margin_of_a_larger_suite() -> None:
    rng = np.random.default_rng(7)
    small, large = NoisySelector(n_clusters=20, seed=8), NoisySelector(n_clusters=80, seed=8)
    margin_small = calibrate_margin(np.stack([small.f1(rng) for _ in range(8)]), small.clusters)
    margin_large = calibrate_margin(np.stack([large.f1(rng) for _ in range(8)]), large.clusters)
    cal_small = Calibration("noisy", "gold", "f1", margin_small, repeats=8,
                            turns=small.clusters.size, clusters=20)
    assert cal_small.turns_needed(margin_small / 2) == pytest.approx(4 * cal_small.turns, abs=1)
    assert cal_small.clusters_needed(margin_small / 2) == 80
    assert margin_large == pytest.approx(margin_small / 2, rel=0.25)


def test_identical_repeats_need_no_margin() -> None:
    values, clusters = clustered(13)
    margin = calibrate_margin(np.stack([values, values, values]), clusters)
    assert margin == 0.0
    assert non_inferiority(values - values, clusters, margin).passed


def test_calibration_skips_turns_unscored_in_any_draw_and_needs_two_draws() -> None:
    values, clusters = clustered(14)
    draws = np.stack([values, values + 0.01])
    draws[1, 5] = np.nan
    keep = np.arange(values.size) != 5
    assert calibrate_margin(draws, clusters) == calibrate_margin(draws[:, keep], clusters[keep])
    with pytest.raises(MemevalError, match="at least two equivalent draws"):
        calibrate_margin(values[None, :], clusters)


def test_resampled_draws_keep_each_turn_in_its_cluster() -> None:
    values, clusters = clustered(15, n_clusters=6, per=5)
    values[0] = np.nan
    draws = resampled_draws(values, clusters, n_draws=50, seed=1)
    assert draws.shape == (50, values.size)
    assert np.all(np.isnan(draws[:, 0]))
    for cluster in range(6):
        members = values[clusters == cluster]
        centre = np.nanmean(members)
        # Scaled deviations: the draws' spread matches the cluster's unbiased spread.
        assert np.nanmean(draws[:, clusters == cluster]) == pytest.approx(centre, abs=0.2)


def test_single_run_calibration_is_not_narrower_than_repeats() -> None:
    selector = NoisySelector(seed=9)
    rng = np.random.default_rng(10)
    from_repeats = calibrate_margin(np.stack([selector.f1(rng) for _ in range(10)]),
                                    selector.clusters)
    one_run = selector.f1(rng)
    from_one = calibrate_margin(resampled_draws(one_run, selector.clusters),
                                selector.clusters)
    assert from_one >= 0.9 * from_repeats


def test_memeval_calibrate_runs_the_documented_procedure() -> None:
    """`calibrate_frame` (the command's code) is `calibrate_margin` on the repeats."""
    selector = NoisySelector(n_clusters=8, per=5, seed=11)
    rng = np.random.default_rng(12)
    repeats = np.stack([selector.f1(rng) for _ in range(4)])
    rows = [{"scenario": f"s{c}", "turn_id": f"t{i}", "selector": "noisy", "judge": "gold",
             "repeat": r, "f1": repeats[r, i]}
            for r in range(4) for i, c in enumerate(selector.clusters)]
    import pandas as pd

    (found,) = calibrate_frame(pd.DataFrame(rows), metrics=("f1",))
    expected = calibrate_margin(repeats, [f"s{c}" for c in selector.clusters])
    assert found.aa_margin == pytest.approx(expected, abs=1e-4)
    assert found.margin == max(found.aa_margin, found.resolvable_margin)
    assert (found.repeats, found.turns, found.clusters) == (4, 40, 8)


def test_every_function_docs_statistics_names_is_called_by_the_product() -> None:
    """No statistic lives for the tests alone: what the doc describes, a command runs."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "statistics.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(?:[a-z_]+\.)?([a-z_]+)\(", doc))
    assert {"non_inferiority", "calibrate_margin", "cluster_bootstrap_mean"} <= named
    source = {p: p.read_text(encoding="utf-8") for p in (root / "memeval").rglob("*.py")}
    uncalled = [name for name in sorted(named)
                if not any(re.search(rf"(?<!def ){name}\(", text) for text in source.values())]
    assert not uncalled, f"docs/statistics.md names functions nothing calls: {uncalled}"
