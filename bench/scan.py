"""Scan + manifest on generated memdirs, next to a naive version and the I/O floor.

`ours` is what a Session runs each turn: `scan_memory_files` then
`format_memory_manifest`. It is timed *cold* (the frontmatter parse cache emptied
first, as on a session's first turn) and *warm* (a rescan of the same files, as on
every later turn). `simple` is the shortest correct-looking program: read whole
files, parse them with python-frontmatter, sort, print. `floor` is what any scan
must at least do: list the folder tree with `os.scandir`, stat each file and read
its first 30 lines, with no parsing at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import frontmatter

from bench._core import Context, Figure, best_time, ratio
from memeval.memdir import FRONTMATTER_MAX_LINES, format_memory_manifest, scan_memory_files
from memeval.memdir.frontmatter import _load_mapping
from memeval.scenarios import generate

# Targets of issue 11, by memdir size (milliseconds for the whole scan + manifest).
TARGET_MS = {200: 20.0, 10_000: 1_500.0}
FLOOR_TARGET = 2.0  # ours within 2x of the floor
SEED = 11


def ours(memdir: Path) -> str:
    return format_memory_manifest(scan_memory_files(memdir))


def simple(memdir: Path) -> str:
    """Read whole files, parse, sort, keep 200, print: the few-line version."""
    rows = []
    for path in memdir.rglob("*.md"):
        if path.name == "MEMORY.md":
            continue
        post = frontmatter.load(path)
        rows.append((path.stat().st_mtime, path.relative_to(memdir).as_posix(),
                     post.get("type"), post.get("description")))
    rows.sort(key=lambda r: -r[0])
    return "\n".join(
        f"- {f'[{t}] ' if t else ''}{name} "
        f"({datetime.fromtimestamp(m, UTC).isoformat(timespec='milliseconds')})"
        f"{f': {d}' if d else ''}"
        for m, name, t, d in rows[:200])


def floor(memdir: Path) -> int:
    """List, stat and read 30 lines of every candidate; nothing else."""
    read = 0
    stack = [os.fspath(memdir)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.name.endswith(".md") and entry.name != "MEMORY.md":
                    entry.stat()
                    with open(entry.path, encoding="utf-8", errors="replace") as fh:
                        for _ in range(FRONTMATTER_MAX_LINES):
                            if not fh.readline():
                                break
                    read += 1
    return read


def make_memdir(workdir: Path, files: int) -> Path:
    out = workdir / f"scan-{files}"
    scenario = generate(SEED, files, 1, out, overwrite=True)
    return out / "memdirs" / scenario.stem


def interleaved(sides: dict[str, Callable[[], object]], repeats: int,
                before: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Best time of each side, taking turns within every round, so a burst of load
    from elsewhere on the machine hits all sides alike rather than one phase."""
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(max(1, repeats)):
        for name, fn in sides.items():
            best[name] = min(best[name], best_time(fn, 1, before=before.get(name, _noop)))
    return best


def _noop() -> None:
    return None


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes.scan_files
    repeats = ctx.sizes.scan_repeats
    figures: list[Figure] = []
    per_file: dict[int, float] = {}
    for files in sizes:
        ctx.log(f"scan: generating a memdir of {files} files")
        memdir = make_memdir(ctx.workdir, files)
        floor(memdir)  # warm the page cache once, so every side reads from memory
        times = interleaved(
            {"floor": lambda m=memdir: floor(m), "simple": lambda m=memdir: simple(m),
             "cold": lambda m=memdir: ours(m), "warm": lambda m=memdir: ours(m)},
            repeats, before={"cold": _load_mapping.cache_clear})
        t_floor, t_simple, t_cold, t_warm = (times[k] for k in ("floor", "simple", "cold",
                                                                "warm"))
        per_file[files] = t_cold / files
        figures += [
            Figure(f"scan.{files}.cold", t_cold * 1e3, "ms", TARGET_MS.get(files),
                   note="first scan + manifest (parse cache empty)"),
            Figure(f"scan.{files}.warm", t_warm * 1e3, "ms",
                   note="rescan, frontmatter parses cached by text"),
            Figure(f"scan.{files}.us_per_file", t_cold / files * 1e6, "us"),
            Figure(f"scan.{files}.cold_vs_floor", ratio(t_cold, t_floor), "x", FLOOR_TARGET,
                   note=f"floor {t_floor * 1e3:.1f} ms: scandir + stat + 30 lines"),
            Figure(f"scan.{files}.warm_vs_floor", ratio(t_warm, t_floor), "x"),
            Figure(f"scan.{files}.cold_vs_simple", ratio(t_cold, t_simple), "x",
                   note=f"simple {t_simple * 1e3:.1f} ms: whole files, python-frontmatter"),
        ]
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        figures.append(Figure(f"scan.growth_{large}_vs_{small}",
                              ratio(per_file[large], per_file[small]), "x",
                              note="time per file, large vs small memdir (1 = linear)"))
    return figures
