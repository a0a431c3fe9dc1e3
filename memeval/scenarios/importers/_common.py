"""What every importer writes: memory files, a `MEMORY.md` index and a scenario YAML.

Importers only decide which memories and questions a dataset gives; the files they
produce share one layout (`<out>/scenarios/<id>.yaml`, `<out>/memdirs/<id>/`, as in
`fixtures/`) and one way of quoting, so their output loads like any fixture.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.scenarios._write import iso_ms, mtimes_lines, to_ms, write_file, yaml_str
from memeval.scenarios.schema import INDEX_FILENAME

DESCRIPTION_CHARS = 300  # a manifest line stays readable; the body keeps the rest


def iso(instant: datetime) -> str:
    return iso_ms(to_ms(instant))


quote = yaml_str


def one_line(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """Whitespace collapsed, `---` defused (it would end the frontmatter), cut at a word."""
    line = re.sub(r"\s+", " ", text).strip().replace("---", "—")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def safe_id(text: str) -> str:
    """A scenario id or file stem from arbitrary dataset ids."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned or "x"


def memory_text(name: str, description: str, mem_type: str, body: str) -> str:
    """A memory file; name and description are quoted so no dataset text breaks YAML."""
    return (f"---\nname: {quote(one_line(name, 120))}\ndescription: {quote(description)}\n"
            f"type: {mem_type}\n---\n{body.rstrip()}\n")


@dataclass
class MemorySpec:
    filename: str
    content: str
    mtime: datetime
    title: str
    description: str


@dataclass
class TurnSpec:
    id: str
    query: str
    category: str
    why: str
    relevant: list[str]
    answer: str | None = None
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote and what it left out.

    Args:
        scenarios: the scenario files written.
        memories: memory files written (indexes not counted).
        turns: questions kept as turns.
        dropped: one line per question or evidence id left out, and why.
    """

    scenarios: tuple[Path, ...]
    memories: int
    turns: int
    dropped: tuple[str, ...]


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """The parsed file, or a MemevalError naming the file and the problem."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return json.load(handle)
    except OSError as exc:
        raise MemevalError(f"{path}: cannot read {what} file: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MemevalError(f"{path}: not a {what} JSON file ({exc})") from None


def index_text(memories: list[MemorySpec]) -> str:
    lines = [f"- [{one_line(m.title, 80)}]({m.filename}) — {one_line(m.description, 100)}"
             for m in sorted(memories, key=lambda m: m.filename)]
    return "\n".join(lines) + "\n"


def write_scenario(out: Path, scenario_id: str, *, description: str, now: datetime,
                   memories: list[MemorySpec], turns: list[TurnSpec],
                   source: str, overwrite: bool = False) -> Path:
    """Write one scenario and its memdir, its turns declared independent questions.

    Benchmark questions are independent of one another: every turn starts fresh (a
    compaction first, so a memory needed by two questions can surface for both), and
    a memory relevant to an earlier question is no excuse for picking it again.
    """
    scenario_path = out / "scenarios" / f"{scenario_id}.yaml"
    memdir = out / "memdirs" / scenario_id
    if (scenario_path.exists() or memdir.exists()) and not overwrite:
        raise MemevalError(f"{scenario_path} or {memdir} already exists; pick another "
                           "output folder or overwrite (--force)")
    if memdir.exists():
        shutil.rmtree(memdir)
    for memory in memories:
        write_file(memdir / memory.filename, memory.content.encode("utf-8"),
                   to_ms(memory.mtime))
    write_file(memdir / INDEX_FILENAME, index_text(memories).encode("utf-8"), to_ms(now))

    categories = sorted({t.category for t in turns})
    lines = [
        f"# Imported by `memeval import` from {source}; do not redistribute the data.",
        f"id: {scenario_id}",
        f"description: {quote(one_line(description, 200))}",
        f"now: {iso(now)}",
        "mode: recall",
        "turns_are: independent",
        f"project_root: /home/user/{scenario_id}",
        f"categories: [{', '.join(quote(c) for c in categories)}]",
        "memdirs:",
        "  project:",
        f"    from: {quote(scenario_id)}",
        "    mtimes:",
        *mtimes_lines("      ", [(INDEX_FILENAME, to_ms(now))] + [
            (m.filename, to_ms(m.mtime)) for m in sorted(memories, key=lambda m: m.filename)]),
    ]
    lines.append("turns:")
    for turn in turns:
        lines += [f"  - id: {quote(turn.id)}", f"    query: {quote(turn.query)}",
                  f"    category: {quote(turn.category)}",
                  f"    why: {quote(one_line(turn.why, 400))}",
                  f"    relevant: [{', '.join(quote(r) for r in turn.relevant)}]"]
        if turn.answer is not None:
            lines.append(f"    answer: {quote(turn.answer)}")
        if turn.tags:
            lines.append(f"    tags: [{', '.join(quote(t) for t in turn.tags)}]")
    scenario_path.parent.mkdir(parents=True, exist_ok=True)
    scenario_path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return scenario_path
