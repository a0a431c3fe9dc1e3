"""memeval.stats and the repeat statistics against reference computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sp

from memeval.judges.agreement import cohens_kappa
from memeval.metrics import pass_hat_k, per_turn_frame, repeat_summary
from memeval.stats import cluster_mean_ci, cluster_ratio_ci, holm, wilson_ci


def wilson_reference(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 29), (29, 29), (7, 40), (150, 317)])
def test_wilson_matches_the_closed_form(k: int, n: int) -> None:
    assert wilson_ci(k, n) == pytest.approx(wilson_reference(k, n), abs=1e-9)


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
    ours = cluster_mean_ci(values, clusters, n_resamples=4000)
    per_cluster = values.reshape(25, 12).mean(axis=1)  # equal sizes: mean of means
    ref = sp.bootstrap((per_cluster,), np.mean, n_resamples=4000, method="percentile",
                       random_state=np.random.default_rng(0)).confidence_interval
    assert ours.value == pytest.approx(values.mean())
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), abs=0.015)
    assert (ours.n, ours.n_clusters) == (300, 25)


def test_a_micro_ratio_pools_counts() -> None:
    est = cluster_ratio_ci(np.array([1, 3, 0]), np.array([2, 4, 1]), ["a", "b", "c"])
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
