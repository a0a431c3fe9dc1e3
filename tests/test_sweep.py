"""`memeval run --config sweep.toml`: a sweep as one reviewed file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.run.config import bundled_fixtures_dir
from memeval.run.sweep import load_sweep

SCENARIO = bundled_fixtures_dir() / "scenarios" / "a-dbt-warehouse.yaml"


def sweep(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_grid_expands_into_the_cross_product_of_its_lists(tmp_path):
    found = load_sweep(sweep(tmp_path, """
selectors = ["bm25"]
[[grid]]
name = "claude"
models = ["claude-sonnet-4-6", "claude-haiku-4-5"]
prompt = ["conservative", "recall"]
stateful = true
[[grid]]
name = "openai"
kind = "judge"
models = "qwen3:8b"
base_url = "http://localhost:11434/v1"
"""))
    assert found["selectors"] == (
        "bm25",
        "claude:claude-sonnet-4-6?prompt=conservative&stateful=1",
        "claude:claude-sonnet-4-6?prompt=recall&stateful=1",
        "claude:claude-haiku-4-5?prompt=conservative&stateful=1",
        "claude:claude-haiku-4-5?prompt=recall&stateful=1")
    assert found["judges"] == ("openai:qwen3:8b?base_url=http://localhost:11434/v1",)


def test_relative_paths_are_read_from_the_files_folder(tmp_path):
    found = load_sweep(sweep(tmp_path, 'scenarios = ["s/*.yaml"]\n'
                                       '[llm]\nreplay = "tapes/t.jsonl"\nmax_cost = 2.5\n'))
    assert found["scenarios"] == (str(tmp_path / "s" / "*.yaml"),)
    assert found["llm"].replay == str(tmp_path / "tapes" / "t.jsonl")
    assert found["llm"].max_cost == 2.5


@pytest.mark.parametrize(("text", "says"), [
    ("selector = ['bm25']", "unknown key 'selector'; did you mean 'selectors'?"),
    ("repeats = 'three'", "repeats = 'three' must be a int"),
    ("repeats = 0", "repeats must be at least 1"),
    ("history = 'mine'", "use one of gold, own"),
    ("[llm]\ncahce = 'x'", "unknown key llm.cahce; did you mean 'cache'?"),
    ("[[grid]]\nmodels = ['m']", "needs name"),
    ("[[grid]]\nname = 'bm25'\nk = []", "an empty list sweeps nothing"),
    ("[[grid]]\nname = 'bm25'\nkind = 'scorer'", "kind must be selector or judge"),
    ("selectors = [", "not valid TOML"),
])
def test_a_broken_sweep_names_the_file_the_key_and_the_fix(tmp_path, text, says):
    path = sweep(tmp_path, text)
    with pytest.raises(MemevalError) as caught:
        load_sweep(path)
    assert str(path) in str(caught.value) and says in str(caught.value)


def test_the_command_line_wins_over_the_file(tmp_path):
    path = sweep(tmp_path, f"""
scenarios = ["{SCENARIO}"]
selectors = ["bm25"]
limit = 4
[[grid]]
name = "recency"
k = [1, 3]
""")
    result = CliRunner().invoke(cli, ["run", "--quiet", "--config", str(path),
                                      "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "a" / "config.json").read_text())["config"]
    assert config["selectors"] == ["bm25", "recency?k=1", "recency?k=3"]
    assert config["limit"] == 4
    result = CliRunner().invoke(cli, ["run", "--quiet", "--config", str(path), "-s", "none",
                                      "--limit", "2", "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "b" / "config.json").read_text())["config"]
    assert config["selectors"] == ["none"] and config["limit"] == 2
    assert config["scenarios"] == [str(SCENARIO)]  # kept from the file


def test_a_broken_sweep_is_one_error_line_and_exit_2(tmp_path):
    path = sweep(tmp_path, "repeatz = 2\n")
    result = CliRunner().invoke(cli, ["run", "--quiet", "--config", str(path),
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "did you mean 'repeats'" in result.output
    assert result.output.count("\n") == 1 and not (tmp_path / "r").exists()
