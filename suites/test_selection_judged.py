"""The LLM-judged suite: the Claude judge grades what each selection surfaced.

One item per scenario turn × selector, like the selection suite, scored by the
`--memeval-judge` model judge (default `claude`) instead of the gold labels: its
per-query precision is recorded (user_properties, run folder) and gated only through
the session-end statistics, never asserted per query. An item fails only when the
judge could not grade the turn (an API error, or a cassette without this request).

Where answers come from: `--memeval-replay CASSETTE`, else the live API when
`ANTHROPIC_API_KEY` is set, else the committed cassette below (recorded for the
default `oracle` selector over the bundled fixtures; re-record it with
`python suites/cassettes/record.py` after changing a prompt or a fixture).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.memeval_suite, pytest.mark.llm(cassette="cassettes/judged.jsonl")]


def test_selection_judged(memeval_judged_turn, pytestconfig):
    from memeval.plugin import judged_name

    problem = memeval_judged_turn.judge_error(judged_name(pytestconfig))
    if problem and "CassetteMiss" in problem:
        problem += ("\n(a prompt, model, selector or fixture changed since the cassette was "
                    "recorded: run `python suites/cassettes/record.py`, or pass "
                    "--memeval-record with a key)")
    if problem:
        pytest.fail(f"{memeval_judged_turn.case.id}: {problem}", pytrace=False)
