"""A scenario declares whether its turns are one conversation or independent questions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memeval.log import iter_results
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import ScenarioError, load, loads
from memeval.scenarios.importers import import_locomo, import_longmemeval
from memeval.scoring.metrics import score_results
from tests._locomo_like import write_locomo_like

DATA = Path(__file__).parent / "data" / "importers"

SCENARIO = """\
id: two-questions
now: 2026-01-01T00:00:00Z
{extra}
memdirs:
  project:
    files:
      a.md: {{content: "---\\ndescription: deploy steps\\n---\\nx\\n"}}
      b.md: {{content: "---\\ndescription: database notes\\n---\\ny\\n"}}
turns:
  - {{id: t1, query: how do I deploy, category: direct, relevant: [a.md]}}
  - {{id: t2, query: show me the database notes please, category: direct, relevant: [b.md]{t2}}}
"""


def _text(extra: str = "", t2: str = "") -> str:
    return SCENARIO.format(extra=extra, t2=t2)


def test_turns_are_a_conversation_unless_the_scenario_says_otherwise() -> None:
    scenario = loads(_text())
    assert scenario.turns_are == "conversation" and not scenario.independent
    assert [t.compact_before for t in scenario.turns] == [False, False]


def test_independent_turns_each_start_fresh() -> None:
    scenario = loads(_text("turns_are: independent"))
    assert scenario.independent
    assert all(t.compact_before for t in scenario.turns)


def test_an_unknown_turns_are_and_a_contradiction_are_reported() -> None:
    with pytest.raises(ScenarioError, match=r"turns_are: 'independant'.*did you mean"):
        loads(_text("turns_are: independant"))
    with pytest.raises(ScenarioError, match="compact_before: is false, but the scenario's "
                                            "turns are independent"):
        loads(_text("turns_are: independent", ", compact_before: false"))


def test_importers_mark_their_question_sets_independent(tmp_path: Path) -> None:
    for path in import_locomo(DATA / "locomo_tiny.json", tmp_path / "l").scenarios:
        assert load(path).independent
    for path in import_longmemeval(DATA / "longmemeval_tiny.json", tmp_path / "m").scenarios:
        assert load(path).independent


def _precision_is_hits_over_picks(run: Path) -> dict[str, int]:
    frame = score_results(list(iter_results(run)))
    neither = {}
    for selector, part in frame.groupby("selector"):
        picked = part[part["n_selected"] > 0]
        assert part["precision"].notna().sum() == len(picked), selector
        expected = picked["hits"] / picked["n_selected"]
        assert picked["precision"].tolist() == pytest.approx(expected.tolist()), selector
        neither[str(selector)] = int(part["acceptable_selected"].sum())
    return neither


def test_imported_questions_score_precision_as_hits_over_picks(tmp_path: Path) -> None:
    """On a LoCoMo-shaped set, a pick relevant only to an earlier question is a false
    positive: before, recency's repeats of earlier evidence counted as neither."""
    source = write_locomo_like(tmp_path / "locomo.json", samples=1, seed=3, sessions=(6, 8))
    report = import_locomo(source, tmp_path / "imported")
    config = RunConfig(scenarios=(str(tmp_path / "imported" / "scenarios"),),
                       selectors=("bm25", "recency"), concurrency=1)
    evaluate(config, tmp_path / "run", progress=False)
    assert report.turns > 100
    assert _precision_is_hits_over_picks(tmp_path / "run") == {"bm25": 0, "recency": 0}


def test_a_conversation_keeps_the_earlier_relevant_rule(tmp_path: Path) -> None:
    """t2 picks a.md, relevant at t1: acceptable in a conversation, a false positive
    between independent questions."""
    selector = "recency?k=2"
    for extra, expected in (("", 1.0), ("turns_are: independent", 0.5)):
        folder = tmp_path / (extra.split(":")[-1].strip() or "conversation")
        (folder / "scenarios").mkdir(parents=True)
        (folder / "scenarios" / "s.yaml").write_text(_text(extra), encoding="utf-8")
        run = folder / "run"
        evaluate(RunConfig(scenarios=(str(folder / "scenarios"),), selectors=(selector,),
                           concurrency=1), run, progress=False)
        frame = score_results(list(iter_results(run))).set_index("turn_id")
        assert frame.loc["t2", "precision"] == expected, textwrap.shorten(extra, 40)
