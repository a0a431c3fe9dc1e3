"""Concurrency: Claude-selector sessions against a loopback API with a fixed latency.

A unit of `evaluate` is a whole session whose turns run in order, so the benchmark
runs N single-turn sessions at `RunConfig.concurrency` = 1, 4, 16, 64. With every
answer taking `latency` seconds, the ideal wall time is ceil(N / c) * latency;
efficiency is ideal / measured. The model door caps requests in flight
(`MEMEVAL_MAX_CONCURRENCY`, default 8): the main figures size it to the run's
concurrency, and one extra figure shows what the default cap does at 16.

The loopback API runs in its own process, as a remote API would, so its work does
not compete for this interpreter. Only the runner is timed: the summary and report
at the end (a fixed cost measured by the overhead benchmark) are left out by
passing a no-op summarizer.
"""

from __future__ import annotations

import asyncio
import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench._core import Context, Figure, generated_suite, ratio
from bench._fake import environment, fake_api_process, model_calls
from memeval.evaluate import evaluate
from memeval.llm import LLMClient
from memeval.llm.client import DEFAULT_MAX_CONCURRENCY
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.run_config import LLMOptions, RunConfig
from memeval.scenarios import load_many
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import ClaudeSelector

TARGET_EFFICIENCY_AT_16 = 0.8


def no_summary(_run_dir: Path, _extra: Any) -> dict[str, Any]:
    return {}


def timed_run(suite: Path, run_dir: Path, concurrency: int) -> float:
    config = RunConfig(scenarios=(str(suite),), selectors=("claude",), judges=("gold",),
                       concurrency=concurrency, llm=LLMOptions(cache=False))
    started = time.perf_counter()
    evaluate(config, run_dir, progress=False, finish=no_summary)
    return time.perf_counter() - started


def door_only(suite: Path, url: str, concurrency: int) -> float:
    """The same side queries straight through `ClaudeSelector.aselect`, no sessions:
    what the model door alone does with `concurrency` requests in flight."""
    requests = []
    for scenario in load_many([suite]).scenarios:
        memdir = scenario.memdirs["project"].source
        headers = tuple(scan_memory_files(memdir))
        requests.append(SelectionRequest(query=scenario.turns[0].query,
                                         manifest=format_memory_manifest(headers),
                                         candidates=headers, memory_dir=Path(memdir)))

    async def main() -> None:
        client = LLMClient(api_key="offline-bench", base_url=url,
                           max_concurrency=concurrency)
        selector = ClaudeSelector(client=client)
        await asyncio.gather(*(selector.aselect(r) for r in requests))

    # A thread of its own: the caller may already run an event loop (a sync Playwright
    # session in the same test process does), and asyncio.run refuses to nest.
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.perf_counter()
        pool.submit(asyncio.run, main()).result()
        return time.perf_counter() - started


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes
    n, latency = sizes.concurrency_turns, sizes.latency_s
    suite = generated_suite(ctx.workdir / "suite", sessions=n, files=20, turns=1, seed=200)
    figures: list[Figure] = []
    with fake_api_process(latency) as url:
        runs = [(c, str(c)) for c in sizes.concurrency_levels]
        if 16 in sizes.concurrency_levels and DEFAULT_MAX_CONCURRENCY < 16:
            runs.append((16, "default-door"))
        for level, label in runs:
            door = str(DEFAULT_MAX_CONCURRENCY) if label == "default-door" else str(level)
            ctx.log(f"concurrency: {n} sessions at {level} (door {door})")
            with environment({"MEMEVAL_MAX_CONCURRENCY": door}):
                elapsed = timed_run(suite, ctx.workdir / f"run-{label}", level)
                calls = model_calls()
            ideal = math.ceil(n / level) * latency
            name = (f"concurrency.{level}.efficiency" if label != "default-door"
                    else f"concurrency.{level}.efficiency_default_door")
            target = TARGET_EFFICIENCY_AT_16 if (level, label) == (16, "16") else None
            note = f"{elapsed:.2f} s for {n} sessions, ideal {ideal:.2f} s, {calls} calls"
            if label == "default-door":
                note += f"; door capped at {DEFAULT_MAX_CONCURRENCY} in flight"
            figures.append(Figure(name, ratio(ideal, elapsed), "", target, ">=", note))
        level = max(sizes.concurrency_levels)
        ctx.log(f"concurrency: {n} side queries through aselect at {level}")
        elapsed = door_only(suite, url, level)
        ideal = math.ceil(n / level) * latency
        figures.append(Figure(f"concurrency.door_only.{level}.efficiency", ratio(ideal, elapsed),
                              "", note=f"ClaudeSelector.aselect x{n}, no sessions: "
                                       f"{elapsed:.2f} s, ideal {ideal:.2f} s"))
    return figures
