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
harness (imports, log setup, summary of an empty run) cancels out. Each round runs
each side in a fresh interpreter, memeval's then inspect_ai's, both lengths each,
and the best of each length over the rounds is kept. Taking turns this way lands a
change in the machine's speed (10-15 % within minutes here) on both sides rather
than on whichever ran second, and one round per process means no cache a run fills
(an index's links, once) carries over into the next round, as it does not for a
user's run. memeval's turn
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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import memeval.run.play
from bench._core import Context, Figure, Sizes, generated_suite, in_subprocess, ratio
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import load_many
from memeval.selectors.claude import build_user_message

TARGET_VS_INSPECT = 0.25  # issue 34: at most a quarter of inspect_ai's per-sample overhead
TURNS_PER_SESSION = 10  # a session of a few turns, like the bundled fixtures


def _suite(ctx: Context, turns: int) -> Path:
    sessions = max(1, turns // TURNS_PER_SESSION)
    per = min(turns, TURNS_PER_SESSION)
    return generated_suite(ctx.workdir / f"suite-{turns}", sessions=sessions,
                           files=ctx.sizes.overhead_files, turns=per, seed=100)


SYSTEM_UNDER_TEST = ("startup_contexts", "play_turn")  # phase 1, phase 2: memeval.run.play


@contextmanager
def system_clock() -> Iterator[dict[str, list[float]]]:
    """Seconds spent in each phase of the system under test, while the block runs."""
    spent: dict[str, list[float]] = {name: [] for name in SYSTEM_UNDER_TEST}
    originals = {name: getattr(memeval.run.play, name) for name in SYSTEM_UNDER_TEST}

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
        setattr(memeval.run.play, name, clocked(name))
    try:
        yield spent
    finally:
        for name, original in originals.items():
            setattr(memeval.run.play, name, original)


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
                 tag: str) -> dict[str, dict[str, float]]:
    """One round of memeval's runs, both lengths, in a fresh process (see `run`): per
    length the wall, startup, in-session, harness and harness-with-startup seconds,
    and the rows. `tag` names this round's run folders."""
    ctx = _child_context(workdir, small, large, files)
    suites = {n: _suite(ctx, n) for n in ctx.sizes.overhead_turns}
    time_memeval(ctx, _suite(ctx, 1), f"warm-up-{tag}")  # imports and code paths only
    out = {}
    for n, suite in suites.items():
        wall, startup, in_session, rows = time_memeval(ctx, suite, f"{n}-{tag}")
        out[str(n)] = {"wall": wall, "startup": startup, "session": in_session,
                       "harness": wall - startup - in_session,
                       "with_startup": wall - in_session, "rows": float(rows)}
    return out


def inspect_side(workdir: str, small: str, large: str, files: str,
                 tag: str) -> dict[str, dict[str, float]]:
    """One round of inspect_ai's runs of the same turns as samples, in a fresh process:
    per length the wall seconds and the samples."""
    ctx = _child_context(workdir, small, large, files)
    samples = {n: side_queries(_suite(ctx, n)) for n in ctx.sizes.overhead_turns}
    time_inspect(ctx, side_queries(_suite(ctx, 1))[:1], f"warm-up-{tag}")
    return {str(n): {"wall": time_inspect(ctx, items, f"{n}-{tag}"),
                     "samples": float(len(items))} for n, items in samples.items()}


def _child_context(workdir: str, small: str, large: str, files: str) -> Context:
    sizes = Sizes(overhead_turns=(int(small), int(large)), overhead_files=int(files))
    return Context(sizes=sizes, workdir=Path(workdir))


def best_of(rounds: list[dict[str, dict[str, float]]]) -> dict[int, dict[str, float]]:
    """Per length, each figure's least value over the rounds (noise only adds time;
    counts are the same in every round)."""
    return {int(n): {key: min(r[n][key] for r in rounds) for key in rounds[0][n]}
            for n in rounds[0]}


def run(ctx: Context) -> list[Figure]:
    small, large = ctx.sizes.overhead_turns
    rounds = max(1, ctx.sizes.overhead_rounds)
    against = ctx.sizes.against_inspect and _has_inspect()
    mine: list[dict[str, dict[str, float]]] = []
    theirs_rounds: list[dict[str, dict[str, float]]] = []
    # Each side in a fresh interpreter per round: a process's past (the benchmarks
    # before this one, the other side's threads and heap, its own caches) slowed or
    # sped whichever ran later.
    for round_ in range(rounds):
        args = (ctx.workdir, small, large, ctx.sizes.overhead_files, f"r{round_}")
        ctx.log(f"overhead: round {round_ + 1} of {rounds}, memeval, {small} and {large} "
                "turns, in a subprocess")
        mine.append(in_subprocess("bench.overhead.memeval_side", *args))
        if against:
            ctx.log(f"overhead: round {round_ + 1} of {rounds}, inspect_ai, the same turns "
                    "as samples, in a subprocess")
            theirs_rounds.append(in_subprocess("bench.overhead.inspect_side", *args))
    ours = best_of(mine)
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
    if not against:
        return [*figures, Figure("overhead.vs_inspect", float("nan"), "x",
                                 note="inspect_ai not installed: pip install 'memeval[bench]'")]
    theirs = best_of(theirs_rounds)
    inspect_per = slope(theirs, "wall", theirs[large]["samples"] - theirs[small]["samples"])
    return [*figures,
            Figure("overhead.inspect.ms_per_sample", inspect_per * 1e3, "ms",
                   note="mockllm + generate() + match() + eval log, 1 sample at a time"),
            Figure("overhead.vs_inspect", ratio(harness, inspect_per), "x", TARGET_VS_INSPECT,
                   note=f"memeval harness per turn / inspect_ai per sample, best of {rounds} "
                        "rounds taking turns"),
            Figure("overhead.vs_inspect.with_startup", ratio(with_startup, inspect_per), "x",
                   note="with the startup context counted as harness (the split until "
                        "2026-12-04)"),
            Figure("overhead.vs_inspect.whole_turn", ratio(per_turn, inspect_per), "x",
                   note="with the Session's own work counted as overhead too")]


def _has_inspect() -> bool:
    """Whether inspect_ai is installed, without importing it (see `run`)."""
    return importlib.util.find_spec("inspect_ai") is not None
