"""memeval init: the files it writes gate a user's selector in a repo outside memeval's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memeval.cli import cli


def test_init_writes_a_working_suite_outside_the_checkout(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "memory_eval"
    assert {p.name for p in folder.rglob("*") if p.is_file()} == {
        "my_selector.py", "test_memory_selection.py", "example.yaml", "memeval.yml"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "memory_eval",
         "--memeval-selector", "mine", "--memeval-scenarios", "memory_eval/scenarios",
         "--memeval-report", "out", "--memeval-min-recall", "0.5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "memeval gate: PASS" in run.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["selectors"] == ["mine"]
    again = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "already exists" in again.output
