"""Bad scenarios and options: one clear message naming the file, the line and the fix,
and never a folder that looks like a finished run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import memeval.run.evaluate
import memeval.run.runner
from memeval.cli import cli
from memeval.log import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    SUMMARY_FILE,
    read_results,
)
from tests.reliability._scenario import SCENARIO

GOOD = SCENARIO.format(id="s0")

# name -> (edit of the good scenario, line the message must name, fragment of the fix)
MISTAKES: dict[str, tuple[tuple[str, str], int | None, str]] = {
    "unclosed bracket": (("mode: recall", "mode: [recall"), 5, "close every ["),
    "tab indentation": (("  project:\n", "\tproject:\n"), 8, "indent with spaces"),
    "misspelt key": (("mode: recall", "mdoe: recall"), 4, "did you mean 'mode'"),
    "unknown mode": (("mode: recall", "mode: recal"), 4, "use recall or index"),
    "time not ISO": (("now: 2026-11-30T12:00:00Z", "now: yesterday"), 3, "write e.g. 2026"),
    "label names no file": (("relevant: [testing.md]", "relevant: [tseting.md]"), 51,
                            "did you mean 'testing.md'"),
    "unknown category": (("category: direct", "category: drect"), 49, "did you mean 'direct'"),
    "duplicate turn id": (("id: t2", "id: t1"), 52, "make it unique"),
    "absolute memory path": (("testing.md:\n", "/etc/testing.md:\n"), 10,
                             "must be relative to the memdir"),
    "path out of the memdir": (("testing.md:\n", "../testing.md:\n"), 10,
                               "files stay inside the memdir"),
    "negative age": (("age_days: 20", "age_days: -5"), 18, "must be >= 0"),
    "duplicate YAML key": (("mode: recall", "mode: recall\nmode: index"), 5, "keep one"),
    "NUL byte": (("mode: recall", "mode: re\x00call"), 4, "plain UTF-8 text"),
    "empty file": ((GOOD, ""), 1, "needs at least id, now and turns"),
    "a list, not a mapping": ((GOOD, "- a\n- b\n"), 1, "a scenario is a mapping"),
}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", "--quiet", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"crashed instead of a message: {result.exception!r}")
    return result.exit_code, result.output


def assert_not_a_finished_run(out: Path) -> None:
    """Nothing, or a folder still marked unfinished (a finished run has its summary and
    no RUN_INCOMPLETE marker)."""
    if out.exists() and ((out / SUMMARY_FILE).exists() or (out / RESULTS_FILE).exists()):
        assert (out / INCOMPLETE_MARKER).exists(), f"{out} looks like a finished run"


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=list(MISTAKES))
def test_each_scenario_mistake_names_file_line_and_fix(tmp_path: Path, mistake: str) -> None:
    (old, new), line, fix = MISTAKES[mistake]
    assert old in GOOD
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    out = tmp_path / "out"
    code, output = run("--scenarios", str(bad), "--out", str(out), "-s", "bm25")
    assert code == 2  # a usage error: the scenario passed is bad
    assert f"{bad}:{line}:" in output, output
    assert fix in output, output
    assert "Traceback" not in output
    assert_not_a_finished_run(out)


def test_a_bad_file_beside_good_ones_is_skipped_loudly_and_recorded(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text(GOOD.replace("id: s0", "id: s1").replace(
        "mode: recall", "mode: recal"))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--quiet", "--scenarios", str(tmp_path / "*.yaml"),
                                      "--out", str(out), "-s", "bm25"])
    assert result.exit_code == 3, result.output  # the rows are written, the run is loud
    assert f"skipped: 1 problem in scenario {tmp_path / 'bad.yaml'}" in result.output
    assert "1 scenario file(s) failed to load" in result.output
    config = json.loads((out / CONFIG_FILE).read_text())
    assert len(config["scenario_errors"]) == 1 and "bad.yaml:4" in config["scenario_errors"][0]
    assert (out / SUMMARY_FILE).exists() and not (out / INCOMPLETE_MARKER).exists()


# option -> the fragment of its one-line error
OPTIONS: dict[str, tuple[list[str], str]] = {
    "unknown selector": (["-s", "bm2"], "unknown selector 'bm2'"),
    "bad selector value": (["-s", "bm25?k=x"], "k='x' is not valid, expected an integer"),
    "unknown selector option": (["-s", "bm25?kk=3"], "valid parameters of 'bm25': k"),
    "unknown judge": (["-j", "gld"], "unknown judge 'gld'"),
    "zero repeats": (["--repeats", "0"], "Invalid value for '--repeats'"),
    "unknown compat": (["--compat", "x"], "unknown preset 'x'; use 'faithful' or 'hardened'"),
    "concurrency not a number": (["--concurrency", "abc"], "Invalid value for '--concurrency'"),
    "cache and no-cache": (["--cache", "c.sqlite", "--no-cache"], "contradict each other"),
    "negative budget": (["--max-cost", "-1"], "Invalid value for '--max-cost'"),
    "missing cassette": (["--replay-cassette", "nowhere.jsonl"], "does not exist"),
    "no files match": (["--scenarios", "nowhere/*.yaml"],
                       "nowhere/*.yaml: no scenario files matched; check the path"),
}


@pytest.mark.parametrize("option", list(OPTIONS), ids=list(OPTIONS))
def test_each_bad_option_is_one_clear_error(tmp_path: Path, option: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(GOOD)
    args, fragment = OPTIONS[option]
    if "--scenarios" not in args:
        args = ["--scenarios", "s.yaml", *args]
    code, output = run(*args, "--out", "out")
    assert code == 2  # every bad option is a usage error, as in `memeval gate`
    assert fragment in output, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    assert "Traceback" not in output
    assert_not_a_finished_run(tmp_path / "out")


def test_corrupt_cassette_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(GOOD)
    (tmp_path / "tape.jsonl").write_text('{"key": "a", "request": {}, "response": {}}\nnot json\n')
    code, output = run("--scenarios", "s.yaml", "-s", "claude", "--replay-cassette",
                       "tape.jsonl", "--out", "out", "--no-cache")
    assert code == 2
    assert "tape.jsonl: line 2: not a cassette entry" in output and "re-record" in output
    assert_not_a_finished_run(tmp_path / "out")


def test_bad_budget_in_the_environment_is_named(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMEVAL_MAX_COST", "lots")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")  # past the no-key stop
    (tmp_path / "s.yaml").write_text(GOOD)
    code, output = run("--scenarios", "s.yaml", "-s", "claude", "--out", "out", "--no-cache")
    assert code == 2 and "$MEMEVAL_MAX_COST='lots': expected a number" in output
    assert_not_a_finished_run(tmp_path / "out")


# ------------------------------------------- a run that dies is never "finished"
def test_a_run_that_crashes_midway_is_marked_incomplete_then_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        (tmp_path / f"s{i}.yaml").write_text(SCENARIO.format(id=f"s{i}"))
    real = memeval.run.runner.play_unit  # what the runner plays: one unit of a session

    async def dying(world, unit, *args, **kwargs):  # type: ignore[no-untyped-def]
        if unit.scenario.id == "s1":
            raise RuntimeError("the machine fell over")
        return await real(world, unit, *args, **kwargs)

    monkeypatch.setattr(memeval.run.runner, "play_unit", dying)
    out = tmp_path / "out"
    args = ["run", "--quiet", "--scenarios", str(tmp_path / "*.yaml"), "--out", str(out),
            "-s", "bm25", "--concurrency", "1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert "turn(s) failed with RuntimeError: the machine fell over" in result.output
    assert_not_a_finished_run(out)
    assert len({r.scenario for r in read_results(out)}) == 2

    monkeypatch.setattr(memeval.run.runner, "play_unit", real)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    turns = SCENARIO.count("- id:")  # s1's turns, a unit each under gold history
    assert f"({turns} units run, {2 * turns} resumed)" in result.output
    assert (out / SUMMARY_FILE).exists() and not (out / INCOMPLETE_MARKER).exists()


def test_a_run_whose_summary_fails_is_not_finished(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_text(GOOD)

    def broken(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(memeval.run.evaluate, "finish_run", broken)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--quiet", "--scenarios", str(tmp_path / "s.yaml"),
                                      "--out", str(out), "-s", "bm25"])
    assert result.exit_code != 0
    assert (out / RESULTS_FILE).exists()
    assert (out / INCOMPLETE_MARKER).exists()


@pytest.mark.parametrize("case", ["read-only", "proc", "results-is-a-folder",
                                  "summary-is-a-folder"])
def test_a_bad_out_folder_is_one_error_line(case: str, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(GOOD)
    out = tmp_path / "out"
    if case == "read-only":
        out.mkdir()
        out.chmod(0o500)
        if os.access(out, os.W_OK):  # root ignores modes: use a path under /proc instead
            out = Path("/proc/self/memeval-out")
    elif case == "proc":
        out = Path("/proc/memeval-out")
    else:
        (out / ("results.jsonl" if case == "results-is-a-folder" else "summary.json")).mkdir(
            parents=True)
    code, output = run("--scenarios", str(tmp_path / "s.yaml"), "-s", "bm25", "--out", str(out))
    assert code == 2, output
    assert [line for line in output.splitlines() if line.startswith("Error:")] == \
        [output.strip().splitlines()[-1]]
    assert "Traceback" not in output and "--out" in output
    assert not list(tmp_path.rglob(".summary.json.*.tmp"))
