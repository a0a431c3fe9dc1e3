"""answer_surfaced: the reference answer is in what reached the model, after the caps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.judges import resolve_judge
from memeval.run.config import RunConfig
from memeval.run.play import Unit, run_unit
from memeval.scenarios import import_longmemeval, load
from memeval.scoring.answers import answer_surfaced
from memeval.scoring.metrics import score_results


@pytest.mark.parametrize(("answer", "text", "found"), [
    ("Lisbon", "They fly to Lisbon, next May.", True),
    ("lisbon", "LISBON!", True),
    ("2023", "in 20230 years", False),
    ("New York", "new   york city", True),
    ("", "anything", False),
])
def test_the_matching_rule(answer: str, text: str, found: bool) -> None:
    assert answer_surfaced(answer, [text]) is found


def test_an_answer_past_the_4kb_cut_is_lost_though_the_oracle_picks_the_right_file(
        tmp_path: Path) -> None:
    """The oracle's recall is 1, yet the answer sits beyond what surfaces."""
    filler = " ".join(f"turn {i}: we talked about the weather and the garden." for i in range(200))
    sessions = [[{"role": "user", "content": filler},
                 {"role": "assistant", "content": "Your locker code is 4417.", "has_answer": True}]]
    records = [{
        "question_id": "q-locker", "question_type": "single-session-user",
        "question": "What is my locker code?", "answer": "4417",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["answer_s1"], "haystack_dates": ["2023/05/20 (Sat) 10:00"],
        "haystack_sessions": sessions, "answer_session_ids": ["answer_s1"],
    }]
    source = tmp_path / "lme.json"
    source.write_text(json.dumps(records))
    report = import_longmemeval(source, tmp_path / "out")
    scenario = load(report.scenarios[0])
    rows = run_unit(Unit(scenario, "oracle", 0), RunConfig(selectors=("oracle",)),
                    [resolve_judge("gold")])
    scored = score_results(rows).iloc[0]
    assert scored["recall"] == 1.0
    assert scored["answer_surfaced"] == 0.0  # cut off at 4 KB
