"""Concurrency: Claude-selector turns against a loopback API with a fixed latency.

Under gold history each turn of a selector without memory is a unit of its own, so
at `RunConfig.concurrency` = c a run of N turns (spread over four scenarios) keeps c
units in flight. With every answer taking `latency` seconds, the ideal wall time is
ceil(N / c) * latency. The target figure is the steady state: runs of two lengths
(`waves` and three times as many waves of c turns), efficiency = ideal difference /
measured difference, so the fixed start-up of a run (imports, loading scenarios,
the HTTP client's TLS setup) cancels, as in the overhead benchmark; what remains
counts the runner's own work per turn (reference walk, scans, judging, rows)
wherever it is not hidden behind an answer being awaited. `.whole_run` is the
longer run's ideal / measured, start-up included. The model door caps requests in
flight (`MEMEVAL_MAX_CONCURRENCY`, default 8): the main figures size it to the
run's concurrency, and one extra figure shows what the default cap does at 16.

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

from bench._core import Context, Figure, generated_suite, ratio
from bench._fake import environment, fake_api_process, model_calls, no_summary
from memeval.llm import DoorConfig, LLMClient
from memeval.llm.config import DEFAULT_MAX_CONCURRENCY
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.run.config import LLMOptions, RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import load_many
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import ClaudeSelector

TARGETS = {16: 0.9, 64: 0.8}  # efficiency at these many units in flight
SCENARIOS = 4


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
        client = LLMClient(url, DoorConfig(max_concurrency=concurrency),
                           api_key="offline-bench")
        selector = ClaudeSelector(client=client)
        await asyncio.gather(*(selector.aselect(r) for r in requests))

    # A thread of its own: the caller may already run an event loop (a sync Playwright
    # session in the same test process does), and asyncio.run refuses to nest.
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.perf_counter()
        pool.submit(asyncio.run, main()).result()
        return time.perf_counter() - started


def timed_turns(ctx: Context, level: int, waves: int, label: str) -> tuple[float, int]:
    """(seconds, model calls) of a run of `waves` × `level` turns at `level`."""
    n = waves * level
    sessions = min(SCENARIOS, n)
    suite = generated_suite(ctx.workdir / f"suite-{level}x{waves}", files=20, seed=200,
                            sessions=sessions, turns=math.ceil(n / sessions))
    elapsed = timed_run(suite, ctx.workdir / f"run-{label}x{waves}", level)
    return elapsed, model_calls()


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes
    latency, short = sizes.latency_s, sizes.concurrency_waves
    figures: list[Figure] = []
    with fake_api_process(latency) as url:
        runs = [(c, str(c)) for c in sizes.concurrency_levels]
        if 16 in sizes.concurrency_levels and DEFAULT_MAX_CONCURRENCY < 16:
            runs.append((16, "default-door"))
        for level, label in runs:
            door = str(DEFAULT_MAX_CONCURRENCY) if label == "default-door" else str(level)
            ctx.log(f"concurrency: {short} and {3 * short} waves of {level} turns "
                    f"(door {door})")
            with environment({"MEMEVAL_MAX_CONCURRENCY": door}):
                (t1, calls1), (t2, calls2) = (timed_turns(ctx, level, w, label)
                                              for w in (short, 3 * short))
            ideal1, ideal2 = (math.ceil(c / level) * latency for c in (calls1, calls2))
            name = (f"concurrency.{level}.efficiency" if label != "default-door"
                    else f"concurrency.{level}.efficiency_default_door")
            target = TARGETS.get(level) if label == str(level) else None
            note = (f"{calls2 - calls1} more turns took {t2 - t1:.2f} s more, ideal "
                    f"{ideal2 - ideal1:.2f} s")
            if label == "default-door":
                note += f"; door capped at {DEFAULT_MAX_CONCURRENCY} in flight"
            figures.append(Figure(name, ratio(ideal2 - ideal1, t2 - t1), "", target, ">=",
                                  note))
            if label == str(level):
                figures.append(Figure(f"{name}.whole_run", ratio(ideal2, t2), "",
                                      note=f"{calls2} turns in {t2:.2f} s, ideal "
                                           f"{ideal2:.2f} s, start-up included"))
        level = max(sizes.concurrency_levels)
        n = 3 * short * level
        suite = generated_suite(ctx.workdir / "suite-door", sessions=n, files=20, turns=1,
                                seed=200)
        ctx.log(f"concurrency: {n} side queries through aselect at {level}")
        elapsed = door_only(suite, url, level)
        ideal = math.ceil(n / level) * latency
        figures.append(Figure(f"concurrency.door_only.{level}.efficiency", ratio(ideal, elapsed),
                              "", note=f"ClaudeSelector.aselect x{n}, no sessions: "
                                       f"{elapsed:.2f} s, ideal {ideal:.2f} s"))
    return figures
