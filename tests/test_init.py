"""memeval init: the files it writes gate a user's selector in a repo outside memeval's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memeval.cli import cli


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pytest memory_eval` as the user types it, in their repository."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "memory_eval", *args],
                          cwd=folder, capture_output=True, text=True, timeout=300)


def test_init_writes_a_suite_that_passes_and_gates_outside_the_checkout(
        tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "memory_eval"
    assert {p.name for p in folder.rglob("*") if p.is_file()} == {
        "my_selector.py", "test_memory_selection.py", "example.yaml", "memeval.yml",
        "pytest.ini", "conftest.py"}
    run = pytest_in(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "memeval gate: PASS" in run.stdout
    summary = json.loads((tmp_path / "reports" / "memeval" / "summary.json").read_text())
    assert summary["selectors"] == ["mine"]
    gate = CliRunner().invoke(cli, ["gate", str(tmp_path / "reports" / "memeval"),
                                    "--min-recall", "0.5", "--no-write"])
    assert gate.exit_code == 0, gate.output
    parallel = pytest_in(tmp_path, "-n", "2")  # the xdist controller knows `mine` too
    assert parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert "memeval gate: PASS" in parallel.stdout

    again = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_a_selector_that_returns_nothing_fails_the_gate(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    mine = tmp_path / "memory_eval" / "my_selector.py"
    text = mine.read_text(encoding="utf-8")
    body = "        names = tuple(ranked[: self.k])\n"
    assert body in text
    mine.write_text(text.replace(body, "        names = ()\n"), encoding="utf-8")
    run = pytest_in(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "memeval gate: FAIL" in run.stdout
    assert "recall = 0.000 is below the minimum 0.500" in run.stdout
    gate = CliRunner().invoke(cli, ["gate", str(tmp_path / "reports" / "memeval"),
                                    "--min-recall", "0.5", "--no-write"])
    assert gate.exit_code == 1, gate.output
