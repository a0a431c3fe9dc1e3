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
"""

from __future__ import annotations

import mmap
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

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
