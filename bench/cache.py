"""Cache: rerunning the same run must make no model call and take a sliver of the time.

The first run of a Claude-selector suite fills memeval's response cache (the
loopback API answers after `latency`); the rerun writes a fresh run folder with
the same cache, so every answer comes from it. A third figure resumes the first run
folder itself, where every unit is already on disk. Summaries are left out of all
three timings (see the concurrency benchmark), so the ratio is about model calls.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench._core import Context, Figure, generated_suite, ratio
from bench._fake import fake_api_process, model_calls
from bench.concurrency import no_summary
from memeval.run.config import LLMOptions, RunConfig
from memeval.run.evaluate import evaluate

TARGET_CALLS = 0
TARGET_TIME_RATIO = 0.05


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes
    suite = generated_suite(ctx.workdir / "suite", sessions=sizes.cache_sessions, files=20,
                            turns=sizes.cache_turns, seed=300)
    config = RunConfig(scenarios=(str(suite),), selectors=("claude",), judges=("gold",),
                       concurrency=4, llm=LLMOptions(cache=str(ctx.workdir / "llm.sqlite")))

    def timed(run_dir: Path) -> tuple[float, int]:
        started = time.perf_counter()
        evaluate(config, run_dir, progress=False, finish=no_summary)
        return time.perf_counter() - started, model_calls()

    with fake_api_process(sizes.latency_s):
        ctx.log("cache: first run")
        first, first_calls = timed(ctx.workdir / "first")
        ctx.log("cache: rerun into a new folder")
        again, again_calls = timed(ctx.workdir / "again")
        ctx.log("cache: resume the first folder")
        resumed, resumed_calls = timed(ctx.workdir / "first")
    return [
        Figure("cache.rerun.model_calls", again_calls, "", TARGET_CALLS, "==",
               note=f"first run made {first_calls}"),
        Figure("cache.rerun.time_vs_first", ratio(again, first), "x", TARGET_TIME_RATIO,
               note=f"{again:.2f} s vs {first:.2f} s; new run folder, warm response cache"),
        Figure("cache.resume.model_calls", resumed_calls, "", TARGET_CALLS, "=="),
        Figure("cache.resume.time_vs_first", ratio(resumed, first), "x",
               note="same run folder: every unit already written"),
    ]
