"""The regression gate: thresholds, paired non-inferiority, inputs, and `memeval gate`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.gate import GateInputError, gate_run, per_turn_table, run_gate
from memeval.results import write_json
from memeval.summary import summarize


def frame(selector: str, recalls: list[float], *, judge: str = "gold",
          precision: float | None = 1.0, scenario: str = "s") -> pd.DataFrame:
    return pd.DataFrame([{
        "scenario": scenario, "turn_id": f"t{i}", "category": "direct", "selector": selector,
        "judge": judge, "repeat": 0, "precision": precision, "recall": r, "f1": r,
        "exact_match": r == 1.0,
    } for i, r in enumerate(recalls)])


def test_threshold_failure_names_metric_value_and_minimum():
    result = run_gate(frame("none", [0.0, 0.0, 1.0, 0.0]), min_recall=0.5)
    assert not result.passed
    (check,) = result.failures
    assert (check.metric, check.selector, check.judge) == ("recall", "none", "gold")
    assert check.value == pytest.approx(0.25)
    message = check.message()
    assert "recall" in message and "0.250" in message and "0.500" in message


def test_threshold_met_passes_and_undefined_metric_is_skipped():
    result = run_gate(frame("bm25", [1.0, 1.0], precision=None), min_recall=0.5,
                      min_precision=0.9)
    assert result.passed
    statuses = {c.metric: c.status for c in result.checks}
    assert statuses == {"recall": "pass", "precision": "skipped"}


def test_same_run_as_baseline_is_non_inferior():
    run = frame("bm25", [1.0, 0.0, 0.5, 1.0, 0.0, 1.0])
    result = run_gate(run, run)
    assert result.passed
    assert {c.status for c in result.checks if c.metric == "recall"} == {"pass"}


def test_clearly_worse_candidate_fails_as_regression():
    baseline = frame("bm25", [1.0] * 12)
    candidate = frame("bm25", [0.0] * 6 + [1.0] * 6)
    result = run_gate(candidate, baseline)
    failed = {c.metric for c in result.failures}
    assert "recall" in failed
    check = next(c for c in result.failures if c.metric == "recall")
    assert check.kind == "non-inferiority" and check.value < -0.03
    assert "regressed" in check.message() and "bm25" in check.message()


def test_drop_within_the_margin_passes_a_wide_margin_and_fails_a_narrow_one():
    baseline = frame("bm25", [1.0] * 40)
    candidate = frame("bm25", [1.0] * 39 + [0.0])  # one turn of forty lost
    assert run_gate(candidate, baseline, margin=0.2).passed
    assert not run_gate(candidate, baseline, margin=0.0).passed


def test_renamed_single_selector_is_paired_with_the_baseline_selector():
    baseline = frame("claude?prompt=a", [1.0] * 10)
    candidate = frame("claude?prompt=b", [0.0] * 10)
    result = run_gate(candidate, baseline)
    check = next(c for c in result.checks if c.metric == "recall")
    assert check.baseline_selector == "claude?prompt=a" and check.failed


def test_selector_missing_from_a_multi_selector_baseline_is_skipped():
    baseline = pd.concat([frame("bm25", [1.0] * 3), frame("recency", [1.0] * 3)])
    result = run_gate(frame("oracle", [0.0] * 3), baseline)
    assert result.passed
    assert {c.status for c in result.checks} == {"skipped"}


def test_judges_are_gated_apart():
    baseline = pd.concat([frame("bm25", [1.0] * 8), frame("bm25", [1.0] * 8, judge="claude")])
    candidate = pd.concat([frame("bm25", [1.0] * 8),
                           frame("bm25", [0.0] * 8, judge="claude")])
    failures = run_gate(candidate, baseline).failures
    assert failures and {c.judge for c in failures} == {"claude"}


def _rows(selected: list[list[str]]) -> list[dict]:
    return [{"scenario": "s", "turn_id": f"t{i}", "category": "direct", "selector": "bm25",
             "judge": "gold", "repeat": 0, "relevant": ["a.md"], "acceptable": [],
             "selected": sel, "verdicts": [], "error": None, "skipped": None,
             "discarded": False, "surfaced_bytes": 0}
            for i, sel in enumerate(selected)]


def _run_dir(tmp_path: Path, name: str, selected: list[list[str]]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    write_json(folder / "summary.json", summarize(_rows(selected)))
    return folder


def test_summary_json_per_turn_table_is_gate_input(tmp_path):
    good = _run_dir(tmp_path, "good", [["a.md"]] * 10)
    bad = _run_dir(tmp_path, "bad", [[]] * 10)  # precision undefined: null in the JSON
    table = per_turn_table(bad / "summary.json")
    assert table["precision"].isna().all()
    assert not gate_run(bad, good / "summary.json").passed
    assert gate_run(good, good).passed


def test_unreadable_inputs_name_the_file(tmp_path):
    with pytest.raises(GateInputError, match="not found"):
        per_turn_table(tmp_path / "nope.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(GateInputError, match=r"broken\.json"):
        per_turn_table(broken)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(GateInputError, match="per_turn"):
        per_turn_table(other)


def test_cli_exit_codes(tmp_path):
    good = _run_dir(tmp_path, "good", [["a.md"]] * 10)
    bad = _run_dir(tmp_path, "bad", [[]] * 10)
    runner = CliRunner()
    passed = runner.invoke(cli, ["gate", str(good), "--baseline", str(good / "summary.json")])
    assert passed.exit_code == 0, passed.output
    assert "gate: PASS" in passed.output
    assert json.loads((good / "gate.json").read_text())["passed"] is True
    failed = runner.invoke(cli, ["gate", str(bad), "--baseline", str(good / "summary.json")])
    assert failed.exit_code == 1
    assert "recall" in failed.output and "regressed" in failed.output
    threshold = runner.invoke(cli, ["gate", str(bad), "--min-recall", "0.5"])
    assert threshold.exit_code == 1 and "0.500" in threshold.output
    for args in (["gate", str(good)],  # nothing to check
                 ["gate", str(tmp_path / "missing"), "--min-recall", "0.5"],
                 ["gate", str(good), "--min-recall", "2"],
                 ["gate", str(good), "--baseline", str(good), "--margin", "-1"]):
        usage = runner.invoke(cli, args)
        assert usage.exit_code == 2, (args, usage.output)
        assert "Error" in usage.output
