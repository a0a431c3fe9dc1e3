"""The gold judge, the judge registry, and agreement between two judges."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.errors import MemevalError
from memeval.judges import (
    GoldJudge,
    Judge,
    Judgement,
    JudgeRequest,
    MemoryVerdict,
    available_judges,
    resolve_judge,
)
from memeval.labels import GoldLabels
from memeval.scoring.agreement import agreement, cohens_kappa, verdict_pairs

LABELS = GoldLabels(relevant=frozenset({"testing.md", "@code-reviewer/style.md"}),
                    acceptable=frozenset({"ci.md"}), category="direct")


def request(selected: tuple[str, ...], labels: GoldLabels | None = LABELS) -> JudgeRequest:
    return JudgeRequest(turn_id="t1", query="how do I run tests?", manifest="",
                        candidates=("testing.md", "ci.md", "style.md", "@code-reviewer/style.md"),
                        selected=selected, labels=labels)


# -- gold judge --------------------------------------------------------------------------

def test_gold_verdicts_follow_the_labels_in_selection_order() -> None:
    scored = GoldJudge().score(request(("style.md", "testing.md", "ci.md")))
    assert scored.error is None and scored.judge == "gold"
    assert [(v.key, v.verdict) for v in scored.verdicts] == [
        ("style.md", "irrelevant"), ("testing.md", "relevant"), ("ci.md", "acceptable")]
    # The label is the reason: nothing to store on every verdict.
    assert not any(v.reason for v in scored.verdicts)


def test_gold_states_its_labels_so_recall_never_depends_on_candidate_grading() -> None:
    for judge in (GoldJudge(), GoldJudge(candidates=False)):
        scored = judge.score(request(("style.md",)))
        assert scored.relevant is not None and "testing.md" in scored.relevant
        assert "ci.md" in scored.acceptable


def test_gold_grades_every_candidate_for_recall() -> None:
    scored = GoldJudge().score(request(()))
    assert scored.verdicts == ()
    assert scored.candidate_verdicts is not None
    assert {v.key: v.verdict for v in scored.candidate_verdicts} == {
        "testing.md": "relevant", "ci.md": "acceptable", "style.md": "irrelevant",
        "@code-reviewer/style.md": "relevant"}
    assert GoldJudge(candidates=False).score(request(())).candidate_verdicts is None


def test_gold_without_labels_is_unscored_with_an_error() -> None:
    scored = GoldJudge().score(request(("testing.md",), labels=None))
    assert [v.verdict for v in scored.verdicts] == ["unscored"]
    assert "t1" in (scored.error or "") and "relevant:" in (scored.error or "")


def test_duplicated_selection_gets_a_verdict_per_entry() -> None:
    scored = GoldJudge().score(request(("testing.md", "testing.md")))
    assert [v.verdict for v in scored.verdicts] == ["relevant", "relevant"]


# -- judge registry --------------------------------------------------------------------------

def test_resolve_gold_and_its_params() -> None:
    built = resolve_judge("gold")
    assert isinstance(built, Judge) and built.name == "gold"
    assert resolve_judge("gold?candidates=0").name == "gold?candidates=0"
    with pytest.raises(MemevalError, match=r"valid parameters of 'gold': candidates \(bool"):
        resolve_judge("gold?strict=1")
    with pytest.raises(MemevalError, match=r"unknown judge 'golden'.*memeval.judges"):
        resolve_judge("golden")


def test_available_judges_lists_gold_and_lazy_claude() -> None:
    assert {"gold", "claude"} <= set(available_judges())


# -- agreement ---------------------------------------------------------------------------

def scored(turn_id: str, judge: str, verdicts: list[tuple[str, str]],
           candidates: list[tuple[str, str]] | None = None) -> Judgement:
    return Judgement(turn_id=turn_id, judge=judge,
                      verdicts=tuple(MemoryVerdict(k, v) for k, v in verdicts),  # type: ignore[arg-type]
                      candidate_verdicts=None if candidates is None else tuple(
                          MemoryVerdict(k, v) for k, v in candidates))  # type: ignore[arg-type]


def test_cohens_kappa_on_the_textbook_example() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o .7, p_e .5, κ .4
    a = ["relevant"] * 25 + ["irrelevant"] * 25
    b = ["relevant"] * 20 + ["irrelevant"] * 5 + ["relevant"] * 10 + ["irrelevant"] * 15
    assert cohens_kappa(a, b) == pytest.approx(0.4)
    assert cohens_kappa(a, a) == pytest.approx(1.0)
    assert math.isnan(cohens_kappa(["relevant"] * 3, ["relevant"] * 3))  # chance = 1
    with pytest.raises(MemevalError, match="'maybe' is not one of"):
        cohens_kappa(["maybe"], ["relevant"])


def textbook_turns() -> tuple[list[Judgement], list[Judgement]]:
    # The same 50 verdicts, two per turn, over 25 turns.
    a = ["relevant"] * 25 + ["irrelevant"] * 25
    b = ["relevant"] * 20 + ["irrelevant"] * 5 + ["relevant"] * 10 + ["irrelevant"] * 15
    ta, tb = [], []
    for t in range(25):
        keys = [f"m{2 * t}.md", f"m{2 * t + 1}.md"]
        ta.append(scored(f"t{t}", "claude:x", [(k, a[2 * t + i]) for i, k in enumerate(keys)]))
        tb.append(scored(f"t{t}", "gold", [(k, b[2 * t + i]) for i, k in enumerate(keys)]))
    return ta, tb


def test_agreement_kappa_confusion_and_ci() -> None:
    ta, tb = textbook_turns()
    result = agreement(ta, tb)
    assert (result.judge_a, result.judge_b) == ("claude:x", "gold")
    assert (result.n, result.n_turns) == (50, 25)
    assert result.kappa == pytest.approx(0.4)
    assert result.observed == pytest.approx(0.7)
    assert result.confusion.loc["relevant", "relevant"] == 20
    assert result.confusion.loc["relevant", "irrelevant"] == 5
    assert result.confusion.loc["irrelevant", "relevant"] == 10
    assert result.confusion.loc["irrelevant", "irrelevant"] == 15
    assert int(result.confusion.to_numpy().sum()) == 50
    assert result.kappa_ci_low < 0.4 < result.kappa_ci_high
    assert result.kappa_ci_low >= -1 and result.kappa_ci_high <= 1
    assert result.observed_ci_low <= 0.7 <= result.observed_ci_high
    assert agreement(ta, tb, seed=4).kappa_ci_low == agreement(ta, tb, seed=4).kappa_ci_low
    as_json = result.to_dict()
    assert as_json["confusion"]["irrelevant"]["relevant"] == 10


def test_unscored_and_one_sided_verdicts_are_excluded_and_counted() -> None:
    ta = [scored("t1", "a", [("x.md", "relevant"), ("y.md", "unscored")]),
          scored("t2", "a", [("z.md", "irrelevant")])]
    tb = [scored("t1", "gold", [("x.md", "relevant"), ("y.md", "relevant")]),
          scored("t2", "gold", [("z.md", "irrelevant"), ("w.md", "acceptable")])]
    result = agreement(ta, tb)
    assert (result.n, result.n_excluded) == (2, 2)
    pairs = verdict_pairs(ta, tb)
    assert pairs.loc[pairs["key"] == "w.md", "verdict_a"].isna().all()


def test_candidate_level_agreement() -> None:
    ta = [scored("t1", "a", [], [("x.md", "relevant"), ("y.md", "irrelevant")])]
    tb = [scored("t1", "gold", [], [("x.md", "relevant"), ("y.md", "relevant")])]
    result = agreement(ta, tb, level="candidates")
    assert result.n == 2 and result.observed == 0.5
    assert math.isnan(result.kappa_ci_low)  # one turn: no interval
    assert agreement(ta, tb).n == 0


def test_misaligned_turns_are_refused() -> None:
    with pytest.raises(MemevalError, match="same turns"):
        agreement([scored("t1", "a", [])], [])
    with pytest.raises(MemevalError, match="align the two lists"):
        agreement([scored("t1", "a", [])], [scored("t2", "b", [])])


def test_gold_against_itself_agrees_perfectly() -> None:
    judge = GoldJudge()
    turns = [judge.score(request(sel)) for sel in
             [("testing.md", "style.md"), ("ci.md",), ("style.md",), ("testing.md",)]]
    result = agreement(turns, turns)
    assert result.observed == 1.0 and result.kappa == pytest.approx(1.0)
    assert result.kappa_ci_low == pytest.approx(1.0) and result.kappa_ci_high == pytest.approx(1.0)


verdict = st.sampled_from(["relevant", "acceptable", "irrelevant"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(verdict, verdict), min_size=1, max_size=40))
def test_kappa_is_bounded_and_symmetric(pairs: list[tuple[str, str]]) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    k_ab, k_ba = cohens_kappa(a, b), cohens_kappa(b, a)
    assert (math.isnan(k_ab) and math.isnan(k_ba)) or k_ab == pytest.approx(k_ba)
    assert math.isnan(k_ab) or -1 - 1e-12 <= k_ab <= 1 + 1e-12


def test_a_judgement_read_from_any_sequence_holds_memory_verdicts():
    from memeval.judges.base import Judgement, MemoryVerdict

    raw = {"key": "a.md", "verdict": "relevant"}
    for verdicts in ([raw], (raw,), (MemoryVerdict("a.md", "relevant"), raw)):
        judgement = Judgement.from_dict({"judge": "x", "verdicts": verdicts}, "t1")
        assert judgement.verdicts == (MemoryVerdict("a.md", "relevant"),) * len(verdicts)
