"""The pytest plugin and its run folder: it takes the folder's lock before touching
anything, and a gate error is one failure line whatever other plugins are loaded
(hypothesis', loaded here through its entry point, reads every stats entry)."""

from __future__ import annotations

import pytest

# Imported here once: pytester forgets modules first imported by an inner run.
import memeval.plugin
import memeval.report
import memeval.run.evaluate
import memeval.scoring.gate  # noqa: F401
from memeval.log import CONFIG_FILE, RESULTS_FILE, ResultsWriter

pytest_plugins = ["pytester", "_plugin_project"]  # the `project` fixture



def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--memeval-scenarios", "tiny.yaml",
                              "--memeval-report", "out", *args)


def test_a_folder_a_live_run_holds_is_left_alone_and_one_failure_line_says_so(
        project: pytest.Pytester) -> None:
    assert "hypothesispytest" in {name for name, _ in project.parseconfig()
                            .pluginmanager.list_name_plugin()}
    assert run(project).ret == 0
    out = project.path / "out"
    before = {name: (out / name).read_bytes() for name in (RESULTS_FILE, CONFIG_FILE)}
    with ResultsWriter(out):  # a live run writing the folder
        result = run(project, "--memeval-min-recall", "0")
        assert {name: (out / name).read_bytes() for name in before} == before
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*memeval gate: ERROR*",
                                 f"{out}: another memeval run is writing this folder*",
                                 "*1 memeval gate failed*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stdout.str()


def test_a_failed_gate_is_one_line_with_hypothesis_loaded(project: pytest.Pytester) -> None:
    result = run(project, "--memeval-selector", "none", "--memeval-min-recall", "0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAIL: recall = 0.000 is below the minimum 0.500 *",
                                 "*1 memeval gate failed*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
