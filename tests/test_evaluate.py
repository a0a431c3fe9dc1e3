"""The main job end to end on a small scenario: files written, scores sane, resume exact."""

from __future__ import annotations

import json
import math
import textwrap

import pytest

from memeval.errors import MemevalError
from memeval.log import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    SUMMARY_FILE,
    read_results,
)
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scoring.summary import summarize
from memeval.selectors.base import SelectionResult, SyncSelector
from memeval.usage import Usage

SCENARIO = textwrap.dedent("""\
    id: tiny
    description: a small shop with three memories
    now: 2026-11-30T12:00:00Z
    mode: recall
    project_root: /home/dev/tiny
    default_age_days: 3
    memdirs:
      project:
        files:
          testing.md:
            content: |
              ---
              name: testing
              description: run the test suite against a real postgres database, never sqlite
              type: feedback
              ---
              Integration tests need the docker postgres service.
          deploy.md:
            age_days: 20
            content: |
              ---
              name: deploy
              description: production deploys go through the release train on thursdays
              type: project
              ---
              Ask in #release before merging.
          grafana.md:
            content: |
              ---
              name: grafana
              description: checkout latency dashboard lives in grafana under shop/checkout
              type: reference
              ---
              https://grafana.example/d/checkout
    turns:
      - id: t1
        query: how do I run the test suite against the database?
        category: direct
        why: testing.md states the database rule
        relevant: [testing.md]
      - id: t2
        query: when can I ship this change to production?
        category: direct
        why: deploy.md holds the release rule
        relevant: [deploy.md]
      - id: t3
        query: please rename this variable to something clearer
        category: none
        why: no memory is about naming
        relevant: []
""")


@pytest.fixture
def scenario_path(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(SCENARIO)
    return path


def _config(path, **kw):
    return RunConfig(scenarios=(str(path),), selectors=("oracle", "none", "bm25"),
                     concurrency=2, **kw)


def _overall(summary, selector):
    return next(r for r in summary["overall"] if r["selector"] == selector)


def test_run_writes_the_run_folder_and_scores_the_baselines(tmp_path, scenario_path):
    run_dir = tmp_path / "run"
    outcome = evaluate(_config(scenario_path), run_dir, progress=False)
    for name in (RESULTS_FILE, SUMMARY_FILE, CONFIG_FILE):
        assert (run_dir / name).is_file(), name
    assert not (run_dir / INCOMPLETE_MARKER).exists()
    assert outcome.rows == 9  # 3 turns × 3 selectors × 1 judge
    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    oracle, none = _overall(summary, "oracle"), _overall(summary, "none")
    assert oracle["precision"] == 1.0 and oracle["recall"] == 1.0
    assert oracle["exact_match"] == 1.0
    # none abstains: a miss on the two turns that need a memory (precision has no
    # turn to rest on), right on the one that needs nothing
    assert none["recall"] == 0.0 and none["recall_n"] == 2
    assert none["precision"] is None and none["precision_n"] == 0
    assert none["false_alarm"] == 0.0 and none["false_alarm_n"] == 1
    none_rows = [r for r in read_results(run_dir) if r.selector == "none"]
    assert all(r.selected == () for r in none_rows)
    config = json.loads((run_dir / CONFIG_FILE).read_text())
    assert config["config"]["selectors"] == ["oracle", "none", "bm25"]


def test_summary_is_recomputable_from_results(tmp_path, scenario_path):
    run_dir = tmp_path / "run"
    evaluate(_config(scenario_path), run_dir, progress=False)
    written = json.loads((run_dir / SUMMARY_FILE).read_text())
    again = json.loads(json.dumps(summarize(read_results(run_dir), run_dir=run_dir)))
    for key in ("overall", "by_category", "per_turn", "counts"):
        assert again[key] == written[key], key


def test_rows_carry_the_record_the_model_saw(tmp_path, scenario_path):
    run_dir = tmp_path / "run"
    evaluate(_config(scenario_path), run_dir, progress=False)
    from memeval.session import render_system_reminder

    row = next(r for r in read_results(run_dir) if r.selector == "oracle" and r.turn_id == "t1")
    assert row.selected == ("testing.md",)
    assert [(v.key, v.verdict) for v in row.judgements["gold"].verdicts] == [
        ("testing.md", "relevant")]
    surfaced = row.record.surfaced[0]
    reminder = render_system_reminder(surfaced.header, surfaced.content)
    assert reminder.startswith("<system-reminder>\nThis memory is 3 days old. ")
    assert "real postgres database" in reminder
    assert row.surfaced_bytes > 0


def test_an_interrupted_run_resumes_to_the_same_rows(tmp_path, scenario_path):
    full = tmp_path / "full"
    evaluate(_config(scenario_path), full, progress=False)
    expected = sorted(json.dumps({k: v for k, v in r.to_dict().items() if k != "record"},
                                 sort_keys=True) for r in read_results(full))

    partial = tmp_path / "partial"
    evaluate(_config(scenario_path), partial, progress=False)
    results = partial / RESULTS_FILE
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines[:4]) + lines[4][:10])  # killed inside unit five
    (partial / INCOMPLETE_MARKER).write_text("x")
    outcome = evaluate(_config(scenario_path), partial, progress=False)
    # gold history, selectors without memory: a unit per turn, so four whole rows stay
    assert outcome.units_resumed == 4 and outcome.units_run == len(lines) - 4
    got = sorted(json.dumps({k: v for k, v in r.to_dict().items() if k != "record"},
                            sort_keys=True) for r in read_results(results))
    assert got == expected
    keys = [(r.selector, r.turn_id) for r in read_results(results)]
    assert len(keys) == len(set(keys))


def test_resuming_with_another_config_is_refused(tmp_path, scenario_path):
    run_dir = tmp_path / "run"
    evaluate(_config(scenario_path), run_dir, progress=False)
    with pytest.raises(MemevalError, match="different configuration"):
        evaluate(_config(scenario_path, repeats=2), run_dir, progress=False)


def test_a_broken_scenario_is_reported_and_the_rest_still_runs(tmp_path, scenario_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: broken\nturns: [}\n")
    run_dir = tmp_path / "run"
    outcome = evaluate(RunConfig(scenarios=(str(scenario_path), str(broken)),
                                 selectors=("oracle",)), run_dir, progress=False)
    assert outcome.rows == 3
    assert any("broken.yaml" in e for e in outcome.scenario_errors)


def test_repeats_with_shuffled_manifests_report_flip_rates(tmp_path, scenario_path):
    run_dir = tmp_path / "run"
    outcome = evaluate(RunConfig(scenarios=(str(scenario_path),), selectors=("bm25",),
                                 repeats=3, shuffle_manifest=True), run_dir, progress=False)
    assert outcome.rows == 9
    repeats = outcome.summary["repeats"]
    flips = [r["flip_rate"] for r in repeats["per_turn"]]
    assert all(f is not None and not math.isnan(f) for f in flips)
    assert repeats["pass_hat_k"][0]["selector"] == "bm25"


def test_claude_selector_and_judge_run_through_the_sdk_and_rerun_from_cache(
        tmp_path, scenario_path, monkeypatch):
    from memeval.run.config import LLMOptions
    from memeval.testing import FakeMessagesServer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    cache = tmp_path / "llm.sqlite"
    config = RunConfig(scenarios=(str(scenario_path),), selectors=("claude",),
                       judges=("gold", "claude"), llm=LLMOptions(cache=str(cache)))
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        first = evaluate(config, tmp_path / "one", progress=False)
        calls = len(server.requests)
        second = evaluate(config, tmp_path / "two", progress=False)
        assert len(server.requests) == calls  # every answer came from the cache
    assert calls > 0
    assert first.rows == second.rows == 3  # 3 turns × 1 selector, both judges on each row
    assert first.summary["llm"]["calls"] == calls
    assert second.summary["llm"]["calls"] == 0
    assert [a["judge_b"] for a in first.summary["agreement"]] == ["gold"]
    assert first.summary["agreement"][0]["judge_a"].startswith("claude")
    rows = read_results(tmp_path / "one")
    assert all(r.selector_error is None for r in rows)
    assert all(set(r.judgements) == {"gold", first.summary["judges"][0]} for r in rows)
    assert "test-key-not-secret" not in (tmp_path / "one" / RESULTS_FILE).read_text()


def test_phase1_reachability_counts_index_lines_that_survive(tmp_path):
    index = textwrap.indent(textwrap.dedent("""\
        MEMORY.md:
          content: |
            - [Testing](testing.md) — real postgres for tests
    """), "      ")
    text = SCENARIO.replace("    files:\n", "    files:\n" + index, 1)
    assert text != SCENARIO
    path = tmp_path / "indexed.yaml"
    path.write_text(text)
    outcome = evaluate(RunConfig(scenarios=(str(path),), selectors=("none",)),
                       tmp_path / "run", progress=False)
    phase1 = outcome.summary["phase1"]
    assert phase1["relevant_project_memories"] == 2
    assert phase1["index_reachable_share"] == 0.5  # testing.md is indexed, deploy.md is not
    rows = {r.turn_id: r for r in read_results(tmp_path / "run")}
    assert rows["t1"].startup_reachable == {"testing.md": True}
    assert rows["t2"].startup_reachable == {"deploy.md": False}


def test_a_session_that_crashes_costs_only_itself_and_reruns_alone(
        tmp_path, scenario_path, monkeypatch):
    import memeval.run.runner as runner_module

    real = runner_module.build_selector

    def flaky(spec, config, models=None):
        if spec == "none":
            raise RuntimeError("selector could not start")
        return real(spec, config, models)

    monkeypatch.setattr(runner_module, "build_selector", flaky)
    run_dir = tmp_path / "run"
    outcome = evaluate(_config(scenario_path), run_dir, progress=False)
    assert outcome.rows == 6  # oracle and bm25 kept
    assert len(outcome.unit_errors) == 1  # its three turn units, told once
    assert "tiny.yaml [none, repeat 0]: 3 turn(s) failed" in outcome.unit_errors[0]
    assert "RuntimeError: selector could not start" in outcome.unit_errors[0]
    assert (run_dir / INCOMPLETE_MARKER).exists()
    monkeypatch.setattr(runner_module, "build_selector", real)
    again = evaluate(_config(scenario_path), run_dir, progress=False)
    assert (again.units_run, again.units_resumed, again.rows) == (3, 6, 9)
    assert not (run_dir / INCOMPLETE_MARKER).exists()


def test_gold_without_candidate_grading_still_reports_recall(tmp_path, scenario_path):
    """The gold judge states its labels, so recall never depends on a string test."""
    outcome = evaluate(RunConfig(scenarios=(str(scenario_path),), selectors=("oracle",),
                                 judges=("gold?candidates=0",)), tmp_path / "run",
                       progress=False)
    (row,) = outcome.summary["overall"]
    assert row["judge"] == "gold?candidates=0"
    assert row["recall"] == 1.0 and row["recall_n"] == 2
    assert outcome.summary["primary_judge"] == "gold?candidates=0"


def _finished_files(run_dir):
    """summary.json and the page's turn data of a run folder, less the summary's time."""
    from memeval.log import REPORT_FILE
    from memeval.report._html import unpack_json
    from tests.test_report_run import DATA_BLOCK

    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    created = summary.pop("created")
    html = (run_dir / REPORT_FILE).read_text().replace(created, "")
    return summary, unpack_json(DATA_BLOCK.search(html).group(1)), html


class _JunkSelector(SyncSelector):
    """Answers as a buggy plugin might: on some turns it raises, on others its names
    are not all text; and its cost is not a number, its latency infinite."""

    name = "junk-answers"

    def select(self, request):
        kind = len(request.query) % 3
        if kind == 0:
            raise RuntimeError(f"backend down for {request.query[:10]!r}")
        names = [c.filename for c in request.candidates[:2]]
        if kind == 1:
            names += [7, None, {"a": 1}, ["x"], float("nan")]
        return SelectionResult(names=tuple(names), raw_output=f"{names!r}",
                               usage=Usage(calls=1, cost_usd=float("nan"),
                                           latency_s=float("inf")),
                               reasons={"x": "because"})


@pytest.mark.parametrize("history", ["gold", "own"])
def test_a_run_finishes_as_a_rebuild_of_its_folder_would(tmp_path, history):
    """The rows go to the summary and report as they are written (never read back);
    what they make is what a rebuild from the folder makes, page bytes included: the
    memories' paths cut from the session's temporary root, as the rows store them."""
    import shutil
    from pathlib import Path

    from memeval.report import RunPage
    from memeval.run.evaluate import rebuild_run
    from memeval.selectors import SELECTORS

    if "junk-answers" not in SELECTORS.available():
        SELECTORS.register("junk-answers", _JunkSelector)

    fixtures = sorted((Path(__file__).parents[1] / "fixtures" / "scenarios").glob("*.yaml"))
    config = RunConfig(scenarios=tuple(str(p) for p in fixtures[:6]),
                       selectors=("oracle", "bm25", "recency", "none", "junk-answers"),
                       judges=("gold", "gold?candidates=false"), history=history,
                       concurrency=3)
    run_dir = tmp_path / "run"
    evaluate(config, run_dir, progress=False, page=RunPage())
    written = _finished_files(run_dir)
    assert any(v["shown"] for v in written[1]["turns"])  # memories reached the page
    junk = [v for v in written[1]["turns"] if v["sel"] == "junk-answers"]
    assert any(v["errs"] for v in junk) and any(v["shown"] for v in junk)
    assert str(tmp_path) not in written[2]  # no temporary root on the page
    rebuild_run(run_dir, RunPage())
    assert _finished_files(run_dir) == written

    # resumed: the rows kept from before are read, the new ones met as written
    lines = (run_dir / RESULTS_FILE).read_bytes().splitlines(keepends=True)
    resumed = tmp_path / "resumed"
    shutil.copytree(run_dir, resumed)
    (resumed / RESULTS_FILE).write_bytes(b"".join(lines[:len(lines) // 2]))
    outcome = evaluate(config, resumed, progress=False, page=RunPage())
    assert outcome.units_resumed and outcome.units_run
    after_resume = _finished_files(resumed)
    rebuild_run(resumed, RunPage())
    assert _finished_files(resumed) == after_resume


def test_the_engine_runs_without_importing_the_report(tmp_path, scenario_path):
    """A run without a page writes the summary only and never loads `memeval.report`:
    the page is the caller's choice (`page=RunPage()`), so the engine's arrows point
    down to the log and the scoring, never up to the views."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; "
            "from memeval.run.config import RunConfig; "
            "from memeval.run.evaluate import evaluate; "
            f"evaluate(RunConfig(scenarios=({str(scenario_path)!r},), selectors=('bm25',)), "
            f"Path({str(tmp_path / 'run')!r}), progress=False); "
            "print(sorted(m for m in sys.modules if m.startswith('memeval.report')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert (tmp_path / "run" / SUMMARY_FILE).exists()
    assert not (tmp_path / "run" / "index.html").exists()
