"""The answer stage: does better selection give better answers?

A LoCoMo-shaped file of our own (tests/_locomo_facts.py; the real file is not ours to
ship) is imported and run with `none`, `bm25` and `oracle` and the offline
`extractive` answerer; a loopback OpenAI-compatible server plays the model answerer
and the answer judge.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.answers import DECLINE, AnswerRequest, ExtractiveAnswerer
from memeval.answers._model import NO_REFERENCE
from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.log import GivenAnswer, TurnResult, iter_results
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import import_locomo
from memeval.scoring.answer_metrics import exact_match, normalise_answer, token_f1
from memeval.testing import FakeMessagesServer, Fault
from tests._locomo_facts import write_locomo_like


@pytest.mark.parametrize(("given", "reference", "f1", "em"), [
    ("The Lisbon.", "lisbon", 1.0, 1.0),
    ("She moved to Lisbon in May", "Lisbon", 2 * (1 / 6) / (1 / 6 + 1), 0.0),  # 6 tokens
    ("7 May, 2023", "7 May 2023", 1.0, 1.0),
    ("Porto", "Lisbon", 0.0, 0.0),
    ("a cat and a dog", "cat dog", 1.0, 1.0),
])
def test_token_f1_and_exact_match_after_locomo_normalisation(given, reference, f1, em):
    assert token_f1(given, reference) == pytest.approx(f1)
    assert exact_match(given, reference) == em
    assert normalise_answer("The  Cat's, hat!") == "cats hat"


def test_extractive_answers_with_the_best_matching_sentence_or_declines():
    memory = ("<system-reminder>\nMemory: a.md:\n\n---\nname: greyhound notes\n"
              "description: about the greyhound\n---\nWe walked in the park. "
              "Tomas adopted a greyhound called Biscuit.\n</system-reminder>")
    request = AnswerRequest(turn_id="q1", question="What is the name of Tomas's greyhound?",
                            reminders=(memory,), startup="Today's date is 2023-06-09.")
    assert ExtractiveAnswerer().answer(request) == "Tomas adopted a greyhound called Biscuit."
    none = AnswerRequest(turn_id="q1", question="Which city is Kofi moving to?",
                         startup="Today's date is 2023-06-09.")
    assert ExtractiveAnswerer().answer(none) == DECLINE


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("locomo")
    import_locomo(write_locomo_like(folder / "locomo_like.json"), folder / "imported")
    config = RunConfig(scenarios=(str(folder / "imported" / "scenarios" / "*.yaml"),),
                       selectors=("none", "bm25?threshold=0.3", "oracle"),
                       answerer="extractive")
    from memeval.report import RunPage

    evaluate(config, folder / "run", progress=False, page=RunPage())
    return folder / "run"


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


def test_a_locomo_shaped_run_gives_answer_f1_per_selector_with_n_and_intervals(locomo_run):
    summary = _summary(locomo_run)
    overall = {r["selector"]: r for r in summary["overall"]}
    for row in overall.values():  # 6 questions with answers in each of 6 conversations
        assert row["answer_f1_n"] == 36 and row["answer_f1_n_clusters"] == 6
        assert row["answer_f1_ci_low"] <= row["answer_f1"] <= row["answer_f1_ci_high"]
        assert row["answer_correct_n"] == 0  # no answer judge: no verdict, not a pass
    floor, ceiling = overall["none"]["answer_f1"], overall["oracle"]["answer_f1"]
    assert floor == 0.0 and ceiling > 0.2
    answered = {r["category"] for r in summary["by_category"] if r["answer_f1_n"]}
    assert answered == {"locomo-single-hop"}
    assert len([r for r in summary["by_scenario"] if r["answer_f1_n"]]) == 3 * 6
    gap = {(g["metric"], g["selector"]): g["share_of_gap"] for g in summary["answer_gap"]}
    assert gap[("answer_f1", "none")] == 0.0 and gap[("answer_f1", "oracle")] == 1.0
    assert 0.0 <= gap[("answer_f1", "bm25?threshold=0.3")] <= 1.0
    assert "answer F1" in summary["table"]  # selection and answer side by side


def test_the_report_shows_selection_and_answer_metrics_side_by_side(locomo_run):
    html = (locomo_run / "index.html").read_text(encoding="utf-8")
    assert "answer F1" in html and "recall" in html


def test_abstention_questions_are_answered_but_have_no_token_score(locomo_run):
    rows = [r for r in iter_results(locomo_run) if "adversarial" in r.tags]
    assert rows and all(r.answered is not None and r.answer is None for r in rows)
    per_turn = [t for t in _summary(locomo_run)["per_turn"]
                if t["category"] == "locomo-adversarial"]
    assert per_turn and all(t["answer_f1"] is None for t in per_turn)


def test_rows_without_an_answer_stage_read_and_score_as_before(locomo_run):
    row = next(iter(iter_results(locomo_run)))
    data = row.to_dict()
    del data["answered"]
    old = TurnResult.from_dict(data)
    assert old.answered is None and "answered" not in old.to_dict()
    assert GivenAnswer.from_dict(row.answered.to_dict()) == row.answered


def test_an_answer_judge_without_an_answerer_is_refused(tmp_path):
    config = RunConfig(selectors=("none",), answer_judge="openai:gpt-4o-mini")
    with pytest.raises(MemevalError, match="--answerer"):
        evaluate(config, tmp_path / "run", progress=False)


# -- a model answerer and answer judge on a loopback OpenAI-compatible server ----------

def _tag(text: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found.group(1) if found else ""


def loopback_model(body: dict) -> str:
    """Answers as the extractive answerer would from the message it is sent, and
    judges an answer correct when it holds the gold answer (or declines where it
    should)."""
    system = body.get("system") or ""
    system = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
    message = body["messages"][-1]["content"]
    message = message if isinstance(message, str) else message[0]["text"]
    if "grade an assistant's answer" in system:
        gold, answer = _tag(message, "gold_answer"), _tag(message, "answer")
        if gold == NO_REFERENCE:
            right = "know" in answer
        else:
            right = normalise_answer(gold) in normalise_answer(answer)
        return json.dumps({"verdict": "correct" if right else "incorrect",
                           "reason": "compared with the gold answer"})
    question = _tag(message, "question")
    context = message.replace(f"<question>\n{question}\n</question>", "")
    return ExtractiveAnswerer().answer(AnswerRequest(turn_id="", question=question,
                                                     reminders=(context,)))


def test_a_loopback_answerer_is_judged_and_sees_the_surfaced_memories(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    import_locomo(write_locomo_like(tmp_path / "l.json", samples=2), tmp_path / "imported")
    with FakeMessagesServer(loopback_model) as server:
        spec = f"openai:gpt-4o-mini?base_url={server.url}/v1"
        result = CliRunner().invoke(cli, [
            "run", "--quiet", "--out", str(tmp_path / "run"),
            "--scenarios", str(tmp_path / "imported" / "scenarios" / "*.yaml"),
            "-s", "oracle", "-s", "none", "--answerer", spec, "--answer-judge", spec])
        requests = server.chat_requests()
    assert result.exit_code == 0, result.output
    rows = list(iter_results(tmp_path / "run"))
    oracle = [r for r in rows if r.selector == "oracle" and r.answer is not None]
    sent = [r.body["messages"][-1]["content"] for r in requests]
    for row in oracle:  # the answer request carried the memory as the model receives it
        memory = row.record.surfaced[0]
        assert any(f"<question>\n{row.query}\n</question>" in s and "<system-reminder>" in s
                   and memory.content.strip() in s for s in sent)
        assert row.answered.verdict in ("correct", "incorrect") and row.answered.judge == spec
        assert row.answered.prompt_hash.startswith("sha256:")
    summary = _summary(tmp_path / "run")
    overall = {r["selector"]: r for r in summary["overall"]}
    assert all(r.answered.verdict == "correct" for r in oracle)
    declined = [r for r in rows if r.selector == "none" and r.answer is None]  # adversarial
    assert declined and all(r.answered.text == DECLINE and r.answered.verdict == "correct"
                            for r in declined)  # declining is right where nothing was said
    assert overall["none"]["answer_correct"] == pytest.approx(2 / 14)
    assert overall["oracle"]["answer_correct"] == pytest.approx(12 / 14)
    assert overall["oracle"]["answer_correct_n"] == 14  # the abstention questions too
    agreement = {a["selector"]: a for a in summary["answer_agreement"]}
    assert agreement["oracle"]["n"] == 12 and not math.isnan(agreement["oracle"]["f1_when_correct"])
    assert summary["usage"]["answers"][spec]["calls"] > 0
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["answerer"]["prompt_hash"] == oracle[0].answered.prompt_hash
    assert config["answer_judge"]["name"] == spec


def test_an_openai_gpt_4o_mini_run_has_a_cost_not_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    import_locomo(write_locomo_like(tmp_path / "l.json", samples=1), tmp_path / "imported")
    with FakeMessagesServer(loopback_model) as server:
        spec = f"openai:gpt-4o-mini?base_url={server.url}/v1"
        result = CliRunner().invoke(cli, [
            "run", "--quiet", "--out", str(tmp_path / "run"), "-s", "oracle",
            "--scenarios", str(tmp_path / "imported" / "scenarios" / "*.yaml"),
            "--answerer", spec])
    assert result.exit_code == 0, result.output
    llm = _summary(tmp_path / "run")["llm"]
    assert llm["calls"] > 0 and llm["unpriced"] == 0 and llm["cost_usd"] > 0
    assert "genai-prices" in llm["price_table"] and "cost is unknown" not in result.output


def test_an_answerer_failure_is_counted_and_never_scored(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    import_locomo(write_locomo_like(tmp_path / "l.json", samples=1), tmp_path / "imported")
    with FakeMessagesServer(loopback_model) as server:
        server.inject(*[Fault.http(400)] * 7)  # every answer request of the 7 turns
        config = RunConfig(scenarios=(str(tmp_path / "imported" / "scenarios" / "*.yaml"),),
                           selectors=("oracle",),
                           answerer=f"openai:gpt-4o-mini?base_url={server.url}/v1")
        summary = evaluate(config, tmp_path / "run", progress=False).summary
    rows = list(iter_results(tmp_path / "run"))
    assert all(r.answered.text is None and "HTTP 400" in r.answered.error for r in rows)
    (row,) = summary["overall"]
    assert row["answer_f1"] is None and row["answer_f1_n"] == 0  # not a 0, not a pass
    assert summary["counts"]["oracle"]["answer_errors"] == 7
    assert any("the answerer failed on 7 of 7" in a for a in summary["alerts"])
    assert "answer F1" in summary["table"] and "— (n=0)" in summary["table"]


def test_compare_and_the_gate_accept_the_answer_metrics(locomo_run):
    from memeval.scoring.compare import compare_tables, per_turn_table
    from memeval.scoring.gate import run_gate

    turns = per_turn_table(locomo_run)
    none, oracle = (turns[turns["selector"] == s] for s in ("none", "oracle"))
    compared = compare_tables(none, oracle, pairs=[("none", "oracle")])
    answer = compared["pairs"][0]["overall"]["answer_f1"]
    assert answer["n_pairs"] == 36 and answer["significance"] == "better"
    worse = run_gate(none.assign(selector="oracle"), oracle, secondary=("answer_f1",))
    failed = {c.metric for c in worse.checks if c.status == "fail"}
    assert "answer_f1" in failed and not worse.passed
    same = run_gate(oracle, oracle, secondary=("answer_f1",))
    assert any(c.metric == "answer_f1" and c.status == "pass" for c in same.checks)


CONVERSATION = """\
id: said-earlier
now: 2026-01-01T00:00:00Z
{extra}
memdirs:
  project:
    files:
      a.md: {{content: "---\\ndescription: deploy steps\\n---\\nDeploy with make ship.\\n"}}
turns:
  - {{id: t1, query: the staging host is called falcon, category: none}}
  - {{id: t2, query: which host is staging, category: none, answer: falcon}}
"""


@pytest.mark.parametrize(("extra", "heard"), [("", True), ("turns_are: independent", False)])
def test_in_a_conversation_the_answerer_hears_the_users_earlier_messages(
        tmp_path, extra, heard):
    path = tmp_path / "s.yaml"
    path.write_text(CONVERSATION.format(extra=extra), encoding="utf-8")
    config = RunConfig(scenarios=(str(path),), selectors=("none",), answerer="extractive")
    evaluate(config, tmp_path / "run", progress=False)
    (row,) = [r for r in iter_results(tmp_path / "run") if r.turn_id == "t2"]
    assert (row.answered.text == "the staging host is called falcon") is heard
    assert (row.answered.text == DECLINE) is not heard
