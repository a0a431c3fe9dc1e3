"""Results at scale: a LoCoMo-sized run's files stay small and its peak memory flat.

A generated run the size of the LoCoMo import (10 scenarios × 200 turns, 200 memory
files each) under the six offline selectors and gold history, evaluated in a fresh
subprocess (peak RSS is a per-process high-water mark; `VmHWM`, see bench.memory).
It reports the wall time, the peak when the runner has written its last row and
after summary and report, and the sizes of `results.jsonl` + `payloads.jsonl`,
`summary.json` and `index.html`. Targets are issue 18's: results with their payload
store ≤ 100 MB, peak ≤ 1 GB, report ≤ 10 MB.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench._core import Context, Figure, generated_suite, in_subprocess

SELECTORS = ("bm25", "recency", "random", "none", "all", "oracle")
TARGET_RESULTS_MB = 100.0
TARGET_PEAK_MB = 1024.0
TARGET_REPORT_MB = 10.0
MB = 1024 * 1024


def child(suite: str, run_dir: str) -> dict[str, Any]:
    """Run the evaluation in this process and report its peaks (called in a subprocess)."""
    from bench.memory import peak_rss_mb
    from memeval.report import RunPage
    from memeval.run.config import RunConfig
    from memeval.run.evaluate import evaluate, finish_run

    peaks: dict[str, Any] = {"start": peak_rss_mb()}
    started = time.perf_counter()

    def summarize(path: Path, extra: Any, **kwargs: Any) -> dict[str, Any]:
        peaks["runner"] = peak_rss_mb()
        peaks["runner_s"] = time.perf_counter() - started
        return finish_run(path, extra, **kwargs)

    config = RunConfig(scenarios=(suite,), selectors=SELECTORS, judges=("gold",),
                       concurrency=4, history="gold")
    outcome = evaluate(config, Path(run_dir), progress=False, page=RunPage(),
                       finish=summarize)
    peaks["total"] = peak_rss_mb()
    peaks["total_s"] = time.perf_counter() - started
    peaks["rows"] = outcome.rows
    return peaks


def run(ctx: Context) -> list[Figure]:
    scenarios, turns, files = ctx.sizes.results_shape
    ctx.log(f"results: generating {scenarios} scenarios × {turns} turns × {files} files")
    suite = generated_suite(ctx.workdir / "suite", sessions=scenarios, files=files,
                            turns=turns, seed=700)
    run_dir = ctx.workdir / "run"
    ctx.log(f"results: {len(SELECTORS)} selectors in a subprocess")
    peaks = in_subprocess("bench.results.child", suite, run_dir)

    def size(name: str) -> float:
        path = run_dir / name
        return path.stat().st_size / MB if path.exists() else 0.0

    rows = int(peaks["rows"])
    results_mb = size("results.jsonl") + size("payloads.jsonl")
    shape = f"{scenarios} × {turns} turns × {files} files, {len(SELECTORS)} selectors"
    return [
        Figure("results.rows", rows, "rows", note=shape),
        Figure("results.wall_s", peaks["total_s"], "s",
               note=f"runner {peaks['runner_s']:.0f} s, then summary and report"),
        Figure("results.peak_mb.runner", peaks["runner"], "MB"),
        Figure("results.peak_mb", peaks["total"], "MB", TARGET_PEAK_MB,
               note="whole run: evaluation, summary and report"),
        Figure("results.files_mb", results_mb, "MB", TARGET_RESULTS_MB,
               note=f"results.jsonl {size('results.jsonl'):.1f} MB + payloads.jsonl "
                    f"{size('payloads.jsonl'):.1f} MB"),
        Figure("results.bytes_per_row", results_mb * MB / max(rows, 1), "B"),
        Figure("results.summary_mb", size("summary.json"), "MB"),
        Figure("results.report_mb", size("index.html"), "MB", TARGET_REPORT_MB),
    ]
