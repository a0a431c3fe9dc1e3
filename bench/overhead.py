"""Per-turn overhead of the harness, against inspect_ai running the same work.

memeval: `evaluate` with the `oracle` selector (in process, instant) and the gold
judge, results written to `results.jsonl` and summarized, one session at a time.
Each turn goes through a real Session: scan, manifest, selection, surfacing reads.

inspect_ai: a Task whose samples are the same side queries (the user message the
selector would get, the gold names as target), `generate()` on the `mockllm` model
and the `match()` scorer, with its eval log written, one sample at a time. Each
mock output carries its own usage: without it the mock model counts tokens with
tiktoken, which downloads its encodings and fails offline.

Per-turn cost is the slope between two run lengths, so the fixed start-up of each
harness (imports, log setup, summary of an empty run) cancels out.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from bench._core import Context, Figure, generated_suite, ratio
from memeval.evaluate import RunConfig, evaluate
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.scenarios import load_many
from memeval.selectors.claude import build_user_message

TARGET_VS_INSPECT = 0.1  # memeval's per-turn overhead at most a tenth of inspect_ai's
TURNS_PER_SESSION = 10  # a session of a few turns, like the bundled fixtures


def _suite(ctx: Context, turns: int) -> Path:
    sessions = max(1, turns // TURNS_PER_SESSION)
    per = min(turns, TURNS_PER_SESSION)
    return generated_suite(ctx.workdir / f"suite-{turns}", sessions=sessions,
                           files=ctx.sizes.overhead_files, turns=per, seed=100)


def time_memeval(ctx: Context, suite: Path, label: str) -> tuple[float, int]:
    config = RunConfig(scenarios=(str(suite),), selectors=("oracle",), judges=("gold",),
                       concurrency=1)
    started = time.perf_counter()
    outcome = evaluate(config, ctx.workdir / f"run-{label}", progress=False)
    return time.perf_counter() - started, outcome.rows


def side_queries(suite: Path) -> list[tuple[str, str]]:
    """(user message, gold answer) for every turn of the suite, as inspect samples."""
    out = []
    for scenario in load_many([suite]).scenarios:
        manifest = format_memory_manifest(scan_memory_files(scenario.memdirs["project"].source))
        for turn in scenario.turns:
            gold = json.dumps({"selected_memories": sorted(turn.labels.relevant)})
            out.append((build_user_message(turn.query, manifest), gold))
    return out


def time_inspect(ctx: Context, samples: list[tuple[str, str]], label: str) -> float:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    answers = {text: gold for text, gold in samples}

    def reply(messages: list[Any], *_args: Any) -> ModelOutput:
        output = ModelOutput.from_content(model="mockllm",
                                          content=answers.get(messages[-1].text, "{}"))
        # Usage given up front: the mock model would otherwise count tokens with
        # tiktoken, which downloads its encodings (no network here).
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return output

    task = Task(dataset=MemoryDataset([Sample(input=text, target=gold)
                                       for text, gold in samples]),
                solver=generate(), scorer=match())
    model = get_model("mockllm/model", custom_outputs=reply)
    logging.getLogger("inspect_ai").setLevel(logging.WARNING)
    started = time.perf_counter()
    logs = inspect_eval(task, model=model, log_dir=str(ctx.workdir / f"inspect-{label}"),
                        display="none", max_samples=1, max_connections=1)
    elapsed = time.perf_counter() - started
    if logs[0].status != "success":
        raise RuntimeError(f"inspect_ai run ended {logs[0].status}: {logs[0].error}")
    return elapsed


def run(ctx: Context) -> list[Figure]:
    small, large = ctx.sizes.overhead_turns
    suites = {n: _suite(ctx, n) for n in (small, large)}
    times, rows = {}, {}
    for n, suite in suites.items():
        ctx.log(f"overhead: memeval, {n} turns")
        times[n], rows[n] = time_memeval(ctx, suite, str(n))
    per_turn = ratio(times[large] - times[small], rows[large] - rows[small])
    figures = [
        Figure("overhead.memeval.ms_per_turn", per_turn * 1e3, "ms",
               note=f"slope {rows[small]}->{rows[large]} turns; Session + gold judge + "
                    "results.jsonl + summary"),
        Figure("overhead.memeval.turns_per_s", ratio(1.0, per_turn), "turn/s"),
    ]
    if not ctx.sizes.against_inspect:
        return figures
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        return [*figures, Figure("overhead.vs_inspect", float("nan"), "x",
                                 note="inspect_ai not installed: pip install 'memeval[bench]'")]
    inspect_times = {}
    counts = {}
    for n, suite in suites.items():
        samples = side_queries(suite)
        counts[n] = len(samples)
        ctx.log(f"overhead: inspect_ai, {len(samples)} samples")
        inspect_times[n] = time_inspect(ctx, samples, str(n))
    inspect_per = ratio(inspect_times[large] - inspect_times[small], counts[large] - counts[small])
    return [*figures,
            Figure("overhead.inspect.ms_per_sample", inspect_per * 1e3, "ms",
                   note="mockllm + generate() + match() + eval log, 1 sample at a time"),
            Figure("overhead.vs_inspect", ratio(per_turn, inspect_per), "x", TARGET_VS_INSPECT,
                   note="memeval per-turn / inspect_ai per-sample")]
