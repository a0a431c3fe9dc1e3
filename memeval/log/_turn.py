"""The session's record of a turn as a row holds it: typed, read-only, JSON both ways.

`memeval.session.TurnRecord` is what a Session produces; `RecordedTurn` is what
a row keeps of it and what every reader (report, metrics, the pytest plugin) reads
back, by attribute rather than by string key. Text derivable from the rest (the
attachment, the system reminders) is not kept. Small records that are only shown
(tool events, mentions, drop reasons, candidate headers) stay JSON mappings; keys
this version does not know are kept in `extra`, so a row reads and writes back
whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memeval.labels import memory_key
from memeval.usage import Usage

Json = Mapping[str, Any]  # a small JSON record, as stored


def _records(value: Any) -> tuple[Json, ...]:
    return tuple(value or ())


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(value or ())


@dataclass(frozen=True)
class StoredMemory:
    """A memory that reached the model (or would have, when the turn discarded it).

    Args:
        key: its gold-label key (`scope:filename`).
        scope: the memdir it came from; `filename` its name there.
        path: its file (relative to the session's root once stored).
        content: the text surfaced; `header` the reminder's first line.
        mtime_ms: its modification time; `truncated`/`line_limit` whether and where
            the surfacing read cut it.
    """

    key: str
    scope: str = ""
    filename: str = ""
    path: str = ""
    content: str = ""
    mtime_ms: float | None = None
    header: str = ""
    truncated: bool = False
    line_limit: int | None = None
    extra: Json = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Json) -> StoredMemory:
        known = {k: data[k] for k in _MEMORY_FIELDS if k in data}
        return cls(**known, extra={k: v for k, v in data.items() if k not in _MEMORY_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, **{k: getattr(self, k) for k in _MEMORY_FIELDS}}


_MEMORY_FIELDS = ("key", "scope", "filename", "path", "content", "mtime_ms", "header",
                  "truncated", "line_limit")


@dataclass(frozen=True)
class SearchedDir:
    """One memdir searched in a turn: what the selector was shown and what it said.

    Args:
        scope: `project` or the agent type whose memdir this is.
        memory_dir: the memdir (relative to the session's root once stored).
        scanned: how many headers the scan returned.
        candidates: the headers shown, in manifest order (JSON: filename,
            file_path, mtime_ms, description, type).
        manifest: the manifest text the selector saw.
        called: whether the selector was asked.
        raw_names, raw_output: the selector's answer as given; `valid` the names kept,
            `invalid` the names dropped with their reasons.
        error: why the selector gave no answer, if it did not.
        usage: what its call cost.
        skipped: files the scan left out, and why.
    """

    scope: str
    memory_dir: str = ""
    scanned: int | None = None
    candidates: tuple[Json, ...] = ()
    manifest: str = ""
    called: bool = False
    raw_names: tuple[str, ...] = ()
    raw_output: str | None = None
    valid: tuple[str, ...] = ()
    invalid: tuple[Json, ...] = ()
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    skipped: tuple[Json, ...] = ()
    extra: Json = field(default_factory=dict)

    @property
    def candidate_keys(self) -> tuple[str, ...]:
        return tuple(memory_key(self.scope, c["filename"]) for c in self.candidates)

    @classmethod
    def from_dict(cls, data: Json) -> SearchedDir:
        return cls(
            scope=str(data.get("scope", "project")),
            memory_dir=data.get("memory_dir", ""),
            scanned=data.get("scanned"),
            candidates=_records(data.get("candidates")),
            manifest=data.get("manifest") or "",
            called=bool(data.get("called")),
            raw_names=_texts(data.get("raw_names")),
            raw_output=data.get("raw_output"),
            valid=_texts(data.get("valid")),
            invalid=_records(data.get("invalid")),
            error=data.get("error"),
            usage=Usage.from_dict(data.get("usage")),
            skipped=_records(data.get("skipped")),
            extra={k: v for k, v in data.items() if k not in _DIR_FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.extra,
            "scope": self.scope, "memory_dir": self.memory_dir, "scanned": self.scanned,
            "candidates": list(self.candidates), "manifest": self.manifest,
            "called": self.called, "raw_names": list(self.raw_names),
            "raw_output": self.raw_output, "valid": list(self.valid),
            "invalid": list(self.invalid), "error": self.error,
            "usage": self.usage.to_dict(), "skipped": list(self.skipped),
        }


_DIR_FIELDS = frozenset({"scope", "memory_dir", "scanned", "candidates", "manifest", "called",
                         "raw_names", "raw_output", "valid", "invalid", "error", "usage",
                         "skipped"})


@dataclass(frozen=True)
class RecordedTurn:
    """What one turn did to memory, as a row keeps it (see `memeval.session.TurnRecord`).

    Args:
        turn_id, query, repeat: the turn.
        recall_mode, compat: the session's mode flag and compatibility preset.
        skipped: why recall did not run or was discarded, if so.
        mentions: agent mentions found in the query (JSON records).
        dirs: each memdir searched, in merge order.
        recent_tools: the tools the selector was told about; `tool_events` the tool
            uses given before the turn (JSON records).
        picked: validated picks before the merge filters; `dropped` every name or pick
            that did not surface, with its reason (JSON records).
        surfaced: the memories the model received; `discarded` those thrown away.
        surfaced_bytes_before, surfaced_bytes_after: the session's surfaced size.
        usage: every selector call of the turn, summed.
        errors: selector failures, malformed answers, failed reads.
    """

    turn_id: str = ""
    query: str = ""
    repeat: int = 0
    recall_mode: bool = True
    compat: str = "faithful"
    skipped: str | None = None
    mentions: tuple[Json, ...] = ()
    dirs: tuple[SearchedDir, ...] = ()
    recent_tools: tuple[str, ...] = ()
    tool_events: tuple[Json, ...] = ()
    picked: tuple[Json, ...] = ()
    dropped: tuple[Json, ...] = ()
    surfaced: tuple[StoredMemory, ...] = ()
    discarded: tuple[StoredMemory, ...] = ()
    surfaced_bytes_before: int = 0
    surfaced_bytes_after: int = 0
    usage: Usage = field(default_factory=Usage)
    errors: tuple[str, ...] = ()
    extra: Json = field(default_factory=dict)

    @property
    def delivered(self) -> tuple[StoredMemory, ...]:
        """What reached the model, or what would have on a discarded turn."""
        return self.surfaced or self.discarded

    @classmethod
    def from_dict(cls, data: Json) -> RecordedTurn:
        """A record as `TurnRecord.to_dict()` (or a stored row, expanded) spells it."""
        return cls(
            turn_id=str(data.get("turn_id", "")), query=str(data.get("query", "")),
            repeat=int(data.get("repeat", 0) or 0),
            recall_mode=bool(data.get("recall_mode", True)),
            compat=str(data.get("compat", "faithful")), skipped=data.get("skipped"),
            mentions=_records(data.get("mentions")),
            dirs=tuple(SearchedDir.from_dict(d) for d in data.get("dirs") or ()),
            recent_tools=_texts(data.get("recent_tools")),
            tool_events=_records(data.get("tool_events")),
            picked=_records(data.get("picked")), dropped=_records(data.get("dropped")),
            surfaced=tuple(StoredMemory.from_dict(m) for m in data.get("surfaced") or ()),
            discarded=tuple(StoredMemory.from_dict(m) for m in data.get("discarded") or ()),
            surfaced_bytes_before=int(data.get("surfaced_bytes_before", 0) or 0),
            surfaced_bytes_after=int(data.get("surfaced_bytes_after", 0) or 0),
            usage=Usage.from_dict(data.get("usage")),
            errors=_texts(data.get("errors")),
            extra={k: v for k, v in data.items() if k not in _TURN_FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as `TurnRecord.to_dict()` spells it less the derived text."""
        return {
            **self.extra,
            "turn_id": self.turn_id, "query": self.query, "repeat": self.repeat,
            "recall_mode": self.recall_mode, "compat": self.compat, "skipped": self.skipped,
            "mentions": list(self.mentions), "dirs": [d.to_dict() for d in self.dirs],
            "recent_tools": list(self.recent_tools), "tool_events": list(self.tool_events),
            "picked": list(self.picked), "dropped": list(self.dropped),
            "surfaced": [m.to_dict() for m in self.surfaced],
            "discarded": [m.to_dict() for m in self.discarded],
            "surfaced_bytes_before": self.surfaced_bytes_before,
            "surfaced_bytes_after": self.surfaced_bytes_after,
            "usage": self.usage.to_dict(), "errors": list(self.errors),
        }


# Keys of `TurnRecord.to_dict()` a row does not keep: rebuilt from `surfaced` when needed.
DERIVED = frozenset({"attachment", "system_reminders"})
_TURN_FIELDS = frozenset({"turn_id", "query", "repeat", "recall_mode", "compat", "skipped",
                          "mentions", "dirs", "recent_tools", "tool_events", "picked",
                          "dropped", "surfaced", "discarded", "surfaced_bytes_before",
                          "surfaced_bytes_after", "usage", "errors"}) | DERIVED
