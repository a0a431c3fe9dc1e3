"""The runtime Session: phase 2 recall over the turns of one conversation (SPEC §2).

A Session holds only the transcript state that matters to memory: the
`relevant_memories` attachments still in the transcript (from which the surfaced
path set and the surfaced size follow, as in the system), the read-file state, the
flags and a clock. Each `turn()` runs gate → scope → scan → manifest → selector →
validation → merge → cap → surfacing read → consumption, and returns a TurnRecord.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memeval.errors import MemevalError
from memeval.labels import PROJECT_SCOPE, memory_key
from memeval.memdir import (
    MAX_MEMORY_LINES,
    MAX_SESSION_BYTES,
    MAX_SURFACED_PER_TURN,
    MemoryHeader,
    SurfacedMemory,
    format_memory_manifest,
    read_memory_for_surfacing,
)
from memeval.memdir.nodepath import expand_path
from memeval.memdir.paths import agent_memory_dir, project_memory_dir
from memeval.memdir.scan import SkippedFile
from memeval.memdir.text import js_trim, utf16_len
from memeval.selectors.base import (
    SelectionRequest,
    SelectionResult,
    Selector,
    reset_selector,
    safe_aselect,
    safe_select,
)
from memeval.session.compaction import RestoredFile, restore_recent_files
from memeval.session.compat import Compat
from memeval.session.filestate import FileStateEntry, ReadFileState
from memeval.session.records import (
    DirSearch,
    DroppedName,
    PickedMemory,
    SurfacedRecord,
    TurnRecord,
    name_repr,
)
from memeval.session.scan import scan_dir
from memeval.session.scope import (
    AgentDefinition,
    AgentMention,
    agents_by_type,
    js_has_whitespace,
    resolve_mentions,
)
from memeval.session.tools import (
    ToolEvent,
    coerce_tool_events,
    file_state_entries,
    recent_successful_tools,
    tool_timestamp,
)
from memeval.usage import ZERO_USAGE, Usage

if TYPE_CHECKING:
    from memeval.startup import StartupContext, StartupEnv

AgentsArg = Mapping[str, AgentDefinition | str | None] | Iterable[AgentDefinition] | None
# Scans by (memdir, symlinks followed out): the headers and what the scan left out.
ScanStore = dict[tuple[str, bool], tuple[tuple[MemoryHeader, ...], tuple[SkippedFile, ...]]]



def render_system_reminder(header: str, content: str) -> str:
    """One surfaced memory as the main model receives it (SPEC §2.8)."""
    return f"<system-reminder>\n{header}\n\n{content}\n</system-reminder>"


def memory_attachment_entry(memory: SurfacedMemory) -> dict[str, Any]:
    """One entry of the `relevant_memories` attachment; `limit` only when truncated."""
    entry: dict[str, Any] = {
        "path": str(memory.path),
        "content": memory.content,
        "mtime_ms": memory.mtime_ms,
        "header": memory.header,
    }
    if memory.truncated:
        entry["limit"] = memory.line_limit
    return entry


@dataclass
class _Plan:
    """What a turn decided before asking the selector (shared by turn and aturn)."""

    turn_id: str
    query: str
    repeat: int
    used_tools: bool
    events: tuple[ToolEvent, ...]
    bytes_before: int
    recent_tools: tuple[str, ...] = ()
    mentions: tuple[AgentMention, ...] = ()
    searches: list[DirSearch] = field(default_factory=list)
    requests: list[SelectionRequest | None] = field(default_factory=list)
    skipped: str | None = None


class Session:
    """One conversation against a memory base.

    Args:
        memory_base: root of per-project memory (`~/.claude` by default in the system).
        project_root: the canonical git root; names the project memdir.
        cwd: where the session runs; project/local agent memdirs live under it
            (default: `project_root`).
        agents: the agents the user may mention, by type (a definition, or just the
            memory scope) or as an iterable of definitions.
        selector: picks memories per memdir (the side query).
        now_ms: the session clock, epoch milliseconds UTC; drives memory ages.
        auto_memory_enabled: whether auto-memory is on at all (SPEC §2.1).
        prefetch_enabled: whether relevant-memory prefetch may run.
        recall_mode: the mode flag `tengu_moth_copse` (SPEC §0): on, per-turn recall
            runs; off, the index sits in the startup context and no recall happens.
        compat: which faithful quirks are on (`Compat.faithful()` by default).
        startup_context: the startup context the session began with, if known
            (phase 1), as a `memeval.startup.StartupContext` or plain text.
        startup_env: the phase-1 roots; when given (and `startup_context` is not), the
            session computes its startup context from it, in the session's own mode
            and auto-memory setting and with the session's project memdir, once at
            start and again after each compaction, as the system does.
        scenario_id: the scenario the session plays, handed to the selector so its
            per-turn randomness differs between scenarios that share turn ids.
        shared_scans: a store of memdir scans to share with other sessions on files that
            do not change (every session and turn of one materialized scenario); None
            scans afresh every turn, as the system does.
        home: what `~` means in tool paths (default: `startup_env.home`, else the
            user's home).
        plan_file: the session's plan file, which compaction never restores.
    """

    def __init__(
        self,
        memory_base: str | os.PathLike[str],
        project_root: str | os.PathLike[str],
        *,
        selector: Selector,
        cwd: str | os.PathLike[str] | None = None,
        agents: AgentsArg = None,
        now_ms: float,
        auto_memory_enabled: bool = True,
        prefetch_enabled: bool = True,
        recall_mode: bool = True,
        compat: Compat | str | None = None,
        startup_context: StartupContext | str | None = None,
        startup_env: StartupEnv | None = None,
        scenario_id: str = "",
        shared_scans: ScanStore | None = None,
        home: str | os.PathLike[str] | None = None,
        plan_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.memory_base = Path(memory_base)
        self.project_root = Path(project_root)
        self.cwd = Path(cwd) if cwd is not None else self.project_root
        self.agents: dict[str, AgentDefinition] = agents_by_type(agents)
        self.selector = selector
        self.now_ms = float(now_ms)
        self.auto_memory_enabled = auto_memory_enabled
        self.prefetch_enabled = prefetch_enabled
        self.recall_mode = recall_mode
        self.compat = Compat.from_spec(compat)
        self.startup_env = startup_env
        self.scenario_id = scenario_id
        if home is None:
            home = startup_env.home if startup_env is not None else Path.home()
        self.home = Path(home)
        self.plan_file = None if plan_file is None else Path(plan_file)
        self.startup_context = startup_context
        if startup_context is None and startup_env is not None:
            self.startup_context = self.compute_startup_context()
        self._attachments: list[dict[str, Any]] = []
        self._surfaced_units = 0  # running sum over _attachments; recounting is slow
        self._read_file_state = ReadFileState()
        self.turns: list[TurnRecord] = []
        self.compactions = 0
        self.shared_scans = shared_scans
        # What the latest compaction tried to read back (empty in `clear` mode).
        self.last_restore: tuple[RestoredFile, ...] = ()

    # ----------------------------------------------------------------- state
    @property
    def project_memory_dir(self) -> Path:
        return Path(project_memory_dir(self.memory_base, self.project_root))

    def agent_memory_dir(self, agent_type: str, scope: str) -> Path:
        return Path(agent_memory_dir(agent_type, scope, memory_base=self.memory_base,
                                     cwd=self.cwd))

    def compute_startup_context(self) -> StartupContext:
        """Phase 1 for this session: one mode flag and one memdir for both phases."""
        from memeval.startup import startup_context_for

        if self.startup_env is None:
            raise MemevalError("Session.compute_startup_context: no startup_env was given; "
                               "pass startup_env=StartupEnv(...) to the Session")
        env = replace(
            self.startup_env,
            recall_mode=self.recall_mode,
            auto_memory_enabled=self.auto_memory_enabled,
            memory_dir=self.startup_env.memory_dir or self.project_memory_dir,
        )
        today = datetime.fromtimestamp(self.now_ms / 1000, UTC).date()
        return startup_context_for(env, today=today)

    @property
    def attachments(self) -> tuple[dict[str, Any], ...]:
        """The `relevant_memories` attachments still in the transcript."""
        return tuple(self._attachments)

    @property
    def surfaced_paths(self) -> frozenset[str]:
        """Paths of every memory in an attachment still in the transcript."""
        return frozenset(m["path"] for a in self._attachments for m in a["memories"])

    @property
    def surfaced_bytes(self) -> int:
        """Surfaced size as the system counts it: UTF-16 units of each content, note
        included, header excluded (SPEC §2.8)."""
        return self._surfaced_units

    @property
    def read_file_state(self) -> Mapping[str, str]:
        """Files the model has in context, mapped to how they got there (`tool:<name>`,
        `memory` or `restored`), least recently used first; at most 100."""
        return self._read_file_state.as_dict()

    def read_file_entry(self, path: str | os.PathLike[str]) -> FileStateEntry | None:
        """The read-file state's entry for `path` (as keyed: expanded or surfaced)."""
        return self._read_file_state.get(os.fspath(path))

    def note_file_read(self, path: str | os.PathLike[str], how: str = "tool:Read") -> None:
        """Put a file into the read-file state, as a Read/Write/Edit would."""
        event = ToolEvent("Read", True, os.fspath(path))
        for p, _ in file_state_entries([event], self.cwd, self.home):
            self._read_file_state.set(p, FileStateEntry(how, tool_timestamp(p)))

    def fork(self, selector: Selector) -> Session:
        """A session in this one's exact state (transcript, read files, budget) whose
        next turns go to `selector`; this session is left as it was. Gold history plays
        every turn of every selector from the reference session's state this way."""
        twin = copy.copy(self)
        twin.selector = selector
        twin._attachments = list(self._attachments)
        twin._read_file_state = self._read_file_state.copy()
        twin.turns = list(self.turns)
        return twin

    def _scan(self, memdir: Path) -> tuple[tuple[MemoryHeader, ...], tuple[SkippedFile, ...]]:
        """The memdir's headers and what was left out, from `shared_scans` when it has them."""
        key = (str(memdir), self.compat.follow_symlinks_out_of_memdir)
        if self.shared_scans is not None and key in self.shared_scans:
            return self.shared_scans[key]
        skips: list[SkippedFile] = []
        scanned = tuple(scan_dir(memdir, follow_symlinks_out=key[1], skipped=skips))
        if self.shared_scans is not None:
            self.shared_scans[key] = (scanned, tuple(skips))
        return scanned, tuple(skips)

    def restore_excluded(self) -> frozenset[str]:
        """Paths compaction never reads back: the plan file and the instruction and
        index file of every memory type (managed, user, project and local `CLAUDE.md`,
        the auto-memory and team `MEMORY.md`), expanded as the tools expand paths."""
        from memeval.startup.env import DEFAULT_MANAGED_DIR

        env = self.startup_env
        config_home = env.config_home if env is not None else self.memory_base
        managed = env.managed_dir if env is not None else DEFAULT_MANAGED_DIR
        memdir = (env.memory_dir if env is not None else None) or self.project_memory_dir
        paths = [managed / "CLAUDE.md", config_home / "CLAUDE.md", self.cwd / "CLAUDE.md",
                 self.cwd / "CLAUDE.local.md", memdir / "MEMORY.md",
                 memdir / "team" / "MEMORY.md"]
        if self.plan_file is not None:
            paths.append(self.plan_file)
        return frozenset(expand_path(os.fspath(p), self.cwd, self.home) for p in paths)

    def compact(self) -> None:
        """Compaction: old attachments leave the transcript, so the surfaced set and the
        budget reset; the read-file state is cleared and, in `restore` mode (the
        system's), its five newest files are read back into it, so those stay "already
        read" (see `memeval.session.compaction`); in `clear` mode nothing comes back.
        The startup context is computed afresh, and a stateful selector forgets its
        conversations (newer releases clear the side conversation on compaction)."""
        self._attachments.clear()
        self._surfaced_units = 0
        before = self._read_file_state.copy()
        self._read_file_state.clear()
        self.last_restore = ()
        if self.compat.compaction == "restore":
            self.last_restore = restore_recent_files(
                before, self._read_file_state, self.restore_excluded(),
                cwd=os.fspath(self.cwd), home=os.fspath(self.home))
        self.compactions += 1
        reset_selector(self.selector)
        if self.startup_env is not None:
            self.startup_context = self.compute_startup_context()

    # ------------------------------------------------------------------ turns
    def turn(
        self,
        query: str,
        *,
        tool_events: Iterable[ToolEvent | Mapping[str, Any] | str] = (),
        used_tools: bool = True,
        turn_id: str = "",
        repeat: int = 0,
    ) -> TurnRecord:
        """Run one human turn (SPEC §2.1–2.8) and record it.

        Args:
            query: the human message.
            tool_events: the main model's tool uses since the previous human turn, in
                order; they set the recently used tools and the read-file state.
            used_tools: whether the main model calls a tool this turn; when not, the
                recall is discarded, as in the system.
            turn_id: the scenario's id for the turn.
            repeat: which repeat of the turn this is (caches keep repeats apart).
        """
        plan = self._plan(query, tool_events, used_tools, turn_id, repeat)
        if plan.skipped is not None:
            return self._finish_skipped(plan)
        results = [None if r is None else safe_select(self.selector, r) for r in plan.requests]
        return self._finish(plan, results)

    async def aturn(
        self,
        query: str,
        *,
        tool_events: Iterable[ToolEvent | Mapping[str, Any] | str] = (),
        used_tools: bool = True,
        turn_id: str = "",
        repeat: int = 0,
    ) -> TurnRecord:
        """`turn` with the memdirs' selector calls run concurrently. Turns of one
        session must still be awaited one after the other."""
        plan = self._plan(query, tool_events, used_tools, turn_id, repeat)
        if plan.skipped is not None:
            return self._finish_skipped(plan)

        async def one(request: SelectionRequest | None) -> SelectionResult | None:
            return None if request is None else await safe_aselect(self.selector, request)

        results = list(await asyncio.gather(*(one(r) for r in plan.requests)))
        return self._finish(plan, results)

    # ---------------------------------------------------------- the pipeline
    def gate(self, query: str) -> str | None:
        """Why recall would not start for this query now, or None (SPEC §2.1)."""
        if not self.auto_memory_enabled:
            return "gate:auto-memory-disabled"
        if not self.recall_mode:
            return "gate:recall-off"
        if not self.prefetch_enabled:
            return "gate:prefetch-disabled"
        trimmed = js_trim(query)
        if not trimmed:
            return "gate:empty"
        if not js_has_whitespace(trimmed):
            return "gate:single-word"
        # Checked before the call, so the turn that crosses the budget still surfaces.
        if self.surfaced_bytes >= MAX_SESSION_BYTES:
            return "budget"
        return None

    def scope_dirs(self, mentions: Sequence[AgentMention]) -> list[tuple[str, Path]]:
        """The memdirs a turn searches, in merge order (SPEC §2.2)."""
        dirs: list[tuple[str, Path]] = []
        for m in mentions:
            if m.memory_scope is not None:
                dirs.append((m.agent_type, self.agent_memory_dir(m.agent_type, m.memory_scope)))
        if not self.compat.agent_mentioned_twice_searched_twice:
            seen: set[str] = set()
            unique = []
            for scope, path in dirs:
                key = os.path.normpath(path)
                if key not in seen:
                    seen.add(key)
                    unique.append((scope, path))
            dirs = unique
        return dirs or [(PROJECT_SCOPE, self.project_memory_dir)]

    def _plan(
        self,
        query: str,
        tool_events: Iterable[ToolEvent | Mapping[str, Any] | str],
        used_tools: bool,
        turn_id: str,
        repeat: int,
    ) -> _Plan:
        events = coerce_tool_events(tool_events)
        # The window's reads happened before this human message: they count already.
        for path, event in file_state_entries(events, self.cwd, self.home,
                                              extra_tools=self.compat.extra_file_tools):
            self._read_file_state.set(path, FileStateEntry(f"tool:{event.tool}",
                                                           tool_timestamp(path)))
        plan = _Plan(turn_id, query, repeat, used_tools, events, self.surfaced_bytes)
        plan.skipped = self.gate(query)
        if plan.skipped is not None:
            return plan
        plan.recent_tools = recent_successful_tools(events)
        plan.mentions = resolve_mentions(
            query, self.agents, prefix_quirk=self.compat.quoted_agent_prefix_quirk
        )
        already = self.surfaced_paths
        for scope, memdir in self.scope_dirs(plan.mentions):
            scanned, skips = self._scan(memdir)
            candidates = tuple(h for h in scanned if str(h.file_path) not in already)
            manifest = format_memory_manifest(list(candidates)) if candidates else ""
            plan.searches.append(DirSearch(scope, str(memdir), scanned, candidates, manifest,
                                           skipped=skips))
            if not candidates:
                plan.requests.append(None)  # nothing left: no selector call for this dir
                continue
            plan.requests.append(SelectionRequest(
                query=query,
                manifest=manifest,
                candidates=candidates,
                memory_dir=memdir,
                scope=scope,
                recent_tools=plan.recent_tools,
                already_surfaced=already,
                turn_id=turn_id,
                repeat=repeat,
                scenario=self.scenario_id,
            ))
        if all(r is None for r in plan.requests):
            plan.skipped = "nothing-to-select"
        return plan

    def _base_record(self, plan: _Plan) -> TurnRecord:
        return TurnRecord(
            turn_id=plan.turn_id,
            query=plan.query,
            repeat=plan.repeat,
            recall_mode=self.recall_mode,
            compat=self.compat.preset_name,
            skipped=plan.skipped,
            mentions=plan.mentions,
            dirs=tuple(plan.searches),
            recent_tools=plan.recent_tools,
            tool_events=plan.events,
            surfaced_bytes_before=plan.bytes_before,
            surfaced_bytes_after=self.surfaced_bytes,
        )

    def _finish_skipped(self, plan: _Plan) -> TurnRecord:
        record = self._base_record(plan)
        self.turns.append(record)
        return record

    def _finish(self, plan: _Plan, results: Sequence[SelectionResult | None]) -> TurnRecord:
        errors: list[str] = []
        dropped: list[DroppedName] = []
        picks: list[PickedMemory] = []
        usage: Usage = ZERO_USAGE
        searches: list[DirSearch] = []
        for search, result in zip(plan.searches, results, strict=True):
            if result is None:
                searches.append(search)
                continue
            usage = usage + result.usage
            done = _validate(search, result)
            searches.append(done)
            dropped.extend(done.invalid)
            if done.error is not None:
                errors.append(f"selector on {done.scope} memdir {done.memory_dir}: {done.error}")
            by_name = {h.filename: h for h in done.candidates}
            for name in done.valid:
                h = by_name[name]
                picks.append(PickedMemory(memory_key(done.scope, h.filename), done.scope,
                                          h.filename, str(h.file_path), h.mtime_ms))

        kept = self._merge(picks, searches, dropped)
        surfaced: list[SurfacedRecord] = []
        for pick in kept:
            try:
                memory = read_memory_for_surfacing(pick.path, pick.mtime_ms, now_ms=self.now_ms)
            except (MemevalError, OSError, ValueError) as exc:
                # A file that fails to read is skipped (SPEC §2.6); memeval says why.
                dropped.append(DroppedName(pick.scope, pick.filename, "read-failed", pick.path))
                errors.append(f"reading {pick.path}: {type(exc).__name__}: {exc}")
                continue
            if memory is None:
                dropped.append(DroppedName(pick.scope, pick.filename, "read-failed", pick.path))
                continue
            if not self.compat.exact_200_lines_marked_truncated:
                memory = _untruncate_exact_200(memory)
            surfaced.append(SurfacedRecord(pick.key, pick.scope, pick.filename, memory))

        record = replace(
            self._base_record(plan),
            dirs=tuple(searches),
            picked=tuple(picks),
            usage=usage,
        )
        if not plan.used_tools:
            # The main model answered without a tool call: the recall is never consumed.
            record = replace(record, skipped="no-tool-use-discarded", discarded=tuple(surfaced),
                             dropped=tuple(dropped), errors=tuple(errors))
            self.turns.append(record)
            return record

        # Consumption: filter against the read-file state first, then mark survivors.
        consumed = []
        for s in surfaced:
            if s.path in self._read_file_state:
                dropped.append(DroppedName(s.scope, s.filename, "already-read", s.path))
            else:
                consumed.append(s)
        for s in consumed:
            self._read_file_state.set(s.path, FileStateEntry("memory", s.memory.mtime_ms))
        attachment = None
        if consumed:
            attachment = {
                "type": "relevant_memories",
                "memories": [memory_attachment_entry(s.memory) for s in consumed],
            }
            self._attachments.append(attachment)
            self._surfaced_units += sum(utf16_len(m["content"]) for m in attachment["memories"])
        record = replace(
            record,
            surfaced=tuple(consumed),
            dropped=tuple(dropped),
            attachment=attachment,
            system_reminders=tuple(
                render_system_reminder(s.memory.header, s.memory.content) for s in consumed
            ),
            surfaced_bytes_after=self.surfaced_bytes,
            errors=tuple(errors),
        )
        self.turns.append(record)
        return record

    def _merge(
        self, picks: Sequence[PickedMemory], searches: Sequence[DirSearch],
        dropped: list[DroppedName],
    ) -> list[PickedMemory]:
        """Concatenated picks minus already-read and already-surfaced paths, first five
        (SPEC §2.6). Hardened also drops repeats and anything whose real path leaves
        its memdir."""
        already = self.surfaced_paths
        roots = {s.scope: os.path.realpath(s.memory_dir) for s in searches}
        seen: set[str] = set()
        survivors: list[PickedMemory] = []
        for p in picks:
            if p.path in self._read_file_state:
                dropped.append(DroppedName(p.scope, p.filename, "already-read", p.path))
            elif p.path in already:
                dropped.append(DroppedName(p.scope, p.filename, "already-surfaced", p.path))
            elif not self.compat.duplicate_names_surface_twice and p.path in seen:
                dropped.append(DroppedName(p.scope, p.filename, "duplicate", p.path))
            elif not self.compat.follow_symlinks_out_of_memdir and not _inside(
                os.path.realpath(p.path), roots[p.scope]
            ):
                dropped.append(DroppedName(p.scope, p.filename, "outside-memdir", p.path))
            else:
                seen.add(p.path)
                survivors.append(p)
        for p in survivors[MAX_SURFACED_PER_TURN:]:
            dropped.append(DroppedName(p.scope, p.filename, "over-cap", p.path))
        return survivors[:MAX_SURFACED_PER_TURN]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


MAX_RAW_OUTPUT_CHARS = 20_000  # a selector's answer kept in records; a 10 MB answer is not


def _capped(text: str | None) -> str | None:
    """The selector's raw answer, cut with a note when it is too long to keep in every
    row and report (the names were read from the whole of it)."""
    if text is None or len(text) <= MAX_RAW_OUTPUT_CHARS:
        return text
    return (text[:MAX_RAW_OUTPUT_CHARS]
            + f"\n[memeval: {len(text) - MAX_RAW_OUTPUT_CHARS} more characters not kept]")


def _validate(search: DirSearch, result: SelectionResult) -> DirSearch:
    """Keep the selector's names that are filenames of this memdir's manifest, in its
    order, duplicates included. An answer that is not a list is an error, not an empty
    pick; inside a list, a name that is not a string is dropped like an unknown name,
    as the system's filter drops it, and the string names are kept."""
    names: Any = result.names
    base = replace(search, called=True, raw_output=_capped(result.raw_output),
                   usage=result.usage)
    if result.error is not None:
        return replace(base, error=result.error)
    if not isinstance(names, Sequence) or isinstance(names, str | bytes):
        return replace(
            base, raw_names=(name_repr(names),),
            error=f"malformed answer: names is {type(names).__name__}, expected a list of strings",
        )
    raw = tuple(name_repr(n) for n in names)
    known = {h.filename for h in search.candidates}
    valid = tuple(n for n in names if isinstance(n, str) and n in known)
    invalid = tuple(
        DroppedName(search.scope, name_repr(n),
                    "not-a-candidate" if isinstance(n, str) else "not-a-string")
        for n in names if not (isinstance(n, str) and n in known)
    )
    return replace(base, raw_names=raw, valid=valid, invalid=invalid)


def _untruncate_exact_200(memory: SurfacedMemory) -> SurfacedMemory:
    """Hardened: a file of exactly 200 newline-terminated lines lost nothing, so it
    surfaces whole without the truncation note."""
    from memeval.session.scan import exact_200_line_file

    if memory.line_limit != MAX_MEMORY_LINES or not exact_200_line_file(str(memory.path)):
        return memory
    note_at = memory.content.rfind("\n\n> ")
    content = memory.content[:note_at] if note_at >= 0 else memory.content
    return replace(memory, content=content, truncated=False, line_limit=None)


__all__ = [
    "MAX_SURFACED_PER_TURN",
    "MemoryHeader",
    "Session",
    "memory_attachment_entry",
    "render_system_reminder",
]
