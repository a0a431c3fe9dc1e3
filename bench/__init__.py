"""memeval's benchmarks: speed, scale and cost of the harness, each against a baseline.

Run `python -m bench` from a checkout; `--quick` for smaller sizes. Each module
measures one thing and returns figures; `run_all` runs them in one process, prints
the table and writes `bench/results.json`. Benchmarks are never unit tests: the
smoke test only checks that the harness runs and writes valid JSON.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._core import DEFAULT, QUICK, TINY, Context, Figure, Sizes, table, write_results

# name -> module; each module has `run(ctx) -> list[Figure]`. Order is the table's.
BENCHMARKS: dict[str, str] = {
    "env": "bench.env",
    "scan": "bench.scan",
    "overhead": "bench.overhead",
    "concurrency": "bench.concurrency",
    "cache": "bench.cache",
    "cost": "bench.cost",
    "memory": "bench.memory",
    "embed": "bench.embed",
    "results": "bench.results",
}
PROFILES: dict[str, Sizes] = {"default": DEFAULT, "quick": QUICK, "tiny": TINY}
RESULTS_PATH = Path(__file__).parent / "results.json"


@dataclass(frozen=True)
class BenchRun:
    """What `run_all` measured and wrote."""

    figures: tuple[Figure, ...]
    data: dict[str, Any]
    path: Path

    @property
    def failed(self) -> list[str]:
        return list(self.data["failed"])

    @property
    def errors(self) -> dict[str, str]:
        return dict(self.data["errors"])


@contextmanager
def temp_root(folder: Path | None) -> Iterator[None]:
    """Make `folder` the process's temporary folder (TMPDIR) for the block."""
    if folder is None:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(folder), str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env


def run_all(*, profile: str = "default", only: Sequence[str] = (),
            out: Path = RESULTS_PATH, workdir: Path | None = None,
            tmpdir: Path | None = None, log: Callable[[str], None] = print) -> BenchRun:
    """Run the benchmarks (all, or those named in `only`) and write `out`.

    Args:
        profile: `default` (the sizes the targets are stated for), `quick`, or `tiny`
            (the smoke test's: every code path, timings meaningless).
        only: benchmark names to run; empty runs all.
        out: where the JSON goes.
        workdir: scratch folder for generated memdirs and runs; default a temp folder.
        tmpdir: the temporary folder for this run (sessions materialize their memdirs
            there), e.g. a tmpfs such as /dev/shm to take a slow disk out of the figures.
        log: progress lines.

    A benchmark that crashes is recorded under `errors` and the others still run.
    """
    sizes = PROFILES[profile]
    names = list(only) or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; choose from {sorted(BENCHMARKS)}")
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    started = time.perf_counter()
    with temp_root(tmpdir), tempfile.TemporaryDirectory(prefix="memeval-bench-") as tmp:
        root = workdir or Path(tmp)
        for name in names:
            ctx = Context(sizes=sizes, workdir=root / name, log=log)
            ctx.workdir.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            try:
                figures += importlib.import_module(BENCHMARKS[name]).run(ctx)
            except Exception:  # one broken benchmark must not hide the others' figures
                errors[name] = traceback.format_exc(limit=8)
                log(f"{name}: FAILED\n{errors[name]}")
            log(f"{name}: {time.perf_counter() - t0:.1f} s")
    data = write_results(out, figures, profile=profile,
                         seconds=time.perf_counter() - started, errors=errors,
                         tmpdir=str(tmpdir or tempfile.gettempdir()))
    return BenchRun(tuple(figures), data, out)


__all__ = ["BENCHMARKS", "PROFILES", "RESULTS_PATH", "BenchRun", "Figure", "Sizes", "run_all",
           "table"]
