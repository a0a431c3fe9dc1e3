"""Where a run's worlds are written: in memory when the machine has room for them.

A world is a scenario's memdirs materialized for one run and deleted after it: small
files, read back at once, never kept. On a disk where creating a file costs a
journal write (a virtual machine's ext4: about 0.3 ms a file, with as much again to
delete it) writing them was most of the harness's time per turn. On Linux they go
to `/dev/shm`, a folder held in memory, when all of the run's worlds fit well
within it; the memdir scan sorts its listing by name, so what the system under test
sees does not depend on the folder's file system. `MEMEVAL_WORLDS` names another
folder (made if missing); a temporary folder the user chose (`TMPDIR`, `TEMP` or
`TMP`, as `tempfile` reads them) is honoured, as for every other temporary file.

A run makes its worlds inside one `WorldsFolder` of its own, which it holds locked while
it lasts. A run killed outright (`kill -9`, the out-of-memory killer) cannot remove
its worlds, and in `/dev/shm` they would hold memory until the machine restarts; the
next run that makes a folder there removes every folder whose run has died, which
the lock tells whatever process or container made it.
"""

from __future__ import annotations

import mmap
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: folders are made, never swept
    fcntl = None  # type: ignore[assignment]

from memeval.errors import MemevalError
from memeval.scenarios import Scenario

WORLDS_ENV = "MEMEVAL_WORLDS"
RAM_FOLDER = Path("/dev/shm")
_TEMP_ENV = ("TMPDIR", "TEMP", "TMP")  # where `tempfile` looks, in its order
RAM_BUDGET = 256 * 2**20  # bytes of memory all worlds of a run may take at most ...
RAM_SHARE = 0.5  # ... and at most this share of the folder's free space
_PAGE = mmap.PAGESIZE  # a file in memory takes whole pages
_PER_WORLD = 64 * _PAGE  # folders, the startup sandbox, MEMORY.md


def world_bytes(worlds: Iterable[Scenario]) -> int:
    """Memory the worlds of these scenarios (one per scenario and repeat) take at once."""
    total = 0
    for scenario in worlds:
        total += _PER_WORLD + sum(-(-len(spec.content.encode("utf-8", "replace")) // _PAGE)
                                  * _PAGE or _PAGE for *_, spec in scenario.iter_files())
    return total


def scratch_folder(needed: int) -> str | None:
    """The folder to make worlds in, or None for the system's temporary folder.

    Args:
        needed: bytes all worlds that may be open at once take (`world_bytes`).
    """
    chosen = os.environ.get(WORLDS_ENV)
    if chosen:
        try:
            Path(chosen).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemevalError(f"{WORLDS_ENV}={chosen}: cannot make the folder "
                               f"({exc.strerror or exc}); point it at a writable "
                               "folder or unset it") from None
        return chosen
    if any(os.environ.get(name) for name in _TEMP_ENV):
        return None
    try:
        free = shutil.disk_usage(RAM_FOLDER).free
    except OSError:  # no such folder: not Linux, or a container without it
        return None
    if needed > min(RAM_BUDGET, free * RAM_SHARE) or not os.access(RAM_FOLDER,
                                                                   os.W_OK | os.X_OK):
        return None
    return str(RAM_FOLDER)


RUN_PREFIX = "memeval-run-"  # a run's folder of worlds
_LOCK = "held"  # the file in it whose lock says the run is alive


class WorldsFolder:
    """A folder for one run's worlds, held while the run lasts and removed after it.

    The hold is an exclusive `flock` on a file inside: the kernel drops it when the
    process ends however it ends, so a folder nobody holds is one whose run died.
    Making a folder first removes such folders left in the same place by this user.

    Args:
        base: where to make it (`scratch_folder`); None for the system's temp folder.
    """

    def __init__(self, base: str | None) -> None:
        parent = tempfile.gettempdir() if base is None else base
        sweep_abandoned(parent)
        self.path = tempfile.mkdtemp(prefix=RUN_PREFIX, dir=parent)
        self._maker = os.getpid()
        try:
            self._held = _hold(self.path)
        except OSError:
            shutil.rmtree(self.path, ignore_errors=True)
            raise

    def close(self) -> None:
        """Remove the folder and everything left in it, then let go of it. A forked
        child only lets go: the folder is its parent's."""
        if os.getpid() == self._maker:
            shutil.rmtree(self.path, ignore_errors=True)
        if self._held is not None:
            os.close(self._held)
            self._held = None


def _hold(folder: str) -> int | None:
    """Lock a new file, then give it its name: a sweep never sees the name unheld."""
    if fcntl is None:
        return None
    making = os.path.join(folder, f".{_LOCK}-{os.getpid()}")
    handle = os.open(making, os.O_CREAT | os.O_EXCL | os.O_RDONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(making, os.path.join(folder, _LOCK))
    except OSError:
        os.close(handle)
        raise
    return handle


def sweep_abandoned(parent: str) -> int:
    """Remove this user's worlds folders in `parent` whose run is no longer alive (see
    `WorldsFolder`); returns how many. A folder without the lock file (being made, or
    from a memeval before this) is left alone."""
    if fcntl is None:
        return 0
    try:
        with os.scandir(parent) as listing:
            entries = [e for e in listing if e.name.startswith(RUN_PREFIX)]
    except OSError:
        return 0
    swept = 0
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or \
                    entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            handle = os.open(os.path.join(entry.path, _LOCK),  # never waits on a FIFO
                             os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its run is alive
            os.close(handle)
            continue
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
            swept += 1
        finally:
            os.close(handle)
    return swept
