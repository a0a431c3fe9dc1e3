"""Concurrency: Claude-selector sessions against a loopback API with a fixed latency.

A unit of `evaluate` is a whole session whose turns run in order, so the benchmark
runs N single-turn sessions at `RunConfig.concurrency` = 1, 4, 16, 64. With every
answer taking `latency` seconds, the ideal wall time is ceil(N / c) * latency;
efficiency is ideal / measured. The model door caps requests in flight
(`MEMEVAL_MAX_CONCURRENCY`, default 8): the main figures size it to the run's
concurrency, and one extra figure shows what the default cap does at 16.

Only the runner is timed: the summary and report at the end (a fixed cost measured
by the overhead benchmark) are left out by passing a no-op summarizer.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from bench._core import Context, Figure, generated_suite, ratio
from bench._fake import environment, fake_api
from memeval.evaluate import LLMOptions, RunConfig, evaluate
from memeval.llm.client import DEFAULT_MAX_CONCURRENCY

TARGET_EFFICIENCY_AT_16 = 0.8


def no_summary(_run_dir: Path, _extra: Any) -> dict[str, Any]:
    return {}


def timed_run(suite: Path, run_dir: Path, concurrency: int) -> float:
    config = RunConfig(scenarios=(str(suite),), selectors=("claude",), judges=("gold",),
                       concurrency=concurrency, llm=LLMOptions(cache=False))
    started = time.perf_counter()
    evaluate(config, run_dir, progress=False, summarize=no_summary)
    return time.perf_counter() - started


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes
    n, latency = sizes.concurrency_turns, sizes.latency_s
    suite = generated_suite(ctx.workdir / "suite", sessions=n, files=20, turns=1, seed=200)
    figures: list[Figure] = []
    with fake_api(latency=latency) as server:
        runs = [(c, str(c)) for c in sizes.concurrency_levels]
        if 16 in sizes.concurrency_levels and DEFAULT_MAX_CONCURRENCY < 16:
            runs.append((16, "default-door"))
        for level, label in runs:
            door = str(DEFAULT_MAX_CONCURRENCY) if label == "default-door" else str(level)
            before = len(server.message_requests())
            ctx.log(f"concurrency: {n} sessions at {level} (door {door})")
            with environment({"MEMEVAL_MAX_CONCURRENCY": door}):
                elapsed = timed_run(suite, ctx.workdir / f"run-{label}", level)
            calls = len(server.message_requests()) - before
            ideal = math.ceil(n / level) * latency
            name = (f"concurrency.{level}.efficiency" if label != "default-door"
                    else f"concurrency.{level}.efficiency_default_door")
            target = TARGET_EFFICIENCY_AT_16 if (level, label) == (16, "16") else None
            note = f"{elapsed:.2f} s for {n} sessions, ideal {ideal:.2f} s, {calls} calls"
            if label == "default-door":
                note += f"; door capped at {DEFAULT_MAX_CONCURRENCY} in flight"
            figures.append(Figure(name, ratio(ideal, elapsed), "", target, ">=", note))
    return figures
