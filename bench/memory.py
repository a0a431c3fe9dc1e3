"""Memory: a long run's peak RSS grows only by the compact per-turn tables its
summary and report keep, never by its rows.

Rows go to `results.jsonl` a unit at a time and are not kept; what is kept of each
is what `summary.json` and the page need of it (its scoring inputs and its turn
view, a few KB), gathered as the row is written so the run never reads its rows
back (`memeval.run.evaluate.RowDigest`). Both runs evaluate the same scenarios (the
long one with `repeats`), so what is held for the input is the same and any growth
is the results'. Each length runs in a fresh subprocess (peak RSS is a per-process
high-water mark) and reports two peaks: when the runner has written the last row,
and after the summary and report. The target is on the second, the run's peak as a
user meets it: at most `TARGET_KB_PER_TURN` a turn, where a row held whole would be
tens of KB (a hundred and more with a few hundred candidates).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path
from typing import Any

from bench._core import Context, Figure, generated_suite, in_subprocess

TARGET_KB_PER_TURN = 10.0  # the compact tables (6-7 KB a turn here), not the rows
TURNS_PER_SESSION = 10
FILES = 10


def peak_rss_mb() -> float:
    """This process's peak resident set size so far.

    Linux's `ru_maxrss` survives `exec`, so a child started by a big parent would
    report the parent's peak; the kernel's `VmHWM` belongs to the new image alone.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def child(suite: str, run_dir: str, repeats: int | str) -> dict[str, Any]:
    """Run the evaluation in this process and report its peaks (called in a subprocess)."""
    from memeval.report import RunPage
    from memeval.run.config import RunConfig
    from memeval.run.evaluate import evaluate, finish_run

    peaks: dict[str, Any] = {"start": peak_rss_mb()}

    def summarize(path: Path, extra: Any, **kwargs: Any) -> dict[str, Any]:
        peaks["runner"] = peak_rss_mb()
        return finish_run(path, extra, **kwargs)

    config = RunConfig(scenarios=(suite,), selectors=("oracle",), judges=("gold",),
                       concurrency=2, repeats=int(repeats))
    outcome = evaluate(config, Path(run_dir), progress=False, page=RunPage(),
                       finish=summarize)
    peaks["total"] = peak_rss_mb()
    peaks["rows"] = outcome.rows
    return peaks


def measure(ctx: Context, suite: Path, repeats: int) -> dict[str, Any]:
    return dict(in_subprocess("bench.memory.child", suite, ctx.workdir / f"run-x{repeats}",
                              repeats))


def run(ctx: Context) -> list[Figure]:
    small, large = ctx.sizes.memory_turns
    suite = generated_suite(ctx.workdir / "suite", sessions=max(1, small // TURNS_PER_SESSION),
                            files=FILES, turns=min(small, TURNS_PER_SESSION), seed=500)
    results = {}
    for turns in (small, large):
        ctx.log(f"memory: {turns}-turn run in a subprocess")
        results[turns] = measure(ctx, suite, max(1, turns // small))
    a, b = results[small], results[large]
    per_1000 = 1000 / (b["rows"] - a["rows"])
    runner = (b["runner"] - a["runner"]) * per_1000
    total = (b["total"] - a["total"]) * per_1000
    return [
        Figure(f"memory.runner.peak_mb.{large}", b["runner"], "MB",
               note=f"{small} turns: {a['runner']:.0f} MB; interpreter at start "
                    f"{a['start']:.0f} MB"),
        Figure("memory.runner.mb_per_1000_turns", runner, "MB",
               note="peak RSS growth while rows are written (and their digest gathered)"),
        Figure(f"memory.with_summary.peak_mb.{large}", b["total"], "MB",
               note=f"{small} turns: {a['total']:.0f} MB"),
        Figure("memory.with_summary.mb_per_1000_turns", total, "MB", TARGET_KB_PER_TURN,
               note="the run's peak growth, summary and report included (MB per 1 000 "
                    "turns = KB a turn)"),
    ]
