"""A run folder holds what its plan says, or nothing passes: edited scenarios are rerun
on resume, tampered shares are refused by `merge`, incomplete runs fail the gate, and
a folder that is not a memeval run is never taken over as `--out`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from memeval.cli import cli
from memeval.log import CONFIG_FILE, INCOMPLETE_MARKER, RESULTS_FILE
from tests.reliability._scenario import comparable_rows, write_suite


def memeval(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def run_args(scenarios: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--quiet", "--scenarios", str(scenarios / "*.yaml"), "--out", str(out),
            "-s", "bm25", "-s", "recency", *extra]


# -------------------------------------------------------------- edited scenarios
def test_a_resume_reruns_edited_scenarios_and_drops_deleted_ones(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, 3)
    out = tmp_path / "run"
    assert memeval(*run_args(scenarios, out)).exit_code == 0

    edited = scenarios / "s0.yaml"  # a new query and a new gold label
    edited.write_text(edited.read_text()
                      .replace("how do I run the test suite", "where do tests keep data")
                      .replace("relevant: [testing.md]", "relevant: [testing.md, deploy.md]"))
    (scenarios / "s2.yaml").unlink()
    resumed = memeval(*run_args(scenarios, out))
    assert resumed.exit_code == 0, resumed.output
    assert f"{edited}: scenario s0 changed since its rows were written" in resumed.output
    assert "s2.yaml (scenario s2)" in resumed.output
    assert "(10 units run, 10 resumed)" in resumed.output  # s0's 5 turns × 2 selectors

    fresh = tmp_path / "fresh"
    assert memeval(*run_args(scenarios, fresh)).exit_code == 0
    assert comparable_rows(out / RESULTS_FILE) == comparable_rows(fresh / RESULTS_FILE)


def test_config_json_records_each_scenario_digest_and_the_unit_plan(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, 2)
    assert memeval(*run_args(scenarios, tmp_path / "run")).exit_code == 0
    plan = json.loads((tmp_path / "run" / CONFIG_FILE).read_text())["plan"]
    assert set(plan["scenarios"]) == {"s0", "s1"}
    assert all(len(s["digest"]) == 16 for s in plan["scenarios"].values())
    assert len(plan["units"]) == 20 and plan["rows"] == 20


# -------------------------------------------------------------- incomplete runs
def test_the_gate_fails_a_run_marked_incomplete_even_on_thresholds_only(
        tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, 2)
    out = tmp_path / "run"
    assert memeval(*run_args(scenarios, out)).exit_code == 0
    assert memeval("gate", str(out), "--min-recall", "0").exit_code == 0
    # What a run stopped by SIGTERM leaves: a summary of the rows so far, and the marker.
    (out / INCOMPLETE_MARKER).write_text("This run has not finished\n")
    gated = memeval("gate", str(out), "--min-recall", "0")
    assert gated.exit_code == 1, gated.output
    assert f"gate: FAIL: {out} is marked RUN_INCOMPLETE" in gated.output


def test_the_gate_fails_a_run_whose_rows_do_not_cover_its_plan(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, 2)
    out = tmp_path / "run"
    assert memeval(*run_args(scenarios, out)).exit_code == 0
    rows = (out / RESULTS_FILE).read_text().splitlines(keepends=True)
    (out / RESULTS_FILE).write_text("".join(rows[3:]))  # three turns lost
    assert memeval("report", str(out)).exit_code == 0  # the summary, rebuilt from the rows
    gated = memeval("gate", str(out), "--min-recall", "0")
    assert gated.exit_code == 1, gated.output
    assert "17 of the 20 turns its plan holds" in gated.output
