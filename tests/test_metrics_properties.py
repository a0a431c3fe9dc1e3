"""Property tests of the metric functions: bounds, symmetry, intervals holding their estimate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.scoring import metrics
from memeval.scoring.catalog import PER_TURN, WILSON
from memeval.scoring.metrics import (
    CAP,
    aggregate,
    paired_compare,
    pass_hat_k,
    per_turn_frame,
    repeat_summary,
    score_turn,
)
from memeval.scoring.stats import (
    Interval,
    cluster_bootstrap_mean,
    cluster_bootstrap_ratio,
    wilson_interval,
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
    found = cluster_bootstrap_mean(data, range(len(data)), n_resamples=200, seed=seed)
    mean, low, high = found.value, found.low, found.high
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


@st.composite
def run_frames(draw: st.DrawFn) -> pd.DataFrame:
    """A scored run as a summary sees it: repeats, two judges, unscored turns, turns
    needing nothing, unknown recall, answers not always checked."""
    rows = []
    for t in range(draw(st.integers(1, 14))):
        relevant = sorted(draw(key_sets.filter(lambda s: len(s) <= 3)))
        scenario, category = draw(st.sampled_from(["s0", "s1", "s2"])), draw(st.sampled_from("ab"))
        for selector, judge, repeat in itertools.product("AB", ["gold", "llm"], range(2)):
            if rows and not draw(st.booleans()):
                continue
            trouble = draw(st.sampled_from([None] * 6 + ["error", "judge_error", "unscored"]))
            rows.append({
                "turn_id": f"t{t}", "scenario": scenario, "category": category,
                "selector": selector, "judge": judge, "repeat": repeat, "relevant": relevant,
                "selected": draw(st.lists(st.sampled_from(KEYS[:6]), max_size=4)),
                "acceptable": ["m5.md"] if draw(st.booleans()) else [],
                "recall_known": judge == "gold" or draw(st.booleans()),
                "surfaced_bytes": draw(st.integers(0, 4000)),
                "answer_surfaced": draw(st.sampled_from([0.0, 1.0, math.nan])),
                "error": "boom" if trouble == "error" else None,
                "judge_error": "bad" if trouble == "judge_error" else None,
                "unscored": metrics.UNSCORED_UNGRADED if trouble == "unscored" else None})
    return per_turn_frame(rows)


def turns_the_pandas_way(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Repeats collapsed as `_per_turn` first did it, column by column in pandas."""
    group = [*by, *(c for c in ("selector", "judge", "scenario", "turn_id") if c not in by)]
    flags = ["selector_error", "judge_error", "selector_invalid_output", "judge_invalid_output",
             "scored", "hits", "n_relevant"]
    numeric = frame[[*group, *PER_TURN, *flags]].copy()
    numeric["capped"] = np.minimum(numeric["n_relevant"], CAP).where(
        frame["needs_memory"].astype(bool) & frame["recall"].notna())
    numeric["recalled"] = np.minimum(numeric["hits"], numeric["capped"])
    numeric["judged"] = (numeric["hits"] + frame["false_positives"]).where(
        frame["needs_memory"].astype(bool))
    numeric.loc[~frame["scored"].astype(bool), ["hits", "recalled", "judged"]] = math.nan
    for m in [*PER_TURN, *flags, "capped", "recalled", "judged"]:
        numeric[m] = numeric[m].astype(float)
    return numeric.groupby(group, dropna=False, sort=True).mean().reset_index()


def aggregate_one_figure_at_a_time(frame: pd.DataFrame, by: list[str],
                                   n_resamples: int) -> pd.DataFrame:
    """The aggregate as it was first written: a pandas group and one interval per figure."""
    options = {"n_resamples": n_resamples}
    turns = turns_the_pandas_way(frame, by)
    pd.testing.assert_frame_equal(metrics._per_turn(frame, by, PER_TURN), turns,
                                  check_exact=True)
    grouped_rows = frame.groupby(by, dropna=False, sort=True) if by else [((), frame)]
    reasons = {(k if isinstance(k, tuple) else (k,)): metrics._reasons(g)
               for k, g in grouped_rows}
    out = []
    for key, group in turns.groupby(by, dropna=False, sort=True) if by else [((), turns)]:
        clusters = group["scenario"].tolist()
        scored = group["scored"] > 0
        row = dict(zip(by, key, strict=True))
        row.update(n_turns=len(group), n_scored=int(scored.sum()),
                   unscored=int((~scored).sum()), unscored_reasons=reasons.get(key, {}),
                   n_clusters=len(set(clusters)),
                   selector_error_rate=float(group["selector_error"].mean()),
                   judge_error_rate=float(group["judge_error"].mean()),
                   error_rate=float(((group["selector_error"] + group["judge_error"]) > 0)
                                    .mean()),
                   selector_invalid_output_rate=float(group["selector_invalid_output"].mean()),
                   judge_invalid_output_rate=float(group["judge_invalid_output"].mean()))
        for m in PER_TURN:
            values = group[m].to_numpy(dtype=float)
            est = cluster_bootstrap_mean(values, clusters, **options)
            if m in WILSON:
                bounds = wilson_interval(round(np.nansum(values)), est.n)
                est = Interval(est.value, bounds.low, bounds.high, est.n, est.n_clusters)
            metrics._put(row, m, est)
        metrics._put(row, "micro_precision", cluster_bootstrap_ratio(
            group["hits"], group["judged"], clusters, **options))
        metrics._put(row, "micro_recall", cluster_bootstrap_ratio(
            group["recalled"], group["capped"], clusters, **options))
        out.append(row)
    return pd.DataFrame(out, columns=aggregate(frame.iloc[:0], by=by).columns)


@FAST
@given(frame=run_frames(),
       by=st.sampled_from([[], ["selector", "judge"], ["selector", "judge", "category"],
                           ["selector", "judge", "scenario"], ["scenario"]]),
       n_resamples=st.sampled_from([50, 2000]))
def test_aggregate_equals_one_interval_per_figure(frame: pd.DataFrame, by: list[str],
                                                  n_resamples: int) -> None:
    got = aggregate(frame, by=by, n_resamples=n_resamples)
    want = aggregate_one_figure_at_a_time(frame, by, n_resamples)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for a, b in zip(got["unscored_reasons"], want["unscored_reasons"], strict=True):
        assert list(a.items()) == list(b.items())  # the same order in summary.json


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
