"""A run folder holds what its plan says, or nothing passes: edited scenarios are rerun
on resume, tampered shares are refused by `merge`, incomplete runs fail the gate, and
a folder that is not a memeval run is never taken over as `--out`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memeval.cli import cli
from memeval.log import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    PAYLOADS_FILE,
    RESULTS_FILE,
    ResultsWriter,
    RunFolderForeign,
)
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


# -------------------------------------------------------------- tampered shares
@pytest.fixture(scope="module")
def shares(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("shares")
    scenarios = base / "scenarios"
    write_suite(scenarios, 3)
    parts = [base / f"s{k}" for k in (1, 2, 3)]
    for k, part in enumerate(parts, start=1):
        done = memeval(*run_args(scenarios, part, "--shard", f"{k}/3"))
        assert done.exit_code == 0, done.output
    return parts


def _rows(part: Path) -> list[dict]:
    return [json.loads(line) for line in (part / RESULTS_FILE).read_text().splitlines()]


def _write_rows(part: Path, rows: list[dict]) -> None:
    (part / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _copies(shares: list[Path], tmp_path: Path) -> list[Path]:
    copies = [tmp_path / part.name for part in shares]
    for part, copy in zip(shares, copies, strict=True):
        shutil.copytree(part, copy)
    return copies


def _delete_five_rows(parts: list[Path]) -> str:
    rows = _rows(parts[0])
    _write_rows(parts[0], [r for r in rows if r["unit_size"] == 1][5:]
                + [r for r in rows if r["unit_size"] != 1])
    return "5 planned turn(s) missing (share 1/3)"


def _duplicate_a_turn(parts: list[Path]) -> str:
    rows = _rows(parts[0])
    _write_rows(parts[0], [*rows, rows[0]])
    return "1 turn(s) stored twice"


def _foreign_selector(parts: list[Path]) -> str:
    rows = _rows(parts[0])
    _write_rows(parts[0], [*rows, {**rows[0], "selector": "oracle"}])
    return "1 row(s) outside the run's plan"


def _foreign_scenario(parts: list[Path]) -> str:
    rows = _rows(parts[0])
    _write_rows(parts[0], [*rows, {**rows[0], "scenario": "elsewhere"}])
    return "1 row(s) outside the run's plan"


def _moved_to_another_share(parts: list[Path]) -> str:
    first, second = _rows(parts[0]), _rows(parts[1])
    _write_rows(parts[0], first[1:])
    _write_rows(parts[1], [*second, first[0]])
    return "1 row(s) of another share's units (not 2/3)"


def _partial_unit(parts: list[Path]) -> str:
    rows = _rows(parts[0])
    forged = [{**r, "unit_size": 2} if i == 0 else r for i, r in enumerate(rows)]
    _write_rows(parts[0], forged)
    return "1 unit(s) cut short"


def _dangling_payload(parts: list[Path]) -> str:
    lines = (parts[0] / PAYLOADS_FILE).read_text().splitlines(keepends=True)
    (parts[0] / PAYLOADS_FILE).write_text("".join(lines[1:]))
    return f"pointing at payloads missing from {PAYLOADS_FILE}"


@pytest.mark.parametrize("tamper", [
    _delete_five_rows, _duplicate_a_turn, _foreign_selector, _foreign_scenario,
    _moved_to_another_share, _partial_unit, _dangling_payload])
def test_merge_refuses_tampered_shares_and_writes_nothing(
        shares: list[Path], tmp_path: Path, tamper) -> None:
    parts = _copies(shares, tmp_path)
    expected = tamper(parts)
    merged = memeval("merge", str(tmp_path / "merged"), *map(str, parts))
    assert merged.exit_code == 1, merged.output
    assert expected in merged.output, merged.output
    assert "Traceback" not in merged.output
    assert not (tmp_path / "merged" / RESULTS_FILE).exists()


def test_untouched_shares_merge_and_pass_the_gate(shares: list[Path], tmp_path: Path) -> None:
    merged = memeval("merge", str(tmp_path / "merged"), *map(str, shares))
    assert merged.exit_code == 0, merged.output
    assert "30 rows from 3 shares" in merged.output
    assert memeval("gate", str(tmp_path / "merged"), "--min-recall", "0").exit_code == 0


# -------------------------------------------------------------- someone else's folder
def test_an_existing_folder_that_is_not_a_run_is_refused_as_out(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, 1)
    site = tmp_path / "site"  # say, a docs folder with its own page and config
    site.mkdir()
    (site / "index.html").write_text("<h1>our docs</h1>")
    (site / "config.json").write_text('{"theme": "dark"}')
    result = memeval(*run_args(scenarios, site))
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: --out {site}: holds files that are not a memeval run "
                      "(config.json, index.html); a run would replace its index.html, "
                      "config.json and summary.json. Pick a new or empty folder for --out."]
    assert (site / "index.html").read_text() == "<h1>our docs</h1>"
    assert sorted(p.name for p in site.iterdir()) == ["config.json", "index.html"]
    with pytest.raises(RunFolderForeign), ResultsWriter(site):  # merge and the plugin too
        pass
    assert sorted(p.name for p in site.iterdir()) == ["config.json", "index.html"]
