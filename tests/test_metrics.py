"""Per-turn scoring rules, aggregates, paired comparison and repeats, on worked examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from memeval.errors import MemevalError
from memeval.labels import GoldLabels
from memeval.scoring.metrics import (
    aggregate,
    mcnemar_exact,
    minimal_detectable_difference,
    paired_compare,
    pass_hat_k,
    per_turn_frame,
    repeat_summary,
    score_turn,
)
from memeval.scoring.stats import cluster_bootstrap_mean, wilson_interval


def labels(relevant: list[str], acceptable: list[str] = ()) -> GoldLabels:  # type: ignore[assignment]
    return GoldLabels(relevant=frozenset(relevant), acceptable=frozenset(acceptable))


# -- empty-selection semantics (the table in the module doc) ----------------------------

def test_nothing_relevant_nothing_selected_is_a_correct_abstention() -> None:
    s = score_turn([], labels([]))
    # Precision and recall do not exist on a turn that needs nothing: never a free 1.0.
    assert math.isnan(s.precision) and math.isnan(s.recall) and math.isnan(s.f1)
    assert (s.exact_match, s.false_alarm, s.outcome) == (1.0, 0.0, "abstained")
    assert not s.needs_memory


def test_nothing_selected_but_something_relevant_is_a_miss_with_undefined_precision() -> None:
    s = score_turn([], labels(["a.md"]))
    assert math.isnan(s.precision)
    assert (s.recall, s.f1, s.exact_match, s.outcome, s.miss) == (0, 0, False, "miss", True)


def test_selection_when_nothing_is_relevant_is_a_false_alarm() -> None:
    s = score_turn(["x.md"], labels([]))
    assert math.isnan(s.precision) and math.isnan(s.recall)
    assert (s.false_alarm, s.false_positives, s.outcome) == (1.0, 1, "false_alarm")
    assert not s.exact_match


def test_acceptable_memories_are_neither_hits_nor_false_positives() -> None:
    only_ok = score_turn(["ok.md"], labels([], ["ok.md"]))
    assert (only_ok.false_alarm, only_ok.exact_match, only_ok.outcome) == (0, 1, "abstained")
    assert only_ok.acceptable_selected == 1 and only_ok.false_positives == 0
    with_hit = score_turn(["a.md", "ok.md"], labels(["a.md"], ["ok.md"]))
    assert (with_hit.precision, with_hit.recall, with_hit.exact_match) == (1, 1, True)
    missed = score_turn(["ok.md"], labels(["a.md"], ["ok.md"]))
    assert math.isnan(missed.precision) and missed.recall == 0 and missed.outcome == "miss"


def test_partial_selection() -> None:
    s = score_turn(["a.md", "x.md", "y.md"], labels(["a.md", "b.md"]))
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == 0.5
    assert s.f1 == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert (s.hits, s.false_positives, s.outcome) == (1, 2, "partial")


def test_recall_denominator_is_capped_at_five() -> None:
    relevant = [f"r{i}.md" for i in range(8)]
    five = score_turn(relevant[:5], labels(relevant))
    assert five.recall == 1.0 and five.exact_match and five.n_relevant == 8
    three = score_turn(relevant[:3], labels(relevant))
    assert three.recall == pytest.approx(3 / 5)


def test_duplicates_are_scored_once_and_counted() -> None:
    s = score_turn(["a.md", "a.md", "x.md"], labels(["a.md"]))
    assert (s.hits, s.false_positives, s.n_selected, s.duplicates) == (1, 1, 2, 1)
    assert s.precision == 0.5


def test_labels_may_be_a_plain_mapping() -> None:
    assert score_turn(["a.md"], {"relevant": ["a.md"]}).exact_match


def test_a_bare_string_is_refused_rather_than_read_as_characters() -> None:
    with pytest.raises(MemevalError, match="list of memory keys"):
        score_turn("a.md", labels(["a.md"]))  # type: ignore[arg-type]
    with pytest.raises(MemevalError, match="wrap it in a list"):
        score_turn(["a.md"], {"relevant": "a.md"})


# -- per_turn_frame ----------------------------------------------------------------------

def row(turn: str, selected: list[str], relevant: list[str], *, selector: str = "s",
        scenario: str = "sc", repeat: int = 0, **extra: object) -> dict[str, object]:
    return {"turn_id": turn, "scenario": scenario, "selector": selector, "category": "direct",
            "selected": selected, "relevant": relevant, "acceptable": [], "surfaced_bytes": 10,
            "error": None, "repeat": repeat, **extra}


def test_per_turn_frame_scores_rows_and_keeps_extra_columns() -> None:
    frame = per_turn_frame([row("t1", ["a.md"], ["a.md"], judge="gold"),
                            row("t2", [], ["b.md"], error="APIError: boom", judge="gold")])
    assert frame.loc[0, "f1"] == 1.0 and math.isnan(frame.loc[1, "f1"])
    assert list(frame["selector_error"]) == [False, True]
    assert list(frame["scored"]) == [True, False]
    assert frame.loc[1, "unscored_reason"] == "selector error"
    assert list(frame["judge"]) == ["gold", "gold"]
    assert frame.loc[0, "selected"] == ("a.md",)


def test_per_turn_frame_accepts_a_dataframe_and_the_selected_keys_alias() -> None:
    df = pd.DataFrame([{"turn_id": "t1", "selected_keys": ["a.md"], "relevant": ["a.md"]}])
    frame = per_turn_frame(df)
    assert frame.loc[0, "exact_match"]
    assert frame.loc[0, "category"] == "uncategorized"


def test_per_turn_frame_names_missing_columns() -> None:
    with pytest.raises(MemevalError, match="row 0 lacks relevant"):
        per_turn_frame([{"turn_id": "t1", "selected": []}])


def test_empty_input_gives_empty_frames_with_columns() -> None:
    frame = per_turn_frame([])
    assert frame.empty and "f1" in frame.columns
    assert aggregate(frame).empty and "f1_ci_low" in aggregate(frame).columns


# -- aggregate -----------------------------------------------------------------------------

def test_aggregate_means_and_cis_per_group() -> None:
    rows = [row(f"t{i}", ["a.md"] if i % 2 else [], ["a.md"], selector=sel, scenario=f"s{i}")
            for sel in ("A", "B") for i in range(10)]
    rows += [row(f"u{i}", [], [], selector="A", scenario=f"s{i}") for i in range(4)]
    table = aggregate(per_turn_frame(rows), by=["selector"])
    a = table.set_index("selector").loc["A"]
    assert a["n_turns"] == 14
    # recall is over the ten turns that need a memory; the four abstentions count
    # only in exact match and false alarm
    assert a["recall"] == pytest.approx(5 / 10) and a["recall_n"] == 10
    # precision is undefined on the five misses, so it rests on five turns
    assert a["precision_n"] == 5 and a["precision"] == 1.0
    assert a["false_alarm"] == 0.0 and a["false_alarm_n"] == 4
    assert a["exact_match"] == pytest.approx(9 / 14) and a["exact_match_n"] == 14
    assert a["recall_ci_low"] <= a["recall"] <= a["recall_ci_high"]
    assert 0 <= a["recall_ci_low"] < a["recall_ci_high"] <= 1


def test_aggregate_collapses_repeats_before_bootstrapping() -> None:
    once = [row(f"t{i}", ["a.md"] if i < 3 else [], ["a.md"], scenario=f"s{i % 3}")
            for i in range(6)]
    thrice = [dict(r, repeat=k) for r in once for k in range(3)]
    a = aggregate(per_turn_frame(once), by=["selector"]).iloc[0]
    b = aggregate(per_turn_frame(thrice), by=["selector"]).iloc[0]
    assert a["n_turns"] == b["n_turns"] == 6
    assert (a["recall_ci_low"], a["recall_ci_high"]) == (b["recall_ci_low"], b["recall_ci_high"])


def test_aggregate_is_reproducible_per_seed_and_rejects_unknown_columns() -> None:
    frame = per_turn_frame([row(f"t{i}", ["a.md"] if i % 3 else [], ["a.md"], scenario=f"s{i}")
                            for i in range(9)])
    assert aggregate(frame, seed=3).equals(aggregate(frame, seed=3))
    with pytest.raises(MemevalError, match="no column nope"):
        aggregate(frame, by=["nope"])


def test_error_rate_is_reported() -> None:
    frame = per_turn_frame([row("t1", [], ["a.md"], error="boom"), row("t2", ["a.md"], ["a.md"])])
    assert aggregate(frame, by=["selector"]).iloc[0]["error_rate"] == 0.5


def mean_ci(values, **options) -> tuple[float, float, float]:
    """The mean's interval with every value its own cluster (independent turns)."""
    values = np.asarray(values, dtype=float)
    found = cluster_bootstrap_mean(values, range(values.size), **options)
    return found.value, found.low, found.high


def test_mean_ci_edge_cases() -> None:
    assert all(math.isnan(v) for v in mean_ci([]))
    mean, low, high = mean_ci([0.4])
    assert mean == 0.4 and math.isnan(low) and math.isnan(high)
    assert mean_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)
    assert mean_ci([1.0, math.nan, 0.0])[0] == 0.5


def test_mean_ci_covers_the_true_mean_about_as_often_as_claimed() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    for trial in range(200):
        sample = rng.binomial(1, 0.3, size=60).astype(float)
        _, low, high = mean_ci(sample, n_resamples=500, seed=trial)
        covered += low <= 0.3 <= high
    assert 0.88 <= covered / 200 <= 0.99


# -- paired comparison ----------------------------------------------------------------------

def paired(n: int, a_hits: int, b_hits: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Turn i of scenario s{i % 10}: A and B pick the relevant memory on their first hits."""
    a = per_turn_frame([row(f"t{i}", ["r.md"] if i < a_hits else [], ["r.md"], selector="A",
                            scenario=f"s{i % 10}") for i in range(n)])
    b = per_turn_frame([row(f"t{i}", ["r.md"] if i < b_hits else [], ["r.md"], selector="B",
                            scenario=f"s{i % 10}") for i in range(n)])
    return a, b


def test_paired_compare_reports_difference_ci_and_mcnemar() -> None:
    a, b = paired(40, 30, 10)
    cmp = paired_compare(a, b, "recall")
    assert (cmp.selector_a, cmp.selector_b, cmp.n_pairs) == ("A", "B", 40)
    assert cmp.mean_diff == pytest.approx(0.5)
    assert cmp.ci_low <= 0.5 <= cmp.ci_high and cmp.ci_low > 0
    assert (cmp.a_only, cmp.b_only) == (20, 0)
    assert cmp.n_clusters == 10 and cmp.p_value < 0.001
    assert cmp.mcnemar_p == pytest.approx(2 * 0.5**20)
    assert not cmp.underpowered and cmp.warning is None


def test_small_differences_on_few_turns_are_flagged_underpowered() -> None:
    a, b = paired(8, 4, 3)
    cmp = paired_compare(a, b, "recall")
    assert cmp.underpowered
    assert cmp.mde > abs(cmp.mean_diff)
    assert "8 paired turns" in (cmp.warning or "")


def test_only_shared_turns_are_paired() -> None:
    a, b = paired(6, 3, 3)
    extra = per_turn_frame([row("z9", [], ["r.md"], selector="A")])
    cmp = paired_compare(pd.concat([a, extra], ignore_index=True), b, "recall")
    assert (cmp.n_pairs, cmp.unmatched_a, cmp.unmatched_b) == (6, 1, 0)


def test_turns_where_the_metric_is_undefined_are_left_out() -> None:
    a, b = paired(6, 4, 2)
    cmp = paired_compare(a, b, "precision")  # B's four misses have no precision
    assert cmp.n_pairs == 2


def test_too_few_pairs_warns() -> None:
    a, b = paired(1, 1, 0)
    cmp = paired_compare(a, b, "f1")
    assert cmp.underpowered and math.isnan(cmp.mde) and "too few" in (cmp.warning or "")


def test_minimal_detectable_difference_matches_the_paired_t_test_tables() -> None:
    # G*Power: two-sided paired t-test, alpha .05, power .8 -> dz = 0.9956 at n=10,
    # 0.5292 at n=30, 0.2829 at n=100.
    assert minimal_detectable_difference(1.0, 10) == pytest.approx(0.9956, abs=1e-3)
    assert minimal_detectable_difference(1.0, 30) == pytest.approx(0.5292, abs=1e-3)
    assert minimal_detectable_difference(2.0, 100) == pytest.approx(2 * 0.2829, abs=2e-3)
    assert minimal_detectable_difference(0.0, 10) == 0.0


def test_mcnemar_exact_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 * 0.5**6)


# -- repeats -------------------------------------------------------------------------------

def test_flip_rate_counts_changes_of_the_selected_set() -> None:
    picks = [["a.md"], ["a.md"], ["b.md"], ["a.md"], ["a.md", "b.md"]]
    rows = [row("t1", p, ["a.md"], repeat=k) for k, p in enumerate(picks)]
    rows += [row("t2", ["b.md", "a.md"] if k % 2 else ["a.md", "b.md"], ["a.md"], repeat=k)
             for k in range(3)]
    rows += [row("t3", ["a.md"], ["a.md"])]
    summary = repeat_summary(per_turn_frame(rows)).set_index("turn_id")
    # sets {a}, {a}, {b}, {a}, {a,b}: of 10 pairs, 3 agree ({a} thrice)
    assert summary.loc["t1", "flip_rate"] == pytest.approx(7 / 10)
    assert summary.loc["t1", "distinct_sets"] == 3
    assert summary.loc["t1", "recall"] == pytest.approx(4 / 5)
    assert summary.loc["t2", "flip_rate"] == 0.0  # order changes, the set does not
    assert math.isnan(summary.loc["t3", "flip_rate"])
    assert bool(summary.loc["t3", "pass_all"]) and not bool(summary.loc["t1", "pass_all"])


def test_pass_hat_k_uses_the_unbiased_estimator() -> None:
    # t1 passes 2 of 4 repeats, t2 all 4.
    rows = [row("t1", ["a.md"] if k < 2 else [], ["a.md"], repeat=k) for k in range(4)]
    rows += [row("t2", ["a.md"], ["a.md"], repeat=k) for k in range(4)]
    table = pass_hat_k(per_turn_frame(rows)).iloc[0]
    assert table["pass^1"] == pytest.approx((0.5 + 1) / 2)
    assert table["pass^2"] == pytest.approx((1 / 6 + 1) / 2)  # C(2,2)/C(4,2)
    assert table["pass^3"] == pytest.approx((0 + 1) / 2)
    assert table["pass^4"] == pytest.approx(0.5)
    with pytest.raises(MemevalError, match="k_max=5"):
        pass_hat_k(per_turn_frame(rows), k_max=5)


def test_flip_rate_does_not_depend_on_the_order_of_repeats() -> None:
    picks = [["a.md"], ["b.md"], ["a.md"], ["b.md"]]
    forward = [row("t1", p, ["a.md"], repeat=k) for k, p in enumerate(picks)]
    grouped = [row("t1", p, ["a.md"], repeat=k) for k, p in enumerate(sorted(picks))]
    rates = [repeat_summary(per_turn_frame(r)).iloc[0]["flip_rate"] for r in (forward, grouped)]
    assert rates[0] == rates[1] == pytest.approx(4 / 6)


def test_unscored_repeats_are_neither_successes_nor_failures() -> None:
    rows = [row("t1", ["a.md"], ["a.md"], repeat=0), row("t1", [], ["a.md"], repeat=1,
                                                         error="boom")]
    frame = per_turn_frame(rows)
    assert pass_hat_k(frame, k_max=1).iloc[0]["pass^1"] == 1.0
    assert bool(repeat_summary(frame).iloc[0]["pass_all"])


def test_pass_hat_k_is_per_judge_not_pooled() -> None:
    rows = [row("t1", ["a.md"], ["a.md"], judge="gold"),
            row("t1", ["a.md"], [], judge="model")]  # the model calls it a false alarm
    table = pass_hat_k(per_turn_frame(rows)).set_index("judge")
    assert table.loc["gold", "pass^1"] == 1.0 and table.loc["model", "pass^1"] == 0.0


def test_cluster_interval_is_wider_than_a_turn_interval_when_scenarios_differ() -> None:
    # Ten scenarios, each all-hit or all-miss: turns of one scenario move together.
    values = np.repeat([1.0, 0.0] * 5, 10)
    clusters = np.repeat([f"s{i}" for i in range(10)], 10)
    by_scenario = cluster_bootstrap_mean(values, clusters)
    by_turn = cluster_bootstrap_mean(values, range(values.size))
    assert by_scenario.n == 100 and by_scenario.n_clusters == 10
    assert (by_scenario.high - by_scenario.low) > 2 * (by_turn.high - by_turn.low)


def test_wilson_interval_is_never_zero_width() -> None:
    found = wilson_interval(0, 29)
    low, high = found.low, found.high
    assert low == 0.0 and high == pytest.approx(0.1170, abs=1e-3)


def test_a_judge_errored_turn_is_unscored_never_a_perfect_pick() -> None:
    """A judge that failed gives no evidence: the turn is unscored (F1 NaN), even when
    the pick happens to be the relevant memory (scored, it would read F1 1.0)."""
    frame = per_turn_frame([{"scenario": "s", "turn_id": "t1", "selected": ["a.md"],
                             "relevant": ["a.md"], "judge_error": "judge timed out"}])
    turn = frame.iloc[0]
    assert not turn["scored"] and turn["unscored_reason"] == "judge error"
    assert bool(turn["judge_error"]) and math.isnan(turn["f1"]) and turn["outcome"] == "unscored"
    table = aggregate(frame, by=["selector"]).iloc[0]
    assert table["n_scored"] == 0 and table["f1_n"] == 0 and table["judge_error_rate"] == 1.0
