"""The pytest plugin end to end, in throwaway projects run by pytester.

Each project uses a four-turn scenario (tests/data/plugin/tiny.yaml) so a run takes
about a second; the suites themselves are copied in from suites/.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
from pathlib import Path

import pytest

import memeval.llm
import memeval.plugin
import memeval.plugin.suite
import memeval.provenance
import memeval.report

# Imported here once: pytester forgets modules first imported by an inner run.
import memeval.run.evaluate
import memeval.scoring.gate
import memeval.scoring.summary
import memeval.testing
from memeval.log import read_results

pytest_plugins = ["pytester", "_plugin_project"]  # the `project` fixture

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "data" / "plugin" / "tiny.yaml"
SUITES = REPO / "suites"

TURNS = 4
JUDGED = "test_memeval_selection_judged.py"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--memeval-scenarios", "tiny.yaml",
                              *args)


def rows_of(folder: Path) -> list:
    return read_results(folder)


def test_oracle_suite_passes_with_one_item_per_turn_and_writes_the_run_folder(project):
    result = run(project, "-v", "--memeval-report", "out")
    result.assert_outcomes(passed=TURNS)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*test_selection*tiny.yaml::t1?oracle?*PASSED*",
                                 "*memeval*", "*oracle*gold*"])
    out = project.path / "out"
    rows = rows_of(out)
    assert [(r.turn_id, r.selector, tuple(r.judgements)) for r in rows] == [
        (f"t{i}", "oracle", ("gold",)) for i in range(1, TURNS + 1)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"][0]["recall"] == 1.0
    assert json.loads((out / "config.json").read_text())["source"] == "pytest"
    assert not (out / "gate.json").exists()  # no threshold, no baseline: no gate


def test_scores_are_recorded_as_user_properties(project):
    project.makeconftest("""
        def pytest_runtest_logreport(report):
            if report.when == "call":
                print("PROPS", dict(report.user_properties))
    """)
    result = run(project, "-s", "--memeval-selector", "none")
    result.stdout.fnmatch_lines(["*PROPS*'memeval_recall': 0.0*'memeval_outcome': 'miss'*"])


def test_missed_threshold_fails_the_session_naming_metric_value_and_threshold(project):
    result = run(project, "--memeval-selector=none", "--memeval-min-recall=0.5",
                 "--memeval-report", "out")
    result.assert_outcomes(passed=TURNS)  # scores never fail an item
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*memeval gate: FAIL*",
                                 "FAIL: recall = 0.000 is below the minimum 0.500 *none*",
                                 "*1 memeval gate failed*"])
    assert json.loads((project.path / "out" / "gate.json").read_text())["passed"] is False


def test_a_baseline_on_too_few_turns_fails_rather_than_deciding_on_them(project):
    assert run(project, "--memeval-report", "better").ret == 0
    same = run(project, "--memeval-report", "cand", "--memeval-baseline",
               "better/summary.json")
    assert same.ret == 1
    same.stdout.fnmatch_lines(["*memeval gate: FAIL*",
                               f"FAIL: only {TURNS - 1} paired scored turns (need 10)*"])


def test_ini_keys_configure_the_plugin(project):
    project.makeini("""
        [pytest]
        memeval_selector = none
        memeval_scenarios = tiny.yaml
        memeval_min_recall = 0.5
        memeval_report = from-ini
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    assert result.ret == 1
    assert len(rows_of(project.path / "from-ini")) == TURNS
    # the command line wins over the ini file
    assert project.runpytest("-p", "no:cacheprovider", "--memeval-selector", "oracle").ret == 0


def test_a_project_that_only_installs_memeval_gets_the_plugin(pytester, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shutil.copy(TINY, pytester.path / "tiny.yaml")
    pytester.makepyfile(test_mine="""
        import memeval.plugin

        def test_loaded_from_the_entry_point(pytestconfig):
            assert pytestconfig.pluginmanager.get_plugin("memeval") is memeval.plugin

        def test_fixtures(memdir_factory, selector, memeval_session):
            folder = memdir_factory({"a.md": "---\\ndescription: x\\n---\\nbody\\n"},
                                    ages={"a.md": 2})
            assert (folder / "a.md").is_file()
            assert selector.name == "oracle"
            record = memeval_session.play("t1")
            assert [s.key for s in record.surfaced] == ["testing.md"]

        def test_turns(memeval_turn):
            assert memeval_turn.failure() is None
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--memeval-scenarios", "tiny.yaml",
                                "-m", "memeval_suite or not memeval_suite")
    result.assert_outcomes(passed=2 + TURNS)
    assert not (pytester.path / "conftest.py").exists()


def test_broken_scenario_is_one_failing_item_and_the_rest_still_run(project):
    (project.path / "broken.yaml").write_text("id: broken\nnow: 2026-11-30T12:00:00Z\n"
                                              "turns:\n  - id: t1\n    qurey: x\n")
    result = project.runpytest("-p", "no:cacheprovider", "--memeval-scenarios", "tiny.yaml",
                               "--memeval-scenarios", "broken.yaml", "-v")
    result.assert_outcomes(passed=TURNS, failed=1)
    result.stdout.fnmatch_lines(["*broken.yaml::load-error*FAILED*"])
    result.stdout.fnmatch_lines(["*unknown key 'qurey'*"])


def test_unknown_selector_is_a_usage_error(project):
    result = run(project, "--memeval-selector", "bm52")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: unknown selector 'bm52'*"])


def test_llm_marker_skips_with_the_reason_when_no_model(project):
    (project.path / "tape.jsonl").write_text("")
    project.makepyfile(test_llm="""
        import pytest

        @pytest.mark.llm
        def test_needs_model(judge):
            pass

        @pytest.mark.llm(cassette="tape.jsonl")
        def test_has_cassette(judge):
            assert judge.name.startswith("claude")
    """)
    result = project.runpytest("-p", "no:cacheprovider", "test_llm.py", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*needs a model: no ANTHROPIC_API_KEY*--memeval-replay*"])


def test_xdist_workers_merge_into_one_folder_without_lost_or_duplicated_rows(project):
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--memeval-scenarios", "tiny.yaml",
        "--memeval-selector", "oracle", "--memeval-selector", "none",
        "--memeval-report", "out")
    result.assert_outcomes(passed=2 * TURNS)
    rows = rows_of(project.path / "out")
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys)) == 2 * TURNS
    assert {k[2] for k in keys} == {"oracle", "none"}


# -- the judged suite ---------------------------------------------------------------

def _recorder():
    spec = importlib.util.spec_from_file_location("cassette_record",
                                                  SUITES / "cassettes" / "record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judged suite's exchanges on the tiny scenario (oracle and all), recorded once
    from the fake server through the same session units the plugin runs."""
    from memeval.llm import ModelAccess, door_config
    from memeval.plugin.suite import SuiteStore
    from memeval.run.config import RunConfig
    from memeval.testing import FakeMessagesServer

    raw = tmp_path_factory.mktemp("cassette") / "raw.jsonl"
    store = SuiteStore(RunConfig(scenarios=(str(TINY),), selectors=("oracle", "all")))
    store.add_judge("claude")
    with FakeMessagesServer() as server, pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_API_KEY", "plugin-test-key-123")
        env.setenv("ANTHROPIC_BASE_URL", server.url)
        with ModelAccess(door_config(record=raw, cache=False)) as models:
            store.use_models(models)
            for case in store.cases():
                assert store.result(case).judge_error("claude:claude-sonnet-4-6") is None
    return raw


@pytest.fixture
def judged(project: pytest.Pytester, recorded: Path) -> pytest.Pytester:
    """The project with the judged suite and its normalized cassette."""
    shutil.copy(SUITES / "test_selection_judged.py", project.path / JUDGED)
    shutil.copy(recorded, project.path / "raw.jsonl")
    _recorder().normalize(recorded, project.path / "cassettes" / "judged.jsonl")
    return project


def test_judged_suite_replays_its_cassette_with_no_key_and_no_network(judged):
    text = (judged.path / "cassettes" / "judged.jsonl").read_text()
    assert "plugin-test-key-123" not in text and "x-api-key" not in text
    result = run(judged, "--memeval-report", "out", "-v")
    result.assert_outcomes(passed=2 * TURNS)
    judges = {j for r in rows_of(judged.path / "out") for j in r.judgements}
    assert judges == {"gold", "claude:claude-sonnet-4-6"}
    config = json.loads((judged.path / "out" / "config.json").read_text())
    assert [j["name"] for j in config["judges"]] == ["claude:claude-sonnet-4-6", "gold"]
    result.stdout.fnmatch_lines(["*oracle*claude:claude-sonnet-4-6*"])


def test_judged_scores_gate_through_statistics_only(judged):
    # `all` surfaces noise the judge calls irrelevant: items still pass, the gate fails
    result = run(judged, JUDGED, "--memeval-min-precision", "0.99",
                 "--memeval-selector", "all", "--memeval-report", "out")
    result.assert_outcomes(passed=TURNS)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAIL: precision = * is below the minimum 0.990 "
                                 "(selector all, judge claude:claude-sonnet-4-6)"])


def test_stale_cassette_fails_the_judged_items_naming_the_fix(judged):
    (judged.path / "cassettes" / "judged.jsonl").write_text("")
    result = run(judged, JUDGED)
    result.assert_outcomes(failed=TURNS - 1, passed=1)  # t3 selects nothing: no call
    result.stdout.fnmatch_lines(["*CassetteMiss*re-record*"])


def test_judged_suite_skips_with_the_reason_without_key_or_cassette(project):
    shutil.copy(SUITES / "test_selection_judged.py", project.path / JUDGED)
    result = run(project, JUDGED, "-rs")
    result.assert_outcomes(skipped=TURNS)
    result.stdout.fnmatch_lines(["*needs a model*judged.jsonl does not exist*"])


def test_cassette_normalization_does_not_depend_on_recording_order(judged, tmp_path):
    recorder = _recorder()
    lines = (judged.path / "raw.jsonl").read_text().splitlines()
    random.Random(1).shuffle(lines)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    recorder.normalize(shuffled, tmp_path / "a.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == \
        (judged.path / "cassettes" / "judged.jsonl").read_bytes()


def test_committed_cassette_holds_no_secret_and_is_sorted():
    path = SUITES / "cassettes" / "judged.jsonl"
    keys = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            assert "x-api-key" not in line and "sk-ant" not in line and "authorization" \
                not in line.lower()
            keys.append(json.loads(line)["key"])
    assert keys == sorted(keys) and len(keys) == len(set(keys)) > 0


def test_plugin_module_stays_light_to_import():
    # every pytest run of every project that installs memeval imports it
    import subprocess
    import sys

    code = ("import sys, memeval.plugin; heavy = [m for m in ('pandas', 'scipy', "
            "'memeval.run.evaluate', 'anthropic') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert memeval.plugin.DEFAULT_SELECTOR == "oracle"


def test_help_lists_every_option(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--memeval-margin*", "*calibration.json*",
                                 "*memeval_min_recall*"])
    for option in memeval.plugin.OPTIONS:
        assert option.flag in result.stdout.str()


def test_replay_option_wins_over_a_key_and_never_calls_out(judged, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-real-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens here
    result = run(judged, JUDGED, "--memeval-replay",
                 "cassettes/judged.jsonl")
    result.assert_outcomes(passed=TURNS)


def test_record_option_writes_a_cassette_from_a_live_model(project, monkeypatch):
    from memeval.testing import FakeMessagesServer

    shutil.copy(SUITES / "test_selection_judged.py", project.path / JUDGED)
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "plugin-test-key-456")
        result = run(project, JUDGED, "--memeval-record", "tape.jsonl")
        result.assert_outcomes(passed=TURNS)
        calls = len(server.message_requests())
    lines = (project.path / "tape.jsonl").read_text().splitlines()
    assert len(lines) == calls == TURNS - 1  # the weather turn selects nothing to judge
    assert "plugin-test-key-456" not in "".join(lines)


def test_missing_baseline_is_a_usage_error_before_anything_runs(project):
    result = run(project, "--memeval-baseline", "nowhere/summary.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --memeval-baseline *nowhere/summary.json: no such "
                                 "file*"])
    assert not (project.path / "reports").exists()


# -- runs made the same way, or not ---------------------------------------------------------

FIXTURE_SCENARIOS = [str(REPO / "fixtures" / "scenarios" / f"{name}.yaml") for name in
                     ("a-android-banking", "a-rails-invoicing", "b-spring-payments")]


def _gate(run_dir: Path, baseline: Path) -> tuple[int, str]:
    from click.testing import CliRunner

    from memeval.cli import cli

    result = CliRunner().invoke(cli, ["gate", str(run_dir), "--baseline", str(baseline),
                                       "--no-write"])
    return result.exit_code, result.output


def test_a_plugin_run_and_a_memeval_run_made_alike_gate_each_other(project):
    """Same selector, same history (gold, both defaults): PASS both ways. The plugin
    made to play its own history: the gate, compare and the plugin's own baseline
    check refuse the pair with one line naming the flag that fixes it."""
    from memeval.run.config import RunConfig
    from memeval.run.evaluate import evaluate
    from memeval.scoring.compare import compare_runs

    scenarios = [a for path in FIXTURE_SCENARIOS for a in ("--memeval-scenarios", path)]
    plugin = project.runpytest("-p", "no:cacheprovider", "--memeval-selector", "bm25",
                               *scenarios, "--memeval-report", "plugin")
    assert plugin.ret == 0
    cli = project.path / "cli"
    evaluate(RunConfig(scenarios=tuple(FIXTURE_SCENARIOS), selectors=("bm25",),
                       concurrency=1), cli, progress=False)
    made = json.loads((project.path / "plugin" / "summary.json").read_text())["made"]
    assert made["history"] == "gold" and made["source"] == "pytest"
    for run_dir, baseline in ((project.path / "plugin", cli), (cli, project.path / "plugin")):
        code, output = _gate(run_dir, baseline)
        assert code == 0 and "gate: PASS" in output, output

    own = project.runpytest("-p", "no:cacheprovider", "--memeval-selector", "bm25",
                            *scenarios, "--memeval-report", "own", "--memeval-history", "own")
    assert own.ret == 0
    code, output = _gate(project.path / "own", cli)
    assert code == 2
    [line] = output.strip().splitlines()
    assert line == ("Error: cannot pair runs made differently: history is gold in the "
                    "baseline but own in the candidate; rerun the candidate with `memeval "
                    "run --history gold` (pytest: --memeval-history gold)")
    with pytest.raises(memeval.provenance.NotComparable, match="history is gold"):
        compare_runs(cli, project.path / "own")
    checked = project.runpytest("-p", "no:cacheprovider", "--memeval-selector", "bm25",
                                *scenarios, "--memeval-report", "own2", "--memeval-history",
                                "own", "--memeval-baseline", str(cli / "summary.json"))
    assert checked.ret == 1
    checked.stdout.fnmatch_lines(["*memeval gate: ERROR*",
                                  "cannot pair runs made differently: history is gold in the "
                                  "baseline but own in the candidate; rerun the candidate "
                                  "with*--memeval-history gold)"])
