"""The regression gate: error rates, thresholds, paired non-inferiority, and `memeval gate`."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.log import write_json
from memeval.scoring.gate import GateInputError, gate_run, per_turn_table, run_gate
from memeval.scoring.metrics import per_turn_frame


def frame(selector: str, recalls: list[float], *, judge: str = "gold", precision: float = 1.0,
          scenarios: int = 5, errored: set[int] = frozenset()) -> pd.DataFrame:
    """Scored turns, turn i in scenario s{i % scenarios}; `errored` turns are unscored."""
    return pd.DataFrame([{
        "scenario": f"s{i % scenarios}", "turn_id": f"t{i}", "category": "direct",
        "selector": selector, "judge": judge, "repeat": 0,
        "precision": None if i in errored else precision,
        "recall": None if i in errored else r, "f1": None if i in errored else r,
        "exact_match": None if i in errored else float(r == 1.0),
        "scored": i not in errored, "selector_error": i in errored, "judge_error": False,
    } for i, r in enumerate(recalls)])


def test_threshold_failure_names_metric_value_and_minimum():
    result = run_gate(frame("none", [0.0, 0.0, 1.0, 0.0]), min_recall=0.5)
    assert not result.passed
    (check,) = result.failures
    assert (check.metric, check.selector, check.judge) == ("recall", "none", "gold")
    assert check.value == pytest.approx(0.25)
    message = check.message()
    assert "recall" in message and "0.250" in message and "0.500" in message


def test_a_metric_with_no_scored_turn_fails_its_threshold():
    everything_failed = frame("claude", [0.0] * 6, errored=set(range(6)))
    result = run_gate(everything_failed, min_precision=0.9, max_error_rate=1.0)
    assert not result.passed
    assert {c.status for c in result.checks if c.kind == "threshold"} == {"fail"}


def test_any_error_fails_the_gate_by_default_and_names_the_rate():
    some_errors = frame("bm25", [1.0] * 20, errored={3})
    result = run_gate(some_errors, min_recall=0.5)
    failed = [c for c in result.failures if c.kind == "error-rate"]
    assert failed and failed[0].value == pytest.approx(1 / 20)
    assert "selector error rate" in failed[0].message() and "1 of 20" in failed[0].message()
    assert run_gate(some_errors, min_recall=0.5, max_error_rate=0.1).passed


def test_same_run_as_baseline_is_non_inferior():
    run = frame("bm25", [1.0, 0.0, 0.5, 1.0, 0.0, 1.0] * 3)
    result = run_gate(run, run)
    assert result.passed
    by_metric = {c.metric: c.status for c in result.checks if c.kind == "non-inferiority"}
    assert by_metric == {"f1": "pass", "false_alarm": "skipped"}  # no false_alarm column here


def test_clearly_worse_candidate_fails_as_regression():
    baseline = frame("bm25", [1.0] * 20)
    candidate = frame("bm25", [0.0, 1.0] * 10)
    result = run_gate(candidate, baseline)
    check = next(c for c in result.failures if c.kind == "non-inferiority")
    assert check.metric == "f1" and check.value < -0.03
    assert "regressed" in check.message() and "bm25" in check.message()


def test_a_drop_within_a_wide_margin_passes_and_a_narrow_one_says_it_cannot_resolve():
    baseline = frame("bm25", [1.0] * 40)
    candidate = frame("bm25", [1.0] * 39 + [0.0])  # one turn of forty lost
    assert run_gate(candidate, baseline, margin=0.2).passed
    narrow = run_gate(candidate, baseline, margin=0.0)
    assert not narrow.passed
    assert "below what these turns resolve" in narrow.failures[0].detail


def test_too_few_pairs_fail_instead_of_deciding_on_one_turn():
    result = run_gate(frame("bm25", [0.0, 1.0]), frame("bm25", [1.0, 1.0]))
    check = next(c for c in result.checks if c.kind == "coverage")
    assert check.failed and "only 2 paired" in check.message()


def test_a_candidate_missing_baseline_turns_fails_and_names_them():
    baseline = frame("bm25", [1.0] * 20)
    candidate = frame("bm25", [1.0] * 15)
    result = run_gate(candidate, baseline)
    coverage = next(c for c in result.failures if c.kind == "coverage")
    assert "5 baseline turns missing" in coverage.detail and "t15" in coverage.detail


def test_renamed_single_selector_is_paired_with_the_baseline_selector():
    baseline = frame("claude?prompt=a", [1.0] * 10)
    candidate = frame("claude?prompt=b", [0.0] * 10)
    result = run_gate(candidate, baseline)
    check = next(c for c in result.checks if c.kind == "non-inferiority")
    assert check.baseline_selector == "claude?prompt=a" and check.failed


def test_an_unpairable_candidate_fails_rather_than_passing_on_skipped_checks():
    baseline = pd.concat([frame("bm25", [1.0] * 10), frame("recency", [1.0] * 10)])
    result = run_gate(frame("oracle", [0.0] * 10), baseline)
    assert not result.passed
    assert "--pair" in result.failures[0].detail
    paired = run_gate(frame("oracle", [1.0] * 10), baseline, pairs=[("oracle", "bm25")])
    assert paired.passed


def test_a_gate_where_nothing_was_tested_fails():
    result = run_gate(frame("bm25", [1.0] * 5).iloc[0:0])
    assert not result.passed and "nothing was tested" in result.failures[0].detail


def test_judges_are_gated_apart():
    baseline = pd.concat([frame("bm25", [1.0] * 10), frame("bm25", [1.0] * 10, judge="claude")])
    candidate = pd.concat([frame("bm25", [1.0] * 10),
                           frame("bm25", [0.0] * 10, judge="claude")])
    failures = run_gate(candidate, baseline).failures
    assert failures and {c.judge for c in failures} == {"claude"}


def test_secondary_metrics_are_gated_one_sided_and_share_the_false_failure_rate():
    baseline = frame("bm25", [1.0] * 20, precision=1.0)
    candidate = frame("bm25", [1.0] * 20, precision=0.5)  # F1 holds, precision drops
    result = run_gate(candidate, baseline, secondary=("precision", "recall"))
    by_metric = {c.metric: c for c in result.checks if c.kind == "non-inferiority"}
    assert by_metric["f1"].status == "pass"
    assert by_metric["precision"].failed and "regressed" in by_metric["precision"].message()
    assert by_metric["recall"].status == "pass"
    # four gated metrics (f1, false_alarm, precision, recall): 5 % / 4 each
    assert "1.2%" in by_metric["precision"].rule


def _run_dir(tmp_path: Path, name: str, selected: list[list[str]]) -> Path:
    from memeval.scoring.summary import PER_TURN_COLUMNS

    rows = [{"scenario": f"s{i % 4}", "turn_id": f"t{i}", "category": "direct",
             "selector": "bm25", "judge": "gold", "repeat": 0, "relevant": ["a.md"],
             "selected": sel} for i, sel in enumerate(selected)]
    scored = per_turn_frame(rows)
    folder = tmp_path / name
    folder.mkdir()
    from memeval.jsonenc import json_safe

    write_json(folder / "summary.json",
               {"per_turn": json_safe(scored[list(PER_TURN_COLUMNS)].to_dict(orient="records"))})
    return folder


def test_summary_json_per_turn_table_is_gate_input(tmp_path):
    good = _run_dir(tmp_path, "good", [["a.md"]] * 12)
    bad = _run_dir(tmp_path, "bad", [[]] * 12)  # precision undefined: null in the JSON
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
    with pytest.raises(GateInputError, match="per-turn scores"):
        per_turn_table(other)


def test_cli_exit_codes_and_markdown(tmp_path):
    good = _run_dir(tmp_path, "good", [["a.md"]] * 12)
    bad = _run_dir(tmp_path, "bad", [[]] * 12)
    runner = CliRunner()
    summary_md = tmp_path / "summary.md"
    passed = runner.invoke(cli, ["gate", str(good), "--baseline", str(good / "summary.json"),
                                 "--markdown", str(summary_md)])
    assert passed.exit_code == 0, passed.output
    assert "gate: PASS" in passed.output
    assert json.loads((good / "gate.json").read_text())["passed"] is True
    assert "### memeval gate: ✅ PASS" in summary_md.read_text()
    failed = runner.invoke(cli, ["gate", str(bad), "--baseline", str(good / "summary.json")])
    assert failed.exit_code == 1
    assert "f1" in failed.output and "regressed" in failed.output
    threshold = runner.invoke(cli, ["gate", str(bad), "--min-recall", "0.5"])
    assert threshold.exit_code == 1 and "0.500" in threshold.output
    for args in (["gate", str(tmp_path / "missing"), "--min-recall", "0.5"],
                 ["gate", str(good), "--min-recall", "2"],
                 ["gate", str(good), "--max-error-rate", "1.5"],
                 ["gate", str(good), "--baseline", str(good), "--margin", "-1"]):
        usage = runner.invoke(cli, args)
        assert usage.exit_code == 2, (args, usage.output)
        assert "Error" in usage.output


def needing(selector: str, *, spray: bool = False, errored: frozenset[int] = frozenset(),
            scenarios: int = 20) -> pd.DataFrame:
    """bm25-like turns: 3 of 10 need nothing; picks right on the rest; some scenarios
    false-alarm; `spray` picks on every turn that needs nothing."""
    return per_turn_frame([
        {"scenario": f"s{s}", "turn_id": f"t{t}", "selector": selector, "judge": "gold",
         "category": "direct", "relevant": [] if t < 3 else ["a.md"],
         "error": "timeout" if s * 10 + t in errored else None,
         "selected": (["x.md"] if spray or s % 7 == 0 else []) if t < 3 else ["a.md"]}
        for s in range(scenarios) for t in range(10)])


def test_a_selector_spraying_picks_on_turns_that_need_nothing_fails_the_default_gate():
    result = run_gate(needing("spray", spray=True), needing("bm25"))
    assert not result.passed
    (failed,) = result.failures
    assert failed.metric == "false_alarm" and failed.kind == "non-inferiority"
    f1 = next(c for c in result.checks if c.metric == "f1" and c.kind == "non-inferiority")
    assert f1.status == "pass"  # F1 alone would have let it through


def test_a_baseline_with_errored_turns_fails_the_gate_naming_them():
    result = run_gate(needing("bm25"), needing("bm25", errored=frozenset({33, 57})))
    failed = [c for c in result.failures if c.kind == "error-rate"]
    assert [c.metric for c in failed] == ["baseline selector error rate"]
    assert "s3/t3" in failed[0].detail and "s5/t7" in failed[0].detail
    assert run_gate(needing("bm25"), needing("bm25")).passed


def test_the_default_gate_says_which_rule_set_each_margin():
    result = run_gate(needing("bm25"), needing("bm25"))
    assert result.rules() and all("uncalibrated default" in r for r in result.rules())
    assert "rule: f1" in result.table() and "- rule:" in result.markdown()
    given = run_gate(needing("bm25"), needing("bm25"), margin=0.05)
    assert all("as given by --margin" in r for r in given.rules())


def test_a_secondary_test_points_the_way_its_metric_is_better():
    base = frame("bm25", [1.0] * 20, precision=0.5)
    better = frame("bm25", [1.0] * 20, precision=1.0)
    worse = frame("bm25", [1.0] * 20, precision=0.0)
    assert run_gate(better, base, secondary=("precision",), margin=0.0).passed
    assert not run_gate(worse, base, secondary=("precision",), margin=0.0).passed


SUGGESTION = re.compile(r"`(memeval [a-z-]+(?: [^`]*)?)`")


def test_every_command_a_message_suggests_exists():
    """Scan the package's strings for `memeval ...` suggestions and ask each for --help."""
    suggested: set[tuple[str, tuple[str, ...]]] = set()
    for path in (Path(__file__).resolve().parents[1] / "memeval").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for text in SUGGESTION.findall(node.value):
                    words = text.split()
                    suggested.add((words[1], tuple(w.split("=")[0] for w in words[2:]
                                                   if w.startswith("--"))))
    assert ("calibrate", ()) in suggested or any(c == "calibrate" for c, _ in suggested)
    runner = CliRunner()
    for command, options in sorted(suggested):
        shown = runner.invoke(cli, [command, "--help"])
        assert shown.exit_code == 0, f"`memeval {command}` is suggested but does not exist"
        for option in options:
            assert option in shown.output, f"`memeval {command} {option}` does not exist"
