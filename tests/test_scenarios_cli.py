"""`memeval generate` and `memeval import` on the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memeval.cli.generate import command as generate_command
from memeval.scenarios import load


def test_generate_writes_a_loadable_scenario(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--seed", "3", "--files", "25", "--turns", "8", "--out", str(tmp_path)]
    result = runner.invoke(generate_command, args)
    assert result.exit_code == 0, result.output
    path = tmp_path / "scenarios" / "synthetic-s3-f25-t8.yaml"
    assert f"wrote {path} (25 memories, 8 turns)" in result.output
    assert len(load(path).turns) == 8
    again = runner.invoke(generate_command, args)
    assert again.exit_code == 2 and "already exists" in again.output
    assert runner.invoke(generate_command, [*args, "--force"]).exit_code == 0


def test_generate_with_agents(tmp_path: Path) -> None:
    result = CliRunner().invoke(generate_command, ["--files", "30", "--turns", "20",
                                                   "--agents", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    scenario = load(tmp_path / "scenarios" / "synthetic-s0-f30-t20.yaml")
    assert sorted(scenario.agents) == ["code-reviewer", "test-writer"]


def test_generate_rejects_bad_sizes_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(generate_command, ["--files", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "Invalid value for '--files'" in result.output
