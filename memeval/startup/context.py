"""The startup context of one session, and the phase-1 evaluation hook.

A session computes its startup context once (refreshed only by compaction or a
clear), so `StartupContext` is a record the session keeps and reports.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

from memeval.startup import markdown
from memeval.startup.discover import TEAM_DIR_NAME, discover
from memeval.startup.env import MemoryFileType, StartupEnv
from memeval.startup.pipeline import MemoryFile
from memeval.startup.render import Mode, included_in_mode, render_claude_md, render_user_context


@dataclass(frozen=True)
class StartupContext:
    """What a session begins with.

    Args:
        mode: `index` (MEMORY.md in context) or `recall` (index left out).
        files: every file discovery loaded, in order, including index files that the
            mode leaves out of the text (so a report can say what was withheld).
        conditional: rules waiting for a matching file; not in the text.
        memory_dir: the project memdir.
        claude_md: the `claudeMd` section (empty when no file contributes).
        text: the meta user message as the model receives it.
        today: the date in the message.
    """

    mode: Mode
    files: tuple[MemoryFile, ...]
    conditional: tuple[MemoryFile, ...]
    memory_dir: Path
    claude_md: str
    text: str
    today: dt.date

    @property
    def in_context(self) -> tuple[MemoryFile, ...]:
        """The files whose blocks are in the text."""
        return tuple(f for f in self.files if included_in_mode(f, self.mode) and f.content)

    def message(self) -> dict[str, str]:
        """The message in Messages API shape (the system marks it meta; the API does not)."""
        return {"role": "user", "content": self.text}


def startup_context_for(
    env: StartupEnv, *, today: dt.date | None = None, templates: Path | None = None
) -> StartupContext:
    """Discover, render and wrap the startup context for `env`.

    Args:
        env: roots and flags, including the mode (`env.recall_mode`).
        today: the session date (default: today in UTC).
        templates: a folder overriding the prose templates.
    """
    return startup_contexts_for(env, (env.mode,), today=today, templates=templates)[env.mode]


def startup_contexts_for(
    env: StartupEnv, modes: tuple[Mode, ...], *, today: dt.date | None = None,
    templates: Path | None = None,
) -> dict[Mode, StartupContext]:
    """`startup_context_for` in each of `modes`, from one discovery: which files load
    does not depend on the mode, only what the text keeps of them (`env.recall_mode`
    is ignored here)."""
    today = today or dt.datetime.now(dt.UTC).date()
    found = discover(env)
    contexts = {}
    for mode in modes:
        claude_md = render_claude_md(found.files, mode, templates=templates)
        text = render_user_context(claude_md, today, templates=templates)
        contexts[mode] = StartupContext(
            mode, found.files, found.conditional, found.memory_dir, claude_md, text, today
        )
    return contexts


def build_user_context(env: StartupEnv, *, today: dt.date, templates: Path | None = None) -> str:
    """The meta user message the model receives at session start (SPEC §4.4).

    Args:
        env: roots and flags.
        today: the session's date, shown as `Today's date is YYYY-MM-DD.`.
        templates: a folder overriding the prose templates.
    """
    return startup_context_for(env, today=today, templates=templates).text


def index_link_targets(index_content: str) -> list[str]:
    """Link targets of an index, as memdir-relative POSIX paths (fragments dropped)."""
    return list(_link_targets(index_content))


@lru_cache(maxsize=64)
def _link_targets(index_content: str) -> tuple[str, ...]:
    # Cached: a report asks about every turn's memories against the same index.
    targets = []
    for href in markdown.link_hrefs(markdown.normalize_newlines(index_content)):
        if href and "://" not in href:
            target = normalize_memory_filename(unquote(href.split("#", 1)[0]))
            if target:
                targets.append(target)
    return tuple(targets)


def normalize_memory_filename(name: str) -> str:
    """`./notes//db.md` and `notes/db.md` name the same memory."""
    cleaned = posixpath.normpath(name.replace("\\", "/")) if name else ""
    return "" if cleaned == "." else cleaned


def startup_reachable(env_or_context: StartupEnv | StartupContext, memory_filename: str) -> bool:
    """Does the startup context carry an index line linking to `memory_filename`?

    The phase-1 question of a scenario turn: the model can only find a memory from
    the index if the line pointing to it survived truncation. Team memories are
    named with their `team/` prefix, as the memdir lists them.

    Args:
        env_or_context: a session's `StartupContext`, or an env to build one from.
        memory_filename: the memory's path relative to the project memdir.
    """
    context = (
        startup_context_for(env_or_context)
        if isinstance(env_or_context, StartupEnv)
        else env_or_context
    )
    return normalize_memory_filename(memory_filename) in indexed_memories(context)


def indexed_memories(context: StartupContext) -> frozenset[str]:
    """Every memory an index line in the startup context links to, normalized (team
    memories with their `team/` prefix): one answer for all of a session's turns."""
    linked: set[str] = set()
    for file in context.in_context:
        if file.type == MemoryFileType.AUTO_MEM:
            prefix = ""
        elif file.type == MemoryFileType.TEAM_MEM:
            prefix = TEAM_DIR_NAME + "/"
        else:
            continue
        linked.update(normalize_memory_filename(prefix + t) for t in _link_targets(file.content))
    return frozenset(linked)
