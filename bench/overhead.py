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
harness (imports, log setup, summary of an empty run) cancels out. Each side runs in
its own fresh interpreter, 3 rounds of both lengths, the best of each kept. memeval's turn
is split in three: the system under test, which inspect_ai's task does not do, in its
two phases (each session's startup context, built once a session; and inside
`Session.turn`, the scan, manifest, selection and surfacing reads), and the rest, the
harness proper (materializing the memdir, judging, rows, results.jsonl, summary and
report). The target is about the harness proper. Until 2026-12-04 the startup
context counted as harness; `overhead.vs_inspect.with_startup` keeps that split.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import memeval.harness
from bench._core import Context, Figure, Sizes, generated_suite, in_subprocess, ratio
from memeval.evaluate import evaluate
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.run_config import RunConfig
from memeval.scenarios import load_many
from memeval.selectors.claude import build_user_message

TARGET_VS_INSPECT = 0.1  # memeval's per-turn overhead at most a tenth of inspect_ai's
TURNS_PER_SESSION = 10  # a session of a few turns, like the bundled fixtures


def _suite(ctx: Context, turns: int) -> Path:
    sessions = max(1, turns // TURNS_PER_SESSION)
    per = min(turns, TURNS_PER_SESSION)
    return generated_suite(ctx.workdir / f"suite-{turns}", sessions=sessions,
                           files=ctx.sizes.overhead_files, turns=per, seed=100)


SYSTEM_UNDER_TEST = ("startup_contexts", "play_turn")  # phase 1, phase 2: memeval.harness


@contextmanager
def system_clock() -> Iterator[dict[str, list[float]]]:
    """Seconds spent in each phase of the system under test, while the block runs."""
    spent: dict[str, list[float]] = {name: [] for name in SYSTEM_UNDER_TEST}
    originals = {name: getattr(memeval.harness, name) for name in SYSTEM_UNDER_TEST}

    def clocked(name: str) -> Any:
        original, record = originals[name], spent[name].append

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                record(time.perf_counter() - started)

        return timed

    for name in SYSTEM_UNDER_TEST:
        setattr(memeval.harness, name, clocked(name))
    try:
        yield spent
    finally:
        for name, original in originals.items():
            setattr(memeval.harness, name, original)


def time_memeval(ctx: Context, suite: Path, label: str) -> tuple[float, float, float, int]:
    """(wall seconds, seconds building startup contexts, seconds inside Session turns,
    rows) of one evaluate run."""
    config = RunConfig(scenarios=(str(suite),), selectors=("oracle",), judges=("gold",),
                       concurrency=1)
    with system_clock() as spent:
        started = time.perf_counter()
        outcome = evaluate(config, ctx.workdir / f"run-{label}", progress=False)
        elapsed = time.perf_counter() - started
    return elapsed, sum(spent["startup_contexts"]), sum(spent["play_turn"]), outcome.rows


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


def memeval_side(workdir: str, small: str, large: str, files: str,
                 rounds: str) -> dict[str, dict[str, float]]:
    """memeval's runs of both lengths, in a fresh process (see `run`): per length the
    best wall, startup, in-session, harness and harness-with-startup seconds of
    `rounds` runs, and the rows."""
    ctx = _child_context(workdir, small, large, files, rounds)
    suites = {n: _suite(ctx, n) for n in ctx.sizes.overhead_turns}
    time_memeval(ctx, _suite(ctx, 1), "warm-up")  # imports and caches the slope must not see
    best = {n: {"wall": math.inf, "startup": math.inf, "session": math.inf,
                "harness": math.inf, "with_startup": math.inf, "rows": 0.0} for n in suites}
    # Rounds take turns between the lengths, so a burst of load elsewhere on the
    # machine does not land on one of them.
    for round_ in range(ctx.sizes.overhead_rounds):
        for n, suite in suites.items():
            wall, startup, in_session, rows = time_memeval(ctx, suite, f"{n}-{round_}")
            figures = best[n]
            for key, value in (("wall", wall), ("startup", startup), ("session", in_session),
                               ("harness", wall - startup - in_session),
                               ("with_startup", wall - in_session)):
                figures[key] = min(figures[key], value)
            figures["rows"] = rows
    return {str(n): figures for n, figures in best.items()}


def inspect_side(workdir: str, small: str, large: str, files: str,
                 rounds: str) -> dict[str, dict[str, float]]:
    """inspect_ai's runs of the same turns as samples, in a fresh process: per length
    the best wall seconds of `rounds` runs, and the samples."""
    ctx = _child_context(workdir, small, large, files, rounds)
    samples = {n: side_queries(_suite(ctx, n)) for n in ctx.sizes.overhead_turns}
    time_inspect(ctx, side_queries(_suite(ctx, 1))[:1], "warm-up")
    best = {n: {"wall": math.inf, "samples": float(len(items))} for n, items in samples.items()}
    for round_ in range(ctx.sizes.overhead_rounds):
        for n, items in samples.items():
            best[n]["wall"] = min(best[n]["wall"], time_inspect(ctx, items, f"{n}-{round_}"))
    return {str(n): figures for n, figures in best.items()}


def _child_context(workdir: str, small: str, large: str, files: str, rounds: str) -> Context:
    sizes = Sizes(overhead_turns=(int(small), int(large)), overhead_files=int(files),
                  overhead_rounds=max(1, int(rounds)))
    return Context(sizes=sizes, workdir=Path(workdir))


def run(ctx: Context) -> list[Figure]:
    small, large = ctx.sizes.overhead_turns
    rounds = max(1, ctx.sizes.overhead_rounds)
    args = (ctx.workdir, small, large, ctx.sizes.overhead_files, rounds)
    # Each side in a fresh interpreter: a process's past (the benchmarks before this
    # one, or the other side's threads and heap) slowed whichever side ran second.
    ctx.log(f"overhead: memeval, {small} and {large} turns, best of {rounds}, in a subprocess")
    ours = {int(n): v for n, v in in_subprocess("bench.overhead.memeval_side", *args).items()}
    turns = ours[large]["rows"] - ours[small]["rows"]

    def slope(side: dict[int, dict[str, float]], key: str, count: float) -> float:
        return ratio(side[large][key] - side[small][key], count)

    per_turn, harness = slope(ours, "wall", turns), slope(ours, "harness", turns)
    with_startup = slope(ours, "with_startup", turns)
    figures = [
        Figure("overhead.memeval.ms_per_turn", per_turn * 1e3, "ms",
               note=f"slope {ours[small]['rows']:.0f}->{ours[large]['rows']:.0f} turns, "
                    "everything a run does"),
        Figure("overhead.memeval.turns_per_s", ratio(1.0, per_turn), "turn/s"),
        Figure("overhead.memeval.startup_ms_per_turn", slope(ours, "startup", turns) * 1e3,
               "ms", note="phase 1: each session's startup context, once a session"),
        Figure("overhead.memeval.session_ms_per_turn", slope(ours, "session", turns) * 1e3,
               "ms", note="phase 2, inside Session.turn: scan, manifest, selection, surfacing"),
        Figure("overhead.memeval.harness_ms_per_turn", harness * 1e3, "ms",
               note="the rest: materialize, judge, rows, results, summary, report"),
    ]
    if not ctx.sizes.against_inspect:
        return figures
    if not _has_inspect():
        return [*figures, Figure("overhead.vs_inspect", float("nan"), "x",
                                 note="inspect_ai not installed: pip install 'memeval[bench]'")]
    ctx.log("overhead: inspect_ai, the same turns as samples, in a subprocess")
    theirs = {int(n): v for n, v in in_subprocess("bench.overhead.inspect_side", *args).items()}
    inspect_per = slope(theirs, "wall", theirs[large]["samples"] - theirs[small]["samples"])
    return [*figures,
            Figure("overhead.inspect.ms_per_sample", inspect_per * 1e3, "ms",
                   note="mockllm + generate() + match() + eval log, 1 sample at a time"),
            Figure("overhead.vs_inspect", ratio(harness, inspect_per), "x", TARGET_VS_INSPECT,
                   note=f"memeval harness per turn / inspect_ai per sample, best of {rounds}"),
            Figure("overhead.vs_inspect.with_startup", ratio(with_startup, inspect_per), "x",
                   note="with the startup context counted as harness (the split until "
                        "2026-12-04)"),
            Figure("overhead.vs_inspect.whole_turn", ratio(per_turn, inspect_per), "x",
                   note="with the Session's own work counted as overhead too")]


def _has_inspect() -> bool:
    """Whether inspect_ai is installed, without importing it (see `run`)."""
    return importlib.util.find_spec("inspect_ai") is not None
