"""Bad command input exits 2 in every command (click's usage-error code), with an
`Error`-style message and no traceback; and `inspect` takes a bundled scenario by id."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import memeval.run.config
from memeval.cli import cli

SCENARIO = """\
id: tiny-shop
now: 2026-11-30T12:00:00Z
memdirs:
  project:
    files:
      testing.md: "---\\ndescription: run the tests against postgres\\ntype: feedback\\n---\\nx\\n"
      deploy.md: "---\\ndescription: deploys go out on tuesdays\\ntype: project\\n---\\ny\\n"
turns:
  - id: t1
    query: how do I run the tests against postgres?
    category: direct
    why: testing.md says how
    relevant: [testing.md]
"""

# One mistake per case ({tmp} is a folder holding: empty/, empty2/, not-json.json,
# list.json and a-file): a typo, a missing path, or a file of the wrong kind.
CASES: dict[str, str] = {
    "run: unknown option": "run --bogus",
    "run: unknown selector": "run --quiet -s bm2 --out {tmp}/o",
    "run: no scenario matches": "run --quiet --scenarios {tmp}/none/*.yaml --out {tmp}/o2",
    "run: --out is a file": "run --quiet --out {tmp}/a-file",
    "gate: missing folder": "gate {tmp}/nope",
    "gate: not a run folder": "gate {tmp}/empty",
    "gate: threshold out of range": "gate {tmp}/empty --min-recall 2",
    "compare: missing argument": "compare {tmp}/empty",
    "compare: not run folders": "compare {tmp}/empty {tmp}/empty2",
    "inspect: no such scenario": "inspect a-dbt-warehous",
    "inspect: a folder": "inspect {tmp}",
    "inspect: not a scenario": "inspect {tmp}/not-json.json",
    "inspect: unknown turn": "inspect a-dbt-warehouse --turn t999",
    "inspect: unknown selector": "inspect a-dbt-warehouse -s bm2",
    "import: missing file": "import locomo {tmp}/nope.json --out {tmp}/i",
    "import: not JSON": "import locomo {tmp}/not-json.json --out {tmp}/i2",
    "import: not LongMemEval": "import longmemeval {tmp}/list.json --out {tmp}/i3",
    "report: not a run folder": "report {tmp}/empty",
    "init: ROOT not creatable": "init {tmp}/a-file/below",
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exits_2_without_a_traceback(case: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty2").mkdir()
    (tmp_path / "not-json.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    args = CASES[case].format(tmp=tmp_path).split()
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"crashed instead of a message: {result.exception!r}")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.strip(), "a usage error must say what is wrong"


def test_inspect_takes_a_bundled_id_wherever_the_fixtures_are_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a wheel the fixtures live in memeval/_bundled/fixtures, not beside the
    checkout; the id is looked up wherever `bundled_fixtures_dir` says they are."""
    installed = tmp_path / "site" / "memeval" / "_bundled" / "fixtures" / "scenarios"
    installed.mkdir(parents=True)
    (installed / "tiny-shop.yaml").write_text(SCENARIO, encoding="utf-8")
    monkeypatch.setattr(memeval.run.config, "bundled_fixtures_dir",
                        lambda: installed.parent)
    monkeypatch.chdir(tmp_path)  # no file of that name here
    result = CliRunner().invoke(cli, ["inspect", "tiny-shop", "-s", "oracle"])
    assert result.exit_code == 0, result.output
    assert "── turn t1 [direct] ──" in result.output
    assert "surfaced: ['testing.md']" in result.output
    typo = CliRunner().invoke(cli, ["inspect", "tiny-shp"])
    assert typo.exit_code == 2 and "did you mean 'tiny-shop'?" in typo.output


def test_inspect_shows_control_characters_escaped(tmp_path: Path) -> None:
    """Scenario text is data: an OSC 52 clipboard write, a colour or a clear-screen
    in a memory or a query reaches the terminal as visible escapes (issue 37)."""
    hostile = SCENARIO.replace("x\\n\"", "\\e]52;c;aGk=\\a\\e[2J\\e[31mred\\r\\n\"").replace(
        "how do I run the tests against postgres?",
        "\"how do I run the tests against postgres?\\e]8;;http://x\\e\\\\\"")
    path = tmp_path / "hostile.yaml"
    path.write_text(hostile, encoding="utf-8")
    result = CliRunner().invoke(cli, ["inspect", str(path), "-s", "oracle", "--reminders"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]52;c;aGk=\\x07" in result.output and "\\x1b]8;;http://x" in result.output


def test_inspect_help_example_is_a_real_bundled_scenario() -> None:
    from memeval.cli.inspect_ import EXAMPLES
    from memeval.run.config import bundled_fixtures_dir

    first = EXAMPLES.split("memeval inspect ", 1)[1].split()[0]
    assert (bundled_fixtures_dir() / "scenarios" / f"{first}.yaml").is_file()
    help_text = CliRunner().invoke(cli, ["inspect", "--help"]).output
    assert f"memeval inspect {first}" in help_text



def test_the_command_line_starts_without_the_heavy_libraries():
    """`memeval --help` and every command's start stay fast: pandas and scipy load when a
    command needs them, not when the CLI is imported (they cost about a second)."""
    import subprocess
    import sys

    code = ("import sys, memeval.cli; print([m for m in ('pandas', 'scipy', 'anthropic') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_the_run_package_names_what_it_offers_and_loads_it_on_use():
    import memeval.run as run

    for name in run.__all__:
        value = getattr(run, name)
        assert getattr(value, "__name__", name) == name, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = run.nope
