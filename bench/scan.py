"""Scan + manifest on generated memdirs, next to a naive version and the I/O floor.

`ours` is what a Session runs each turn: `scan_memory_files` then
`format_memory_manifest` (a run shares one scan of a world's memdirs across its
turns, so this is paid once a world). `simple` is the shortest correct-looking program: read whole
files, parse them with python-frontmatter, sort, print. `floor` is what any scan
must at least do: list the folder tree with `os.scandir`, stat each file and read
its first 30 lines, with no parsing at all.

Two kinds of memdir are scanned: the scenario generator's (frontmatter of plain
`key: words` lines) and a YAML-heavy one (`scan.yaml.*`) whose frontmatter takes
the full YAML path: quoted and escaped strings, flow collections, block scalars,
folded plain lines, block sequences, numbers and dates, and the malformed values
people write (`a: b` inside a value, `[WIP] ...`, an apostrophe inside single
quotes) that the parser rejects, retries quoted, or gives up on.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import frontmatter

from bench._core import Context, Figure, best_time, ratio
from memeval.memdir import FRONTMATTER_MAX_LINES, format_memory_manifest, scan_memory_files
from memeval.scenarios import generate

# Targets of issue 11, by memdir size (milliseconds for the whole scan + manifest).
TARGET_MS = {200: 20.0, 10_000: 1_500.0}
FLOOR_TARGET = 2.0  # ours within 2x of the floor
YAML_FLOOR_TARGET = 1.5  # issue 18: YAML-heavy frontmatter within 1.5x of the floor
YAML_SIZES = (200, 2_000)  # the sizes issue 18 states its target for
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


# Values of `description` in the YAML-heavy memdir, one shape per entry: what each
# becomes is in the comment (the parser is the judge; these only set the mix).
_YAML_DESCRIPTIONS = (
    'description: "{w} \\"{v}\\" before merging: check {w2}"',  # double-quoted, escapes
    "description: '{w} ''{v}'' of {w2}, always'",  # single-quoted, '' escape
    "description: >-\n  {w} {v}\n  then {w2} again\n\n  second paragraph",  # folded
    "description: |\n  {w} {v}\n  {w2} on its own line",  # literal
    "description: {w} {v} # a trailing comment",  # plain, comment dropped
    "description: {w} {v} when\n  the {w2} flag is on",  # plain over two lines
    "description: Note: {w} needs {v}",  # malformed: `: ` in a value; the retry quotes it
    "description: [WIP] {w} {v}",  # malformed: flow then text; the retry quotes it
    "description: '{w}'s {v} is broken'",  # malformed beyond the retry: empty frontmatter
    'description: "{w} said "{v}" twice"',  # malformed beyond the retry
    "description: {n}",  # a number; the manifest shows JavaScript's String()
    "description: [{w}, {v}, '{w2}']",  # a flow sequence as the description
    "description: {{{w}: {v}, size: {n}}}",  # a flow mapping: [object Object]
    "description: 2024-0{d}-1{d}",  # YAML 1.2: a string, not a date
)
_YAML_EXTRAS = (
    "tags: [{w}, {v}, \"{w2}\"]",
    "meta: {{owner: {w}, priority: {n}}}",
    "related:\n  - {w}.md\n  - '{v}.md'",
    "# reviewed by {w}",
    "ttl: {n}",
    "draft: false",
    "aliases:\n- {w}\n- {v}",
)
_YAML_TYPES = ("type: user", 'type: "feedback"', "type: 'project'", "type: reference",
               "type: Feedback", "type: [user]")
_WORDS = ("cache", "deploy", "billing", "queue", "ember", "raven", "auth", "retry", "index",
          "schema", "timeout", "review", "flaky", "tests", "staging", "rollback")


def yaml_frontmatter(rng: random.Random) -> str:
    """One YAML-heavy frontmatter block (without the `---` lines)."""
    def fill(template: str) -> str:
        return template.format(w=rng.choice(_WORDS), v=rng.choice(_WORDS),
                               w2=rng.choice(_WORDS), n=rng.randint(0, 500),
                               d=rng.randint(1, 9))
    lines = [fill(rng.choice(("name: {w}-{v}", "name: '{w} {v}'", 'name: "{w}/{v}"')))]
    lines.append(fill(rng.choice(_YAML_DESCRIPTIONS)))
    lines.append(rng.choice(_YAML_TYPES))
    lines += [fill(t) for t in rng.sample(_YAML_EXTRAS, rng.randint(0, 3))]
    return "\n".join(lines) + "\n"


def make_yaml_memdir(workdir: Path, files: int, seed: int = SEED) -> Path:
    """`files` memory files in a few folders, each with YAML-heavy frontmatter and a
    short body, distinct mtimes, and a MEMORY.md index."""
    rng = random.Random(seed)
    out = workdir / f"scan-yaml-{files}"
    folders = ["", "team", "team/api", "user", "project/ops"]
    for folder in folders:
        (out / folder).mkdir(parents=True, exist_ok=True)
    index = []
    base = 1_764_000_000
    for number in range(files):
        name = f"{folders[number % len(folders)]}/{rng.choice(_WORDS)}-{number}.md".lstrip("/")
        body = "\n".join(f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} line {i}"
                         for i in range(rng.randint(3, 40)))
        path = out / name
        path.write_text(f"---\n{yaml_frontmatter(rng)}---\n{body}\n", encoding="utf-8")
        os.utime(path, ns=(0, (base + number * 61) * 10**9 + rng.randint(0, 999_999_999)))
        index.append(f"- [{name}]({name})")
    (out / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return out


def interleaved(sides: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best time of each side, taking turns within every round, so a burst of load
    from elsewhere on the machine hits all sides alike rather than one phase."""
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(max(1, repeats)):
        for name, fn in sides.items():
            best[name] = min(best[name], best_time(fn, 1))
    return best


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
             "ours": lambda m=memdir: ours(m)},
            repeats)
        t_floor, t_simple, t_ours = (times[k] for k in ("floor", "simple", "ours"))
        per_file[files] = t_ours / files
        figures += [
            Figure(f"scan.{files}", t_ours * 1e3, "ms", TARGET_MS.get(files),
                   note="scan + manifest"),
            Figure(f"scan.{files}.us_per_file", t_ours / files * 1e6, "us"),
            Figure(f"scan.{files}.vs_floor", ratio(t_ours, t_floor), "x", FLOOR_TARGET,
                   note=f"floor {t_floor * 1e3:.1f} ms: scandir + stat + 30 lines"),
            Figure(f"scan.{files}.vs_simple", ratio(t_ours, t_simple), "x",
                   note=f"simple {t_simple * 1e3:.1f} ms: whole files, python-frontmatter"),
        ]
    figures += _yaml_figures(ctx)
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        figures.append(Figure(f"scan.growth_{large}_vs_{small}",
                              ratio(per_file[large], per_file[small]), "x",
                              note="time per file, large vs small memdir (1 = linear)"))
    return figures


def _yaml_figures(ctx: Context) -> list[Figure]:
    """Cold scan vs floor on the YAML-heavy memdir (issue 18), at its sizes (or at
    the profile's smallest scan size when that is below them, as the tiny run is)."""
    sizes = [n for n in YAML_SIZES if n <= max(ctx.sizes.scan_files)] or [
        min(ctx.sizes.scan_files)]
    figures: list[Figure] = []
    for files in sizes:
        ctx.log(f"scan: generating a YAML-heavy memdir of {files} files")
        memdir = make_yaml_memdir(ctx.workdir, files)
        floor(memdir)
        # Thrice the rounds: each takes milliseconds, and the ratio of two short
        # minima is what a burst of load elsewhere moves most.
        times = interleaved({"floor": lambda m=memdir: floor(m),
                             "ours": lambda m=memdir: ours(m)},
                            3 * ctx.sizes.scan_repeats)
        figures += [
            Figure(f"scan.yaml.{files}", times["ours"] * 1e3, "ms",
                   note="scan + manifest, YAML-heavy frontmatter"),
            Figure(f"scan.yaml.{files}.vs_floor", ratio(times["ours"], times["floor"]),
                   "x", YAML_FLOOR_TARGET,
                   note=f"floor {times['floor'] * 1e3:.1f} ms: scandir + stat + 30 lines"),
        ]
    return figures
