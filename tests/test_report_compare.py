"""The compare view: pairing, B − A deltas, changed turns, files and the command."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.judges.base import MemoryVerdict
from memeval.log import ResultsWriter, TurnResult
from memeval.report import RunPage, render_compare
from memeval.run.evaluate import finish_run
from memeval.scoring.compare import compare_runs, pair_selectors
from memeval.testing.synthetic import synthetic_rows


def _write(run_dir: Path, rows: list[TurnResult]) -> Path:
    with ResultsWriter(run_dir) as writer:
        for row in rows:
            writer.append_unit([row])
    finish_run(run_dir, page=RunPage())
    return run_dir


def _perfect(rows: list[TurnResult], turn_ids: set[str]) -> list[TurnResult]:
    """B: the same rows, except that the given turns select exactly their gold labels."""
    out = []
    for row in rows:
        if row.turn_id in turn_ids:
            judgements = {name: replace(j, verdicts=tuple(MemoryVerdict(k, "relevant")
                                                          for k in row.relevant))
                          for name, j in row.judgements.items()}
            row = replace(row, selected=row.relevant, selector_error=None, errors=(),
                          judgements=judgements)
        out.append(row)
    return out


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    rows = synthetic_rows(turns=12, selectors=("bm25",), seed=3)
    improvable = {r.turn_id for r in rows if r.relevant and set(r.selected) != set(r.relevant)
                  and not r.selector_error}
    assert improvable, "the synthetic rows need a turn to improve"
    return _write(tmp_path / "a", rows), _write(tmp_path / "b", _perfect(rows, improvable))


@pytest.mark.parametrize(("a", "b", "pairs"), [
    (["bm25", "recency"], ["recency", "oracle"], [("recency", "recency")]),
    (["claude?prompt=x"], ["claude?prompt=y"], [("claude?prompt=x", "claude?prompt=y")]),
])
def test_selectors_pair_by_name_or_as_the_only_two(a, b, pairs) -> None:
    assert pair_selectors(a, b) == pairs


def test_unrelated_selector_sets_are_refused_unless_paired_explicitly() -> None:
    with pytest.raises(MemevalError, match=r"share no selector.*--pair"):
        pair_selectors(["a", "b"], ["c", "d"])
    assert pair_selectors(["a", "b"], ["c", "d"], [("b", "c")]) == [("b", "c")]
    with pytest.raises(MemevalError, match="A has a, b"):
        pair_selectors(["a", "b"], ["c", "d"], [("x", "c")])


def test_gate_and_compare_pair_the_same_selectors(tmp_path: Path) -> None:
    from memeval.scoring.gate import gate_run

    rows = synthetic_rows(turns=20, selectors=("bm25", "recency"), seed=1)
    a = _write(tmp_path / "a", rows)
    b = _write(tmp_path / "b", [r for r in rows if r.selector == "recency"])
    compared = [(p["selector_a"], p["selector_b"]) for p in compare_runs(a, b)["pairs"]]
    gated = {(c.baseline_selector, c.selector) for c in gate_run(b, a, max_error_rate=1).checks
             if c.kind == "non-inferiority"}
    assert compared == [("recency", "recency")] and gated == set(compared)


def test_deltas_are_b_minus_a_and_b_wins_the_improved_turns(runs) -> None:
    a, b = runs
    data = compare_runs(a, b)
    (pair,) = data["pairs"]
    f1 = pair["overall"]["f1"]
    assert f1["mean_diff"] == pytest.approx(f1["mean_b"] - f1["mean_a"])
    assert f1["mean_diff"] > 0
    assert f1["ci_low"] <= f1["mean_diff"] <= f1["ci_high"]
    assert pair["won"] and not pair["lost"]
    assert all(i["f1_b"] > i["f1_a"] for i in pair["won"])
    # Swapping the runs mirrors everything.
    mirrored = compare_runs(b, a)["pairs"][0]
    assert mirrored["overall"]["f1"]["mean_diff"] == pytest.approx(-f1["mean_diff"])
    assert len(mirrored["lost"]) == len(pair["won"])


def test_identical_runs_change_nothing(runs) -> None:
    a, _ = runs
    (pair,) = compare_runs(a, a)["pairs"]
    assert pair["overall"]["f1"]["mean_diff"] == 0
    assert pair["overall"]["f1"]["significance"] == "no clear difference"
    assert pair["won"] == pair["lost"] == []


def test_few_turns_carry_a_power_warning(tmp_path: Path) -> None:
    rows = synthetic_rows(turns=3, selectors=("bm25",), seed=5)
    a = _write(tmp_path / "a", rows)
    b = _write(tmp_path / "b", _perfect(rows, {rows[0].turn_id}))
    data = compare_runs(a, b)
    f1 = data["pairs"][0]["overall"]["f1"]
    # One of three turns improved: per-turn F1 deltas are 1, 0, 0.
    assert f1["mean_diff"] == pytest.approx(1 / 3)
    assert f1["significance"] == "no clear difference"
    assert f1["power_warning"] and data["warnings"] and "paired turns" in data["warnings"][0]


def test_compare_writes_html_and_json(runs, tmp_path: Path) -> None:
    a, b = runs
    html_path, _ = render_compare(a, b, tmp_path / "out")
    assert html_path == tmp_path / "out" / "compare.html"
    data = json.loads((tmp_path / "out" / "compare.json").read_text())  # strict: no NaN
    html = html_path.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html
    for item in data["pairs"][0]["won"]:
        assert item["view_a"] is not None and item["view_b"] is not None
    assert html.count('class="change"') == len(data["pairs"][0]["won"])


def test_runs_without_a_common_judge_are_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", synthetic_rows(turns=2, judges=("gold",)))
    b = _write(tmp_path / "b", synthetic_rows(turns=2, judges=("claude",)))
    with pytest.raises(MemevalError, match="share no judge"):
        compare_runs(a, b)


def test_compare_command_prints_a_table(runs, tmp_path: Path) -> None:
    a, b = runs
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "B − A" in result.output and "won" in result.output
    assert (tmp_path / "c" / "compare.html").exists()


def test_compare_command_names_the_bad_argument(runs, tmp_path: Path) -> None:
    a, _ = runs
    result = CliRunner().invoke(cli, ["compare", str(a), str(tmp_path / "nope"),
                                      "--out", str(tmp_path / "c")])
    assert result.exit_code == 2
    assert "RUN_B" in result.output and "not a folder" in result.output


def test_report_command_rerenders_index(runs) -> None:
    a, _ = runs
    result = CliRunner().invoke(cli, ["report", str(a)])
    assert result.exit_code == 0, result.output
    assert (a / "index.html").exists()


def test_report_command_on_a_folder_without_results(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert "no results.jsonl" in result.output


def test_compare_json_has_no_nan(runs, tmp_path: Path) -> None:
    a, b = runs
    render_compare(a, b, tmp_path / "o")
    text = (tmp_path / "o" / "compare.json").read_text()
    assert "NaN" not in text
    assert not any(isinstance(v, float) and math.isnan(v)
                   for v in json.loads(text)["pairs"][0]["overall"]["f1"].values())


def test_an_empty_run_is_named(runs, tmp_path: Path) -> None:
    a, _ = runs
    empty = _write(tmp_path / "empty", [])
    with pytest.raises(MemevalError, match=r"no scored turns"):
        compare_runs(a, empty)


def test_compare_without_out_writes_nothing_and_prints_the_table(runs, tmp_path: Path) -> None:
    a, b = runs
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--pair", "bm25=bm25"])
    assert result.exit_code == 0, result.output
    assert "B − A" in result.output and "compare:" not in result.output
