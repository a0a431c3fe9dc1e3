"""What every benchmark shares: the figure record, sizes, timing and the output.

Every figure is a ratio or a time taken side by side with its baseline in the same
process, so a slow or noisy machine moves both sides and the ratio holds.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

Comparison = Literal["<=", ">=", "=="]


@dataclass(frozen=True)
class Figure:
    """One measured value next to its target.

    Args:
        name: stable id, `<benchmark>.<what>` (e.g. `scan.10000.seconds`).
        value: the measurement.
        unit: how to read `value` (`ms`, `s`, `x`, `tokens`, `MB`...).
        target: the bound `value` must meet, or None for context-only figures.
        compare: how `value` is held against `target`.
        note: one line on what was measured or what bounds it.
    """

    name: str
    value: float
    unit: str
    target: float | None = None
    compare: Comparison = "<="
    note: str = ""

    @property
    def passed(self) -> bool | None:
        if self.target is None or math.isnan(self.value):
            return None if self.target is None else False
        if self.compare == "<=":
            return self.value <= self.target
        if self.compare == ">=":
            return self.value >= self.target
        return self.value == self.target

    def to_dict(self) -> dict[str, Any]:
        data = {**asdict(self), "passed": self.passed}
        if math.isnan(self.value):  # JSON has no NaN; a figure that could not be had is null
            data["value"] = None
        return data


@dataclass(frozen=True)
class Sizes:
    """How big each benchmark runs. `DEFAULT` is what the targets are stated for.

    Args:
        scan_files: memdir sizes for the scan benchmark.
        scan_repeats: timed scans per size (the best is kept: noise only adds time).
        overhead_turns: two turn counts; per-turn cost is the slope between them, so
            fixed start-up costs of either harness cancel.
        overhead_files: memory files in the overhead scenario's memdir.
        overhead_rounds: rounds of timed runs, each side in a fresh interpreter per
            round, the sides taking turns; the fastest of each length is kept (noise
            from elsewhere on the machine only adds).
        against_inspect: also time inspect_ai (when installed) for the overhead ratio.
        concurrency_levels: units in flight for the concurrency benchmark.
        concurrency_waves: the shorter run's turns per level, in multiples of the level
            (its ideal time is this many answer delays; the longer run has 3 times as
            many).
        latency_s: the loopback server's answer delay.
        cache_sessions / cache_turns: shape of the cache benchmark's run.
        cost_files / cost_queries: memdir size and queries of the cost benchmark.
        memory_turns: two run lengths for the memory benchmark.
        embed_texts: distinct descriptions the embed benchmark encodes.
        results_shape: scenarios × turns × files of the results benchmark's run (a
            LoCoMo-sized run by default: 10 × 200 turns, 200 memory files each).
    """

    scan_files: tuple[int, ...] = (200, 2_000, 10_000)
    scan_repeats: int = 5
    overhead_turns: tuple[int, int] = (100, 500)
    overhead_files: int = 20
    overhead_rounds: int = 3
    against_inspect: bool = True
    concurrency_levels: tuple[int, ...] = (1, 4, 16, 64)
    concurrency_waves: int = 2
    latency_s: float = 0.5
    cache_sessions: int = 16
    cache_turns: int = 4
    cost_files: int = 200
    cost_queries: int = 20
    memory_turns: tuple[int, int] = (1_000, 10_000)
    embed_texts: int = 2_000
    results_shape: tuple[int, int, int] = (10, 200, 200)


DEFAULT = Sizes(scan_repeats=5)
QUICK = Sizes(scan_files=(200, 1_000, 2_000), scan_repeats=3, overhead_turns=(50, 200),
              concurrency_levels=(1, 4, 16), concurrency_waves=2, latency_s=0.2,
              cache_sessions=8, cache_turns=2, memory_turns=(200, 1_000),
              results_shape=(4, 100, 200))
# The smoke test's sizes: every code path, no meaningful timings.
# inspect_ai is left out: its fixed start-up alone would be most of the test's time.
TINY = Sizes(scan_files=(5, 10), scan_repeats=1, overhead_turns=(2, 4), overhead_files=5,
             overhead_rounds=1,
             against_inspect=False,
             concurrency_levels=(1, 2), concurrency_waves=1, latency_s=0.01,
             cache_sessions=2, cache_turns=1, cost_files=10, cost_queries=3,
             memory_turns=(5, 10), embed_texts=20, results_shape=(1, 3, 10))


@dataclass(frozen=True)
class Context:
    """What a benchmark is handed: sizes, a scratch folder and a logger."""

    sizes: Sizes
    workdir: Path
    log: Callable[[str], None] = field(default=lambda _msg: None)


def best_time(fn: Callable[[], object], repeats: int, *,
              before: Callable[[], object] = lambda: None) -> float:
    """Fastest of `repeats` timed calls, in seconds; `before` runs untimed each time."""
    best = math.inf
    for _ in range(max(1, repeats)):
        before()
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def in_subprocess(function: str, *args: object) -> Any:
    """`bench.<module>.<name>(*args)` run in a fresh interpreter, its JSON result.

    For figures a process's past would skew: peak RSS is a per-process high-water
    mark, and timings carry the heap and threads of whatever ran before them.
    The arguments reach the function as strings.
    """
    module, name = function.rsplit(".", 1)
    code = (f"import json, sys; from {module} import {name}; "
            f"print(json.dumps({name}(*sys.argv[1:])))")
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{function} failed in its subprocess:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.nan


def environment() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count(), "at": datetime.now(UTC).isoformat(timespec="seconds")}


def _value(figure: Figure) -> str:
    v = figure.value
    if math.isnan(v):
        return "n/a"
    text = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return f"{text} {figure.unit}".strip()


def _target(figure: Figure) -> str:
    if figure.target is None:
        return ""
    t = figure.target
    shown = f"{t:g}"
    return f"{figure.compare} {shown} {figure.unit}".strip()


def _verdict(figure: Figure) -> str:
    return {True: "pass", False: "FAIL", None: ""}[figure.passed]


def table(figures: Iterable[Figure]) -> str:
    """A Markdown table: figure, value, target, pass/fail (pastes into docs as is)."""
    rows = [("figure", "value", "target", "result")]
    rows += [(f.name, _value(f), _target(f), _verdict(f)) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
             for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def write_results(path: Path, figures: Iterable[Figure], *, profile: str,
                  seconds: float, errors: dict[str, str], tmpdir: str) -> dict[str, Any]:
    """`bench/results.json`: every figure with its verdict, plus where it was measured."""
    figures = list(figures)
    data = {
        "profile": profile,
        "environment": {**environment(), "tmpdir": tmpdir},
        "seconds": round(seconds, 2),
        "figures": [f.to_dict() for f in figures],
        "failed": [f.name for f in figures if f.passed is False],
        "errors": errors,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
    return data


def generated_suite(folder: Path, *, sessions: int, files: int, turns: int,
                    seed: int = 0) -> Path:
    """`sessions` generated scenarios (seeds `seed`, `seed + 1`, ...) in one folder;
    returns the scenarios folder, which a RunConfig takes as it is."""
    from memeval.scenarios import generate

    for number in range(sessions):
        generate(seed + number, files, turns, folder, overwrite=True)
    return folder / "scenarios"
