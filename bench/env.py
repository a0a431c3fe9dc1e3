"""The machine's file system, measured so the harness figures can be read against it.

Every session materializes its memdir in a temporary folder (folders, files, then
removal) and every finished session is fsync'ed into results.jsonl, so a slow disk
shows up in the overhead, concurrency and cache figures. These figures say how slow.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench._core import Context, Figure

ROUNDS = 50


def folder_round_trip_ms(root: Path) -> float:
    started = time.perf_counter()
    for i in range(ROUNDS):
        path = root / f"bench-dir-{i}"
        path.mkdir()
        path.rmdir()
    return (time.perf_counter() - started) / ROUNDS * 1e3


def fsync_ms(root: Path) -> float:
    path = root / "bench-fsync"
    started = time.perf_counter()
    with path.open("ab") as fh:
        for _ in range(ROUNDS // 5):
            fh.write(b"x" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
    elapsed = time.perf_counter() - started
    path.unlink()
    return elapsed / (ROUNDS // 5) * 1e3


def run(ctx: Context) -> list[Figure]:
    temp = Path(tempfile.gettempdir())
    return [
        Figure("env.tempdir.mkdir_rmdir", folder_round_trip_ms(temp), "ms",
               note=f"one folder made and removed in {temp} (sessions materialize here)"),
        Figure("env.workdir.fsync_4k", fsync_ms(ctx.workdir), "ms",
               note="append 4 KB and fsync, as results.jsonl does per session"),
    ]
