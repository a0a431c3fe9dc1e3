"""Where worlds are written: memory when the run's worlds fit, else the temp folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memeval.run.play
import memeval.run.scratch as scratch
from memeval.cli import cli
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import generate, load


@pytest.fixture
def ram(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for /dev/shm, with neither override set."""
    folder = tmp_path / "shm"
    folder.mkdir()
    monkeypatch.setattr(scratch, "RAM_FOLDER", folder)
    monkeypatch.delenv(scratch.WORLDS_ENV, raising=False)
    for name in scratch._TEMP_ENV:
        monkeypatch.delenv(name, raising=False)
    return folder


def test_worlds_go_to_memory_when_they_fit(ram: Path) -> None:
    assert scratch.scratch_folder(1 << 20) == str(ram)
    assert scratch.scratch_folder(scratch.RAM_BUDGET + 1) is None  # over the budget


def test_a_machine_without_the_folder_uses_the_temp_folder(ram: Path) -> None:
    ram.rmdir()
    assert scratch.scratch_folder(1) is None


@pytest.mark.parametrize("name", ["TMPDIR", "TEMP", "TMP"])
def test_tmpdir_and_the_override_are_honoured(ram: Path, tmp_path: Path, name: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, str(tmp_path))
    assert scratch.scratch_folder(1) is None  # tempfile then uses that folder
    monkeypatch.setenv(scratch.WORLDS_ENV, str(tmp_path / "mine"))
    assert scratch.scratch_folder(scratch.RAM_BUDGET * 10) == str(tmp_path / "mine")


def test_world_bytes_count_whole_pages(tmp_path: Path) -> None:
    scenario = load(generate(3, 4, 1, tmp_path / "suite"))
    files = list(scenario.iter_files())
    page = scratch._PAGE
    pages = sum(max(1, -(-len(spec.content.encode()) // page)) for *_, spec in files)
    assert scratch.world_bytes([scenario]) == scratch._PER_WORLD + pages * page
    assert scratch.world_bytes([scenario, scenario]) == 2 * scratch.world_bytes([scenario])


def test_a_run_makes_its_worlds_in_the_chosen_folder(tmp_path: Path, ram: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    roots: list[Path] = []
    real = memeval.run.play.materialize

    def spy(scenario: object, root: Path) -> object:
        roots.append(Path(root))
        return real(scenario, root)

    monkeypatch.setattr(memeval.run.play, "materialize", spy)
    suite = generate(5, 3, 2, tmp_path / "suite")
    outcome = evaluate(RunConfig(scenarios=(str(suite),), selectors=("bm25",)),
                       tmp_path / "run", progress=False)
    assert outcome.rows == 2
    # each in the run's own folder there
    assert roots and all(root.parent.parent == ram for root in roots)
    assert all(root.parent.name.startswith(scratch.RUN_PREFIX) for root in roots)
    assert not list(ram.iterdir())  # and removes them, and the folder


def test_a_missing_override_folder_is_made(ram: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    wanted = tmp_path / "not" / "yet"
    monkeypatch.setenv(scratch.WORLDS_ENV, str(wanted))
    assert scratch.scratch_folder(1) == str(wanted)
    assert wanted.is_dir()


def test_an_override_that_cannot_be_made_is_one_clear_error(
        ram: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(scratch.WORLDS_ENV, str(blocker / "worlds"))
    suite = generate(3, 2, 1, tmp_path / "suite")
    result = CliRunner().invoke(cli, ["run", "--scenarios", str(suite), "--selector",
                                       "bm25", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert f"{scratch.WORLDS_ENV}={blocker / 'worlds'}: cannot make the folder" in result.output
    assert "unset it" in result.output
    assert "Traceback" not in result.output


_HOLDER = """
import sys, time
from memeval.run.scratch import WorldsFolder
folder = WorldsFolder(sys.argv[1])
print(folder.path, flush=True)
time.sleep(120)
"""


def _holder(base: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process holding a run folder in `base`, and the folder."""
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(base)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    return child, Path(child.stdout.readline().strip())


@pytest.mark.skipif(scratch.fcntl is None, reason="no flock on this platform: never swept")
def test_a_dead_runs_folder_is_swept_and_a_live_ones_is_kept(tmp_path: Path) -> None:
    base = tmp_path / "shm"
    base.mkdir()
    dead, dead_folder = _holder(base)
    alive, alive_folder = _holder(base)
    try:
        (dead_folder / "memeval-world" / "memory").mkdir(parents=True)
        (dead_folder / "memeval-world" / "memory" / "a.md").write_text("x")
        unlocked = base / f"{scratch.RUN_PREFIX}being-made"  # no lock file yet
        unlocked.mkdir()
        other = base / "memeval-older"  # a world of a memeval before run folders
        other.mkdir()
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait(timeout=30)
        assert scratch.sweep_abandoned(str(base)) == 1
        assert not dead_folder.exists()
        assert alive_folder.is_dir() and unlocked.is_dir() and other.is_dir()
        # A new run folder sweeps too, and is itself held: a second sweep keeps it.
        dead2, dead2_folder = _holder(base)
        os.kill(dead2.pid, signal.SIGKILL)
        dead2.wait(timeout=30)
        mine = scratch.WorldsFolder(str(base))
        assert not dead2_folder.exists()
        assert scratch.sweep_abandoned(str(base)) == 0
        assert Path(mine.path).is_dir() and alive_folder.is_dir()
        mine.close()
        assert not Path(mine.path).exists()
    finally:
        alive.kill()
        alive.wait(timeout=30)
    assert scratch.sweep_abandoned(str(base)) == 1  # the live one, once it died


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_closing_its_copy_leaves_the_folder(tmp_path: Path) -> None:
    mine = scratch.WorldsFolder(str(tmp_path))
    try:
        child = os.fork()
        if child == 0:  # the child: close its copy, then leave at once
            mine.close()
            os._exit(0)
        os.waitpid(child, 0)
        assert Path(mine.path).is_dir()
        assert scratch.sweep_abandoned(str(tmp_path)) == 0  # and the parent still holds it
    finally:
        mine.close()
    assert not Path(mine.path).exists()
