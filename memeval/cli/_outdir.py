"""Check a run folder before any work: every problem is one `Error:` line with the fix."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memeval.cli._errors import InputError
from memeval.log import (
    CONFIG_FILE,
    PAYLOADS_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    RunFolderForeign,
    refuse_foreign,
)


def check_out_dir(out: Path) -> None:
    """Refuse a folder that cannot hold a run: not creatable, not writable, with a
    folder where one of the run's files must go, or holding something other than a
    memeval run (whose page and summary the run would replace)."""
    try:
        refuse_foreign(out)
    except RunFolderForeign as exc:
        raise InputError(f"--out {exc}") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create it ({exc.strerror or exc}); pick a "
                         "folder you can write to") from None
    if not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder; pick another path")
    for name in (RESULTS_FILE, PAYLOADS_FILE, SUMMARY_FILE, CONFIG_FILE, REPORT_FILE):
        if (out / name).is_dir():
            raise InputError(f"--out {out}: {name} there is a folder, where the run writes "
                             "a file; move it away or pick another --out")
    try:
        fd, probe = tempfile.mkstemp(prefix=".memeval-probe-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write there ({exc.strerror or exc}); pick a "
                         "folder you can write to") from None


def disk_error(exc: OSError, run_dir: Path) -> str:
    """An `OSError` met while the run was writing (a full disk, a folder changed under
    it), as one line with the path and how to carry on."""
    where = exc.filename or run_dir
    return (f"{where}: {exc.strerror or exc}; free the space or fix the folder, then rerun "
            "the same command to resume")
