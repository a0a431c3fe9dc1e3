"""A write that fails part-way, then succeeds again (a disk full for a moment), and
links planted in a run folder: the folder stays whole and resumable, nothing is
written outside it.

The failure is the kernel's own: a child process runs `memeval run` under a small
`RLIMIT_FSIZE`, so the write that crosses it is cut short and the next one fails
(`EFBIG`, like `ENOSPC` a short write then an error); its `SIGXFSZ` handler lifts
the limit, so every write after it succeeds, as when space comes back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.log import INCOMPLETE_MARKER, PAYLOADS_FILE, RESULTS_FILE
from tests.reliability._scenario import SCENARIO, comparable_rows, write_suite

CHILD = textwrap.dedent("""\
    import resource, signal, sys
    def space_again(*_):
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    signal.signal(signal.SIGXFSZ, space_again)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
    sys.argv = ["memeval", *sys.argv[2:]]
    from memeval.cli import main
    main()
""")
BIG_BODY = "The docker postgres service needs the fixtures volume mounted. " * 600


def _suite(folder: Path, *, big: bool) -> Path:
    write_suite(folder, 3)
    if big:  # a long memory body: the payloads grow faster than the rows
        path = folder / "s0.yaml"
        text = path.read_text().replace(
            "Integration tests need the docker postgres service.", BIG_BODY)
        path.write_text(text)
    return folder


@pytest.mark.parametrize(("torn", "limit", "big"), [
    (PAYLOADS_FILE, 10_000, False), (RESULTS_FILE, 30_000, False)])
def test_a_write_torn_by_a_brief_disk_full_is_cut_back_and_the_run_resumes(
        tmp_path: Path, torn: str, limit: int, big: bool) -> None:
    scenarios = _suite(tmp_path / "scenarios", big=big)
    args = ["run", "--quiet", "--scenarios", str(scenarios / "*.yaml"), "-s", "bm25",
            "-s", "recency"]
    clean = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output

    out = tmp_path / "run"
    child = subprocess.run([sys.executable, "-c", CHILD, str(limit), *args, "--out", str(out)],
                           capture_output=True, text=True, timeout=120, check=False,
                           env={**os.environ, "MEMEVAL_WORLDS": str(tmp_path / "worlds")})
    output = child.stdout + child.stderr
    assert child.returncode == 1, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {out / torn}: File too large; free the space or fix the "
                      "folder, then rerun the same command to resume"], output
    assert "Traceback" not in output
    assert (out / INCOMPLETE_MARKER).exists()
    for name in (PAYLOADS_FILE, RESULTS_FILE):  # both end on a whole line
        data = (out / name).read_bytes()
        assert not data or data.endswith(b"\n"), name

    resumed = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert comparable_rows(out / RESULTS_FILE) == comparable_rows(tmp_path / "clean" /
                                                                   RESULTS_FILE)
    report = CliRunner().invoke(cli, ["report", str(out)])
    assert report.exit_code == 0, report.output


@pytest.mark.parametrize("name", [RESULTS_FILE, PAYLOADS_FILE, INCOMPLETE_MARKER,
                                  "summary.json", "config.json"])
def test_a_link_inside_a_run_folder_is_refused_and_its_target_untouched(
        tmp_path: Path, name: str) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO.format(id="s0"))
    out = tmp_path / "out"
    args = ["run", "--quiet", "--scenarios", str(tmp_path / "s.yaml"), "--out", str(out),
            "-s", "bm25"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    (out / name).unlink(missing_ok=True)
    (out / name).symlink_to(outside)

    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"{out / name}: a link (to {outside})" in errors[0], \
        result.output
    assert outside.read_text() == "keep me\n"
    assert (out / name).is_symlink()
