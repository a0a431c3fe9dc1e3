"""Output-folder faults the `--out` check cannot see in advance, or that need a real
read-only filesystem: one `Error:` line, no traceback, the folder left resumable."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memeval.run.evaluate
from memeval.cli import cli
from memeval.log import INCOMPLETE_MARKER, RESULTS_FILE, SUMMARY_FILE, read_results
from tests.reliability._scenario import SCENARIO


def one_error(output: str) -> str:
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    assert "Traceback" not in output
    return errors[0]


def test_a_disk_that_fills_up_mid_run_is_one_error_and_resumable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO.format(id="s0"))
    out = tmp_path / "out"

    write_json = memeval.run.evaluate.write_json

    def full(path: Path, data: object) -> None:  # the disk fills up at summary.json
        if path.name == SUMMARY_FILE:
            raise OSError(28, "No space left on device", str(path))
        write_json(path, data)

    monkeypatch.setattr(memeval.run.evaluate, "write_json", full)
    args = ["run", "--quiet", "--scenarios", str(tmp_path / "s.yaml"), "--out", str(out),
            "-s", "bm25"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert one_error(result.output) == (
        f"Error: {out / SUMMARY_FILE}: No space left on device; free the space or fix the "
        "folder, then rerun the same command to resume")
    assert (out / INCOMPLETE_MARKER).exists()
    assert len(read_results(out / RESULTS_FILE)) == 5  # the session's rows were kept
    assert not list(out.glob(".*.tmp"))

    monkeypatch.undo()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "(0 units run, 5 resumed)" in result.output
    assert not (out / INCOMPLETE_MARKER).exists()


def test_a_read_only_mount_is_one_error(tmp_path: Path) -> None:
    """A real read-only tmpfs in a private mount namespace (root or user namespaces
    needed; `test_bad_inputs.py` covers the other unwritable folders everywhere)."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-m", "mount", "-t", "tmpfs", "-o", "ro",
                                          "none", str(tmp_path)], capture_output=True,
                                         check=False).returncode != 0:
        pytest.skip("cannot mount in a private namespace here (needs root or unshare)")
    (tmp_path / "s.yaml").write_text(SCENARIO.format(id="s0"))
    mount = tmp_path / "ro"
    mount.mkdir()
    memeval_bin = Path(sys.executable).parent / "memeval"
    outputs = []
    for out in (mount / "run", mount):  # a folder to create, an existing one to write in
        script = (f"mount -t tmpfs -o ro none {mount} && {memeval_bin} run --quiet -s bm25 "
                  f"--scenarios {tmp_path / 's.yaml'} --out {out}")
        done = subprocess.run([unshare, "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 2, done.stdout + done.stderr
        outputs.append(one_error(done.stdout + done.stderr))
    assert outputs == [
        f"Error: --out {mount / 'run'}: cannot create it (Read-only file system); pick a "
        "folder you can write to",
        f"Error: --out {mount}: cannot write there (Read-only file system); pick a folder "
        "you can write to",
    ]
