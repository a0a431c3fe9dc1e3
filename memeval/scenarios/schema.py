"""Scenario records: a memory base, a clock and turns with gold labels.

These are what `load` returns and every later stage reads; they hold resolved
values only (file contents, absolute mtimes), so nothing downstream needs to know
how the YAML spelled them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from memeval.errors import MemevalError
from memeval.labels import PROJECT_SCOPE, GoldLabels, memory_key, split_memory_key
from memeval.memdir import ENTRYPOINT_NAME

Mode = Literal["recall", "index"]
AgentScope = Literal["user", "project", "local", "none"]
TurnsAre = Literal["conversation", "independent"]

MODES: tuple[str, ...] = ("recall", "index")
# A conversation carries context from turn to turn; independent questions (LoCoMo,
# LongMemEval) each start fresh and are scored on their own picks alone.
TURNS_ARE: tuple[str, ...] = ("conversation", "independent")
AGENT_SCOPES: tuple[str, ...] = ("user", "project", "local", "none")
# The curated fixture categories (fixtures/README.md); a scenario may declare more.
CATEGORIES: tuple[str, ...] = (
    "direct", "multi", "none", "keyword-trap", "paraphrase", "recent-tool-docs",
    "stale", "agent-scope", "already-surfaced", "over-five", "large-memdir",
)
# Flags with a meaning today, and their defaults; other flag names pass through.
DEFAULT_FLAGS: Mapping[str, bool] = {"auto_memory": True, "prefetch": True}
INDEX_FILENAME = ENTRYPOINT_NAME  # the index; never a memory (SPEC §1)
DAY_MS = 86_400_000


@dataclass(frozen=True)
class MemoryFileSpec:
    """One file to write into a memdir.

    Args:
        content: the exact text (BOM and CRLF kept), written as UTF-8.
        mtime_ms: modification time in Node's milliseconds since the epoch.
    """

    content: str
    mtime_ms: float


@dataclass(frozen=True)
class MemdirSpec:
    """The files of one memdir, by path relative to it (`notes/db.md`)."""

    files: Mapping[str, MemoryFileSpec] = field(default_factory=dict)
    source: Path | None = None  # the `from` folder, when there was one

    def candidates(self) -> tuple[str, ...]:
        """Filenames the scanner would list: `.md` files other than `MEMORY.md`."""
        return tuple(sorted(f for f in self.files if is_candidate_name(f)))


@dataclass(frozen=True)
class AgentSpec:
    """An agent the user may @-mention.

    Args:
        type: the agent type as mentioned (`code-reviewer`, `plugin:helper`).
        scope: where its memdir lives; `none` means the agent has no memory.
        memdir: its files; `None` exactly when `scope` is `none`.
    """

    type: str
    scope: AgentScope
    memdir: MemdirSpec | None = None


@dataclass(frozen=True)
class ToolEvent:
    """A tool call since the previous human turn (feeds "recently used tools")."""

    tool: str
    ok: bool = True
    path: str | None = None


@dataclass(frozen=True)
class Turn:
    """One human message with the truth about which memories it needs.

    Args:
        id: unique within the scenario.
        query: the user's message, agent mentions included.
        labels: gold relevant/acceptable keys, category and the reason.
        tool_events: tools used since the previous human turn, oldest first.
        used_tools: whether the main model calls a tool this turn (recall is only
            consumed after a tool step, SPEC §2.8).
        compact_before: the conversation is compacted before this turn.
        line: 1-based line of the turn in the scenario file, for messages.
        tags: free-form extra tags (importers keep source categories here too).
        answer: a reference answer, when the source has one (for judges).
    """

    id: str
    query: str
    labels: GoldLabels
    tool_events: tuple[ToolEvent, ...] = ()
    used_tools: bool = True
    compact_before: bool = False
    line: int = 0
    tags: tuple[str, ...] = ()
    answer: str | None = None


@dataclass(frozen=True)
class Scenario:
    """A session against one memory base.

    Args:
        id: unique across a suite.
        path: the YAML file it was loaded from.
        description: one line for reports.
        now: the session clock (UTC); `now_ms` is the same instant in ms.
        mode: `recall` (phase 2 runs, index kept out of startup) or `index`
            (phase 1 only).
        project_root: canonical git root; names the project memdir.
        flags: `auto_memory`, `prefetch` and any extra switches, resolved.
        default_age_days: the age given to files without an explicit mtime.
        memdirs: `{"project": MemdirSpec}`.
        agents: agent type -> its spec.
        turns: in session order.
        categories: categories this scenario may use beyond the curated ones.
        turns_are: `conversation` (context carries over: a memory relevant at an
            earlier turn is acceptable when picked again) or `independent` (each turn
            a question of its own, started fresh and scored on its own labels only).
    """

    id: str
    path: Path
    description: str
    now: datetime
    now_ms: float
    mode: Mode
    project_root: str
    flags: Mapping[str, object]
    default_age_days: float
    memdirs: Mapping[str, MemdirSpec]
    agents: Mapping[str, AgentSpec]
    turns: tuple[Turn, ...]
    categories: tuple[str, ...] = ()
    turns_are: TurnsAre = "conversation"

    @property
    def independent(self) -> bool:
        """Are the turns independent questions rather than one conversation?"""
        return self.turns_are == "independent"

    @property
    def project(self) -> MemdirSpec:
        return self.memdirs.get(PROJECT_SCOPE, MemdirSpec())

    def iter_files(self) -> Iterator[tuple[str, str, MemoryFileSpec]]:
        """Every file as `(scope, filename, spec)`; scope is `project` or an agent type."""
        for scope, memdir in self.memdirs.items():
            for name, spec in memdir.files.items():
                yield scope, name, spec
        for agent in self.agents.values():
            if agent.memdir is not None:
                for name, spec in agent.memdir.files.items():
                    yield agent.type, name, spec

    def memory_keys(self) -> tuple[str, ...]:
        """Keys of every candidate memory (what a label may name), sorted."""
        return tuple(sorted(memory_key(scope, name) for scope, name, _ in self.iter_files()
                            if is_candidate_name(name)))

    def file_for_key(self, key: str) -> MemoryFileSpec | None:
        """The spec behind a memory key, or `None` if the scenario has no such file."""
        scope, name = split_memory_key(key)
        if scope == PROJECT_SCOPE:
            memdir: MemdirSpec | None = self.project
        else:
            agent = self.agents.get(scope)
            memdir = agent.memdir if agent else None
        return None if memdir is None else memdir.files.get(name)


def is_candidate_name(filename: str) -> bool:
    """Would the scanner list this file? `.md` and a basename other than `MEMORY.md`."""
    return filename.endswith(".md") and filename.rsplit("/", 1)[-1] != INDEX_FILENAME


@dataclass(frozen=True)
class ScenarioIssue:
    """One problem in a scenario file, located precisely enough to fix it."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else \
            f"{where}: {self.message}"


class ScenarioError(MemevalError):
    """A scenario file cannot be used; lists every problem found, one per line."""

    def __init__(self, issues: list[ScenarioIssue] | tuple[ScenarioIssue, ...]) -> None:
        self.issues: tuple[ScenarioIssue, ...] = tuple(issues)
        count = len(self.issues)
        head = f"{count} problem{'s' if count != 1 else ''} in scenario"
        if self.issues:
            head += f" {self.issues[0].file}"
        super().__init__(head + ":\n" + "\n".join(str(i) for i in self.issues))

    @property
    def file(self) -> str:
        return self.issues[0].file if self.issues else ""
