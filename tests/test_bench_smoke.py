"""The benchmark harness runs end to end at tiny sizes and writes valid JSON.

No timing is asserted: the figures at these sizes mean nothing; what could break is
the harness itself (a benchmark crashing, the JSON or the table going wrong).
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

bench = pytest.importorskip("bench", reason="bench/ lives in the repository checkout")

from bench.__main__ import command  # noqa: E402
from bench._core import Figure, table  # noqa: E402


def test_every_benchmark_runs_at_tiny_sizes_and_writes_json(tmp_path):
    out = tmp_path / "results.json"
    run = bench.run_all(profile="tiny", out=out, workdir=tmp_path / "work", log=lambda _m: None)
    data = json.loads(out.read_text())
    assert data["errors"] == {}, data["errors"]
    assert data["profile"] == "tiny"
    names = [f["name"] for f in data["figures"]]
    assert len(names) == len(set(names))
    for prefix in bench.BENCHMARKS:
        assert any(n.startswith(prefix + ".") for n in names), prefix
    for figure in data["figures"]:
        assert set(figure) >= {"name", "value", "unit", "target", "passed", "note"}
        assert figure["value"] is None or math.isfinite(figure["value"])
        assert figure["passed"] in (True, False, None)
    assert data["failed"] == [f["name"] for f in data["figures"] if f["passed"] is False]
    assert len(run.figures) == len(names)


def test_cli_runs_one_benchmark_and_prints_the_table(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(command, ["--profile", "tiny", "-b", "cost",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "| figure" in result.output and "cost.stateful_vs_stateless" in result.output
    assert json.loads(out.read_text())["figures"]


def test_cli_names_an_unknown_benchmark():
    result = CliRunner().invoke(command, ["-b", "nope"])
    assert result.exit_code == 2
    assert "nope" in result.output and "scan" in result.output


def test_table_shows_verdicts_and_missing_values():
    text = table([Figure("a.b", 3.0, "ms", 2.0), Figure("c", float("nan"), "x", 1.0),
                  Figure("d", 0.9, "", 0.8, ">=")])
    lines = text.splitlines()
    assert "FAIL" in lines[2] and "n/a" in lines[3] and "pass" in lines[4]
    assert Figure("c", float("nan"), "x", 1.0).to_dict()["value"] is None


def test_the_overhead_clock_finds_both_phases_of_the_system_under_test(tmp_path):
    """If the harness stopped calling the clocked names, their time would silently
    count as harness overhead."""
    import memeval.run.play
    from bench._core import Context, Sizes
    from bench.overhead import SYSTEM_UNDER_TEST, _suite, time_memeval

    ctx = Context(sizes=Sizes(overhead_files=5), workdir=tmp_path)
    originals = [getattr(memeval.run.play, name) for name in SYSTEM_UNDER_TEST]
    wall, startup, in_session, rows = time_memeval(ctx, _suite(ctx, 20), "clock")
    assert rows == 20
    assert startup > 0 and in_session > 0 and wall > startup + in_session
    assert [getattr(memeval.run.play, name) for name in SYSTEM_UNDER_TEST] == originals
