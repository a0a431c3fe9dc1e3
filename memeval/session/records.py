"""What one turn of a Session produced: plain frozen records, JSON-ready.

A TurnRecord carries everything later stages need (judges, metrics, reports) so no
stage has to reach back into the Session or the filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memeval.session.scope import AgentMention
from memeval.session.tools import ToolEvent
from memeval.usage import ZERO_USAGE, Usage

if TYPE_CHECKING:
    from memeval.memdir import MemoryHeader, SurfacedMemory
    from memeval.memdir.scan import SkippedFile

# Why a turn did no (or no usable) recall. Gate reasons come first, in the order the
# system checks them; `no-tool-use-discarded` means recall ran but was thrown away.
SKIP_REASONS: tuple[str, ...] = (
    "gate:auto-memory-disabled",
    "gate:recall-off",
    "gate:prefetch-disabled",
    "gate:empty",
    "gate:single-word",
    "budget",
    "nothing-to-select",
    "no-tool-use-discarded",
)

# Why a name or a memory did not make it to the model.
DROP_REASONS: tuple[str, ...] = (
    "not-a-string",  # one name in the answer's list is not a string (dropped alone)
    "not-a-candidate",  # the name is not a filename of this memdir's manifest
    "duplicate",  # hardened: the same file was already picked this turn
    "already-read",  # in the read-file state (read/written/edited, or surfaced before)
    "already-surfaced",  # in a relevant_memories attachment still in the transcript
    "over-cap",  # beyond the first five
    "read-failed",  # the surfacing read raised
    "outside-memdir",  # hardened: the file's real path leaves the memdir
)


def _name_repr(name: Any) -> str:
    return name if isinstance(name, str) else repr(name)


def header_to_dict(header: MemoryHeader) -> dict[str, Any]:
    return {
        "filename": header.filename,
        "file_path": str(header.file_path),
        "mtime_ms": header.mtime_ms,
        "description": header.description,
        "type": None if header.type is None else str(getattr(header.type, "value", header.type)),
    }


@dataclass(frozen=True)
class DroppedName:
    """A name the selector gave, or a picked memory, that was not surfaced, and why."""

    scope: str
    name: str
    reason: str
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "name": self.name, "reason": self.reason, "path": self.path}


@dataclass(frozen=True)
class DirSearch:
    """One memdir searched in one turn: scan, manifest, and the selector's answer.

    Args:
        scope: `"project"` or the agent type whose memdir this is.
        memory_dir: the memdir's absolute path.
        scanned: headers the scan returned (newest first, at most 200).
        candidates: those left after removing already-surfaced paths; the manifest
            lists exactly these.
        manifest: the manifest text the selector saw (empty when nothing to select).
        called: whether the selector was asked (not when there were no candidates).
        raw_names: the selector's names as returned, unvalidated (non-strings as repr).
        raw_output: the selector's raw text or trace.
        valid: the names kept after validation, in the selector's order.
        invalid: names dropped at validation, with reasons.
        error: why the selector gave no answer (exception, malformed answer).
        usage: what the selector call cost.
        skipped: what the scan left out and why (unreadable, not a file, outside the
            memdir, beyond the 200 newest, ...), in the order the scan met them.
    """

    scope: str
    memory_dir: str
    scanned: tuple[MemoryHeader, ...] = ()
    candidates: tuple[MemoryHeader, ...] = ()
    manifest: str = ""
    called: bool = False
    raw_names: tuple[str, ...] = ()
    raw_output: str | None = None
    valid: tuple[str, ...] = ()
    invalid: tuple[DroppedName, ...] = ()
    error: str | None = None
    usage: Usage = ZERO_USAGE
    skipped: tuple[SkippedFile, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "memory_dir": self.memory_dir,
            "scanned": len(self.scanned),
            "candidates": [header_to_dict(h) for h in self.candidates],
            "manifest": self.manifest,
            "called": self.called,
            "raw_names": list(self.raw_names),
            "raw_output": self.raw_output,
            "valid": list(self.valid),
            "invalid": [d.to_dict() for d in self.invalid],
            "error": self.error,
            "usage": self.usage.to_dict(),
            "skipped": [s.to_dict() for s in self.skipped],
        }


@dataclass(frozen=True)
class PickedMemory:
    """A validated pick, before the merge filters: which file, from which memdir."""

    key: str
    scope: str
    filename: str
    path: str
    mtime_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "scope": self.scope, "filename": self.filename,
                "path": self.path, "mtime_ms": self.mtime_ms}


@dataclass(frozen=True)
class SurfacedRecord:
    """A memory as it reached the model, with its gold-label key."""

    key: str
    scope: str
    filename: str
    memory: SurfacedMemory

    @property
    def path(self) -> str:
        return str(self.memory.path)

    @property
    def content(self) -> str:
        return self.memory.content

    def to_dict(self) -> dict[str, Any]:
        m = self.memory
        return {
            "key": self.key,
            "scope": self.scope,
            "filename": self.filename,
            "path": str(m.path),
            "content": m.content,
            "mtime_ms": m.mtime_ms,
            "header": m.header,
            "truncated": m.truncated,
            "line_limit": m.line_limit,
        }


@dataclass(frozen=True)
class TurnRecord:
    """Everything one human turn did to memory.

    Args:
        turn_id: the scenario's turn id.
        query: the human message.
        repeat: which repeat of the turn this is.
        recall_mode: the session's mode flag (`tengu_moth_copse`).
        compat: the compatibility preset in force (its name).
        skipped: why recall did not run or was discarded (see `SKIP_REASONS`);
            `None` when it ran and was consumed (even if nothing surfaced).
        mentions: agent mentions found in the query and what they resolved to.
        dirs: each memdir searched, in merge order.
        recent_tools: the tools the selector was told about.
        tool_events: the tool uses given for the window before this turn.
        picked: validated picks of all dirs concatenated, before the merge filters.
        dropped: every name or pick that did not surface, with its reason.
        surfaced: the memories the model received, in order.
        discarded: memories that were ready but thrown away (the model used no tool).
        attachment: the `relevant_memories` attachment, exactly as SPEC §2.8, or
            `None` when nothing surfaced.
        system_reminders: the text the main model receives, one per memory.
        surfaced_bytes_before: session surfaced size (UTF-16 units) at the gate.
        surfaced_bytes_after: the same after this turn.
        usage: all selector calls of the turn, summed.
        errors: selector failures, malformed answers, failed reads.
    """

    turn_id: str
    query: str
    repeat: int = 0
    recall_mode: bool = True
    compat: str = "faithful"
    skipped: str | None = None
    mentions: tuple[AgentMention, ...] = ()
    dirs: tuple[DirSearch, ...] = ()
    recent_tools: tuple[str, ...] = ()
    tool_events: tuple[ToolEvent, ...] = ()
    picked: tuple[PickedMemory, ...] = ()
    dropped: tuple[DroppedName, ...] = ()
    surfaced: tuple[SurfacedRecord, ...] = ()
    discarded: tuple[SurfacedRecord, ...] = ()
    attachment: dict[str, Any] | None = None
    system_reminders: tuple[str, ...] = ()
    surfaced_bytes_before: int = 0
    surfaced_bytes_after: int = 0
    usage: Usage = ZERO_USAGE
    errors: tuple[str, ...] = ()

    @property
    def ran(self) -> bool:
        """Whether the recall ran past the gate (the selector may have been called)."""
        return self.skipped is None or self.skipped in ("no-tool-use-discarded",)

    @property
    def candidates(self) -> tuple[MemoryHeader, ...]:
        return tuple(h for d in self.dirs for h in d.candidates)

    @property
    def manifests(self) -> dict[str, str]:
        return {d.scope: d.manifest for d in self.dirs}

    @property
    def selected_names(self) -> tuple[str, ...]:
        """Validated names, all dirs concatenated (duplicates kept)."""
        return tuple(p.filename for p in self.picked)

    @property
    def surfaced_keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.surfaced)

    @property
    def surfaced_paths(self) -> tuple[str, ...]:
        return tuple(s.path for s in self.surfaced)

    @property
    def selector_called(self) -> bool:
        return any(d.called for d in self.dirs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn_id": self.turn_id,
            "query": self.query,
            "repeat": self.repeat,
            "recall_mode": self.recall_mode,
            "compat": self.compat,
            "skipped": self.skipped,
            "mentions": [m.to_dict() for m in self.mentions],
            "dirs": [d.to_dict() for d in self.dirs],
            "recent_tools": list(self.recent_tools),
            "tool_events": [e.to_dict() for e in self.tool_events],
            "picked": [p.to_dict() for p in self.picked],
            "dropped": [d.to_dict() for d in self.dropped],
            "surfaced": [s.to_dict() for s in self.surfaced],
            "discarded": [s.to_dict() for s in self.discarded],
            "attachment": self.attachment,
            "system_reminders": list(self.system_reminders),
            "surfaced_bytes_before": self.surfaced_bytes_before,
            "surfaced_bytes_after": self.surfaced_bytes_after,
            "usage": self.usage.to_dict(),
            "errors": list(self.errors),
        }


def name_repr(name: Any) -> str:
    """How a selector's name is shown in records: strings as-is, anything else as repr."""
    return _name_repr(name)
