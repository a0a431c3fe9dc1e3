"""A run folder written by the memeval before the log package (format v3, commit
82ab7dc) reads back through `memeval.log`, rebuilds to the same summary, and is
reported and gated by the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from memeval.cli import cli
from memeval.log import (
    RecordedTurn,
    StoredMemory,
    TurnResult,
    count_rows,
    iter_results,
    read_config,
    read_per_turn,
    read_summary,
)

V3_RUN = Path(__file__).parent / "data" / "v3-run"  # tiny.yaml × (bm25, oracle) × gold


def test_rows_of_a_v3_folder_read_back_typed() -> None:
    rows = list(iter_results(V3_RUN))
    assert count_rows(V3_RUN) == len(rows) == 8
    assert {r.selector for r in rows} == {"bm25", "oracle"}
    for row in rows:
        assert isinstance(row, TurnResult) and isinstance(row.record, RecordedTurn)
        assert row.record.turn_id == row.turn_id and row.record.query == row.query
        assert all(isinstance(m, StoredMemory) for m in row.record.surfaced)
        assert [m.key for m in row.record.surfaced] == list(row.selected) or row.discarded
        assert row.candidates and all(d.manifest for d in row.record.dirs if d.called)
    oracle = [r for r in rows if r.selector == "oracle" and r.relevant]
    assert oracle and all(set(r.relevant) <= {m.key for m in r.record.delivered}
                          for r in oracle)


def _as_stored(rebuilt: object, stored: object) -> object:
    """`rebuilt` cut down to the keys `stored` has, all the way down."""
    if isinstance(stored, dict) and isinstance(rebuilt, dict):
        return {k: _as_stored(rebuilt.get(k), v) for k, v in stored.items()}
    if isinstance(stored, list) and isinstance(rebuilt, list) and len(stored) == len(rebuilt):
        return [_as_stored(r, s) for r, s in zip(rebuilt, stored, strict=True)]
    return rebuilt


def test_a_v3_folder_rebuilds_to_its_own_summary(tmp_path: Path) -> None:
    from memeval.run.evaluate import RowDigest

    stored = read_summary(V3_RUN)
    rebuilt = RowDigest.of_folder(V3_RUN).inputs.summary(run_dir=V3_RUN)
    for volatile in ("created", "run_dir"):
        stored.pop(volatile), rebuilt.pop(volatile)
    stored = {k: v for k, v in stored.items() if k not in ("llm", "unit_errors")}
    # The text table is rendered anew with each metric's declared label and direction;
    # every figure in it is the stored one.
    new_table, old_table = rebuilt.pop("table"), stored.pop("table")
    assert "F1 ↑" in new_table and old_table.splitlines()[1:] == new_table.splitlines()[1:]
    # Columns added since v3 (issue 33) are new per-turn counts, all 0 on this run.
    added = ("invalid_picks", "unreachable")
    assert all(turn.pop(c) == 0 for turn in rebuilt["per_turn"] for c in added)
    # Metrics added since (rank and answer metrics, issue 36) are extra columns.
    assert _as_stored(rebuilt, stored) == stored
    assert len(read_per_turn(V3_RUN)) == 8
    assert read_config(V3_RUN)["config"]["selectors"] == ["bm25", "oracle"]


def test_the_cli_reports_and_gates_a_v3_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(V3_RUN, run)
    report = CliRunner().invoke(cli, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert (run / "index.html").exists()
    gate = CliRunner().invoke(cli, ["gate", str(run), "--baseline", str(V3_RUN)])
    assert gate.exit_code in (0, 1), gate.output  # a verdict, not a usage error
    assert "Traceback" not in gate.output
