"""Property tests of the metric functions: bounds, symmetry, intervals holding their estimate."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.metrics import (
    CAP,
    aggregate,
    mean_ci,
    paired_compare,
    pass_hat_k,
    per_turn_frame,
    repeat_summary,
    score_turn,
)

KEYS = [f"m{i}.md" for i in range(12)]
keys = st.lists(st.sampled_from(KEYS), max_size=8)
key_sets = st.frozensets(st.sampled_from(KEYS), max_size=8)
FAST = settings(max_examples=25, deadline=None,  # pandas-heavy: keep CI quick
                suppress_health_check=[HealthCheck.too_slow])


@st.composite
def turn_labels(draw: st.DrawFn) -> dict[str, frozenset[str]]:
    relevant = draw(key_sets)
    acceptable = draw(key_sets) - relevant
    return {"relevant": relevant, "acceptable": acceptable}


@given(selected=keys, labels=turn_labels())
def test_scores_stay_in_bounds_and_agree_with_each_other(
        selected: list[str], labels: dict[str, frozenset[str]]) -> None:
    s = score_turn(selected, labels)
    needed = bool(labels["relevant"])
    assert s.needs_memory == needed
    # precision, recall and F1 exist only on turns that need a memory; false alarm
    # only on turns that need none
    assert math.isnan(s.recall) == math.isnan(s.f1) == (not needed)
    assert math.isnan(s.false_alarm) == needed
    assert math.isnan(s.recall) or 0.0 <= s.recall <= 1.0
    assert math.isnan(s.f1) or 0.0 <= s.f1 <= 1.0
    assert math.isnan(s.precision) or 0.0 <= s.precision <= 1.0
    # precision is undefined when nothing was needed, or nothing scorable came
    assert math.isnan(s.precision) == (not needed or s.hits + s.false_positives == 0)
    complete = s.recall == 1.0 if needed else True
    assert s.exact_match == float(complete and s.false_positives == 0)
    if not needed:
        assert s.false_alarm == float(s.false_positives > 0)
    assert s.hits + s.false_positives + s.acceptable_selected == s.n_selected
    assert s.n_selected + s.duplicates == len(selected)
    if not math.isnan(s.precision):
        assert min(s.precision, s.recall) - 1e-12 <= s.f1 <= max(s.precision, s.recall) + 1e-12
    assert s.miss == (bool(labels["relevant"]) and s.hits == 0)


@given(labels=turn_labels())
def test_selecting_the_relevant_memories_is_an_exact_match(
        labels: dict[str, frozenset[str]]) -> None:
    chosen = sorted(labels["relevant"])[:CAP]
    s = score_turn(chosen, labels)
    assert s.exact_match == 1.0
    if labels["relevant"]:
        assert s.recall == 1.0 and s.f1 == 1.0
    else:
        assert s.false_alarm == 0.0


@given(selected=keys, labels=turn_labels(), extra=st.sampled_from(KEYS))
def test_one_more_pick_moves_scores_the_right_way(
        selected: list[str], labels: dict[str, frozenset[str]], extra: str) -> None:
    before = score_turn(selected, labels)
    after = score_turn([*selected, extra], labels)
    if labels["relevant"]:
        assert after.recall >= before.recall  # picking more never loses a hit
    else:
        assert after.false_alarm >= before.false_alarm  # nor makes noise quieter
    if extra not in labels["relevant"] and not (math.isnan(before.precision)
                                                 or math.isnan(after.precision)):
        assert after.precision <= before.precision  # noise never helps precision


values = st.lists(st.one_of(st.floats(0, 1), st.just(float("nan"))), min_size=0, max_size=40)


@FAST
@given(data=values, seed=st.integers(0, 1000))
def test_ci_contains_the_point_estimate_and_stays_in_the_data_range(
        data: list[float], seed: int) -> None:
    mean, low, high = mean_ci(data, n_resamples=200, seed=seed)
    finite = [v for v in data if not math.isnan(v)]
    if len(finite) < 2:
        assert math.isnan(low) and math.isnan(high)
        return
    assert low <= mean <= high
    assert min(finite) - 1e-12 <= low and high <= max(finite) + 1e-12


@st.composite
def selector_frames(draw: st.DrawFn, n_selectors: int = 2) -> list:
    n_turns = draw(st.integers(1, 12))
    turns = [(i, f"t{i}", draw(key_sets.filter(lambda s: len(s) <= 3))) for i in range(n_turns)]
    frames = []
    for name in "AB"[:n_selectors]:
        rows = [{"turn_id": t, "scenario": f"sc{i % 4}", "category": "c", "selector": name,
                 "selected": draw(st.lists(st.sampled_from(KEYS[:6]), max_size=4)),
                 "relevant": sorted(rel), "repeat": 0} for i, t, rel in turns]
        frames.append(per_turn_frame(rows))
    return frames


@FAST
@given(frames=selector_frames(), metric=st.sampled_from(["f1", "recall", "precision",
                                                         "exact_match"]))
def test_paired_difference_is_antisymmetric(frames: list, metric: str) -> None:
    a, b = frames
    ab = paired_compare(a, b, metric, n_resamples=200, seed=5)
    ba = paired_compare(b, a, metric, n_resamples=200, seed=5)
    assert ab.n_pairs == ba.n_pairs
    if ab.n_pairs == 0:
        return
    assert ab.mean_diff == pytest.approx(-ba.mean_diff, abs=1e-12)
    if not math.isnan(ab.ci_low):
        assert ab.ci_low == pytest.approx(-ba.ci_high, abs=1e-9)
        assert ab.ci_high == pytest.approx(-ba.ci_low, abs=1e-9)
        assert ab.ci_low <= ab.mean_diff <= ab.ci_high
    assert (ab.a_only, ab.b_only) == (ba.b_only, ba.a_only)
    assert ab.mcnemar_p == pytest.approx(ba.mcnemar_p)
    assert 0.0 <= ab.mcnemar_p <= 1.0
    assert ab.underpowered == ba.underpowered
    assert (math.isnan(ab.mde) and math.isnan(ba.mde)) or ab.mde == pytest.approx(ba.mde)


@FAST
@given(frames=selector_frames(n_selectors=1))
def test_a_selector_against_itself_differs_by_nothing(frames: list) -> None:
    (a,) = frames
    cmp = paired_compare(a, a, "exact_match", n_resamples=200)
    assert cmp.mean_diff == 0.0 and cmp.a_only == cmp.b_only == 0 and cmp.mcnemar_p == 1.0


@FAST
@given(frames=selector_frames())
def test_aggregate_cis_hold_their_estimates(frames: list) -> None:
    import pandas as pd

    table = aggregate(pd.concat(frames, ignore_index=True), by=["selector"], n_resamples=200)
    for _, r in table.iterrows():
        for m in ("precision", "recall", "f1", "exact_match"):
            if r[f"{m}_n"] >= 2 and not math.isnan(r[f"{m}_ci_low"]):
                assert r[f"{m}_ci_low"] <= r[m] <= r[f"{m}_ci_high"]
            if not math.isnan(r[m]):
                assert 0.0 <= r[m] <= 1.0


@FAST
@given(n_repeats=st.integers(1, 5), picks=st.data())
def test_pass_hat_k_falls_with_k_and_flip_rate_is_a_rate(n_repeats: int,
                                                         picks: st.DataObject) -> None:
    rows = [{"turn_id": f"t{t}", "scenario": "sc", "selector": "A", "repeat": k,
             "relevant": ["m0.md"],
             "selected": picks.draw(st.lists(st.sampled_from(KEYS[:3]), max_size=2))}
            for t in range(4) for k in range(n_repeats)]
    frame = per_turn_frame(rows)
    curve = pass_hat_k(frame).iloc[0]
    values = [curve[f"pass^{k}"] for k in range(1, n_repeats + 1)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(values))
    assert values[0] == pytest.approx(frame["exact_match"].mean())
    flips = repeat_summary(frame)["flip_rate"]
    assert flips.isna().all() if n_repeats == 1 else flips.between(0, 1).all()
