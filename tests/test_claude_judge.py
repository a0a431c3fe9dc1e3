"""The Claude judge through the real SDK against the fake server."""

from __future__ import annotations

import asyncio
import json

import pytest

from memeval.judges.base import Judge, JudgeRequest
from memeval.judges.claude import ClaudeJudge, build_judge_message, judge_schema
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door

KEY = "test-key-not-secret"
CONTENTS = {"testing.md": "---\ndescription: tests\n---\nRun the tests against a real database.",
            "role.md": "---\ndescription: role\n---\nThe user is a data scientist.",
            "deploy.md": "Deploy steps: run the tests, then push to staging."}


def turn(selected=("testing.md", "role.md"), turn_id="t1") -> JudgeRequest:
    return JudgeRequest(turn_id=turn_id, query="how do I run the database tests?",
                        manifest="- testing.md (...)", candidates=("testing.md", "role.md",
                                                                   "deploy.md"),
                        selected=tuple(selected), contents=CONTENTS,
                        descriptions={"testing.md": "run tests against a real database",
                                      "role.md": "user is a data scientist",
                                      "deploy.md": "deploy steps for the database"})


def judge(server: FakeMessagesServer, **kwargs) -> ClaudeJudge:
    door = open_door(server.url, api_key=KEY, max_retries=kwargs.pop("max_retries", 2),
                     batches=kwargs.pop("batches", False), poll_interval=0.01)
    return ClaudeJudge(client=door, **kwargs)


def test_is_a_judge_and_sends_structured_output():
    with FakeMessagesServer() as server:
        grader = judge(server, order="given")
        scored = grader.score(turn())
    assert isinstance(grader, Judge)
    (sent,) = server.message_requests()
    assert sent.body["output_config"]["format"]["schema"] == judge_schema(False)
    assert sent.body["model"] == "claude-sonnet-4-6"
    assert sent.body["messages"][0]["content"] == build_judge_message(
        turn(), ["testing.md", "role.md"], None)
    assert [(v.key, v.verdict) for v in scored.verdicts] == [
        ("testing.md", "relevant"), ("role.md", "irrelevant")]
    assert all(v.reason.endswith(".") for v in scored.verdicts)
    assert scored.error is None and scored.usage.calls == 1 and scored.candidate_verdicts is None


def test_grades_candidates_for_recall():
    with FakeMessagesServer() as server:
        scored = judge(server, grade_candidates=True).score(turn(selected=("role.md",)))
    assert "candidates" in server.message_requests()[0].body["output_config"]["format"][
        "schema"]["required"]
    assert {v.key: v.verdict for v in scored.candidate_verdicts} == {
        "testing.md": "relevant", "role.md": "irrelevant", "deploy.md": "acceptable"}


def test_unparseable_answer_is_unscored_never_irrelevant():
    with FakeMessagesServer(lambda body: "they all look fine") as server:
        scored = judge(server).score(turn())
    assert {v.verdict for v in scored.verdicts} == {"unscored"}
    assert "not JSON" in scored.verdicts[0].reason and "not JSON" in scored.error


def test_missing_or_invalid_verdicts_are_unscored_with_reason():
    answer = json.dumps({"verdicts": [{"key": "testing.md", "verdict": "maybe", "reason": "x"}]})
    with FakeMessagesServer(lambda body: answer) as server:
        scored = judge(server).score(turn())
    by_key = {v.key: v for v in scored.verdicts}
    assert by_key["testing.md"].verdict == "unscored" and "'maybe'" in by_key["testing.md"].reason
    assert by_key["role.md"].reason == "judge gave no verdict for this memory"


def test_api_failure_gives_unscored_and_error():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(500))
        scored = judge(server, max_retries=0).score(turn())
    assert {v.verdict for v in scored.verdicts} == {"unscored"}
    assert "HTTP 500" in scored.error


def test_shuffle_is_seeded_per_turn_and_recorded():
    grader = ClaudeJudge(order="shuffle", seed=3)
    many = turn(selected=tuple(f"m{i}.md" for i in range(8)))
    first = grader.presentations(many)
    assert first == grader.presentations(many)
    assert sorted(first[0][0]) == sorted(many.selected) and first[0][0] != list(many.selected)
    assert ClaudeJudge(order="shuffle", seed=4).presentations(many) != first
    assert grader.config()["order"] == "shuffle" and grader.config()["seed"] == 3


def test_both_orders_flag_position_dependent_verdicts():
    def first_is_relevant(body):  # a maximally position-biased judge
        text = body["messages"][0]["content"]
        keys = [part.split('"')[0] for part in text.split('<memory key="')[1:]]
        return json.dumps({"verdicts": [
            {"key": k, "verdict": "relevant" if i == 0 else "irrelevant", "reason": "r."}
            for i, k in enumerate(keys)]})

    with FakeMessagesServer(first_is_relevant) as server:
        scored = judge(server, order="both").score(turn())
    assert len(server.message_requests()) == 2
    assert {v.verdict for v in scored.verdicts} == {"unscored"}
    assert "presentation order" in scored.verdicts[0].reason
    with FakeMessagesServer() as server:
        stable = judge(server, order="both").score(turn())
    assert [v.verdict for v in stable.verdicts] == ["relevant", "irrelevant"]
    assert stable.usage.calls == 2


def test_duplicates_graded_once_reported_per_selection():
    with FakeMessagesServer() as server:
        scored = judge(server).score(turn(selected=("testing.md", "testing.md")))
    assert [v.key for v in scored.verdicts] == ["testing.md", "testing.md"]
    assert server.message_requests()[0].body["messages"][0]["content"].count(
        '<memory key="testing.md">') == 1


def test_empty_selection_needs_no_call():
    with FakeMessagesServer() as server:
        scored = judge(server).score(turn(selected=()))
    assert scored.verdicts == () and server.requests == [] and scored.usage.calls == 0


def test_ascore_and_score_many_through_batches():
    turns = [turn(), turn(selected=("deploy.md",), turn_id="t2"), turn(selected=())]
    with FakeMessagesServer() as server:
        asynced = asyncio.run(judge(server).ascore(turns[0]))
        batched = judge(server, batches=True).score_many(turns)
    assert [v.verdict for v in asynced.verdicts] == [v.verdict for v in batched[0].verdicts]
    assert [v.verdict for v in batched[1].verdicts] == ["relevant"]  # shares run, test
    assert batched[2].verdicts == ()
    batch_posts = [r for r in server.requests if r.path == "/v1/messages/batches"]
    assert len(batch_posts) == 1 and len(batch_posts[0].body["requests"]) == 2


def test_user_prompt_template_and_bad_order(tmp_path):
    own = tmp_path / "judge.j2"
    own.write_text("Grade.{% if grade_candidates %} Also candidates.{% endif %}")
    assert ClaudeJudge(prompt=str(own), grade_candidates=True).system_prompt == (
        "Grade. Also candidates.")
    with pytest.raises(ValueError, match="shuffle, both or given"):
        ClaudeJudge(order="sideways")
