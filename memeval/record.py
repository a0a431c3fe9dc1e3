"""One row of `results.jsonl`: a turn as one selector played it, with every judge's say.

A `TurnResult` is the unit of a run's results: the turn's identity and labels, what
the selector surfaced, the session's full `TurnRecord` (for drill-down) and one
`Judgement` per judge. Rows are one per turn, never one per judge, so the record is
stored once however many judges ran. Scoring lives in `memeval.metrics`; a row only
holds evidence.

On disk the record is compacted (see `PayloadStore`): paths are made relative to
the session's temporary root, text derivable from other fields is dropped, and the
manifest lines and candidate headers that recur across turns and selectors are
stored once in `payloads.jsonl` and referenced by hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memeval.errors import MemevalError
from memeval.judges.base import Judgement
from memeval.labels import memory_key
from memeval.usage import Usage

SCHEMA_VERSION = 2
_REF = "$"  # a payload reference: {"$": "<hash>"}
_DERIVED = ("attachment", "system_reminders")  # rebuilt from `surfaced` when needed


@dataclass(frozen=True)
class TurnResult:
    """One scenario turn × selector × repeat, and how each judge graded it.

    Args:
        scenario: the scenario id (also the cluster turns are resampled by).
        scenario_path: the scenario file.
        turn_id: the turn's id; `turn_index` its position in the scenario.
        selector: the selector spec.
        repeat: which repeat of the session this is.
        category: the gold label's category; `why` its defence; `tags` extra labels.
        answer: the reference answer, when the source has one.
        query: the user's message.
        relevant: gold-relevant memory keys; `acceptable` gold-harmless ones.
        selected: memory keys that reached the model (or would have, when discarded).
        discarded: the surfaced memories were thrown away (the turn used no tool).
        skipped: why recall did not run, if it did not.
        surfaced_bytes: UTF-8 bytes of what was delivered.
        selector_usage: what the selector's calls cost.
        selector_error: why the selector gave no usable answer, if it did not.
        errors: every problem of the turn that is not a judge's (selector, reads).
        startup_reachable: relevant project memory -> its index line survives startup.
        judgements: judge spec -> its grading of the turn.
        record: the session's `TurnRecord.to_dict()`.
        history: `gold` (played from the state the labels imply) or `own` (the
            selector's own session end to end).
        in_context: memory keys already in the transcript when the turn began.
        earlier_relevant: keys labelled relevant at an earlier turn of the scenario.
        root: the session's temporary folder (not stored; paths are made relative to it).
    """

    scenario: str
    scenario_path: str
    turn_id: str
    turn_index: int
    selector: str
    repeat: int
    category: str
    why: str
    query: str
    relevant: tuple[str, ...]
    acceptable: tuple[str, ...]
    selected: tuple[str, ...]
    discarded: bool = False
    skipped: str | None = None
    surfaced_bytes: int = 0
    selector_usage: Usage = field(default_factory=Usage)
    selector_error: str | None = None
    errors: tuple[str, ...] = ()
    startup_reachable: Mapping[str, bool] = field(default_factory=dict)
    judgements: Mapping[str, Judgement] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    answer: str | None = None
    history: str = "own"
    in_context: tuple[str, ...] = ()
    earlier_relevant: tuple[str, ...] = ()
    root: str = field(default="", compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The row's identity: (scenario, turn, selector, repeat)."""
        return (self.scenario, self.turn_id, self.selector, self.repeat)

    @property
    def unit_key(self) -> tuple[str, str, int]:
        """The session the row belongs to: (scenario, selector, repeat)."""
        return (self.scenario, self.selector, self.repeat)

    @property
    def candidates(self) -> tuple[str, ...]:
        """Memory keys of every candidate shown to the selector, in manifest order."""
        return tuple(memory_key(d["scope"], c["filename"]) for d in self.record.get("dirs") or ()
                     for c in d.get("candidates") or ())

    def to_dict(self, payloads: PayloadStore | None = None) -> dict[str, Any]:
        """JSON-ready; with `payloads`, the record is compacted into it."""
        record = dict(self.record) if payloads is None else compact_record(
            self.record, self.root, payloads)
        return {
            "v": SCHEMA_VERSION,
            "scenario": self.scenario, "scenario_path": self.scenario_path,
            "turn_id": self.turn_id, "turn_index": self.turn_index,
            "selector": self.selector, "repeat": self.repeat,
            "category": self.category, "why": self.why, "tags": list(self.tags),
            "answer": self.answer,
            "query": self.query,
            "relevant": list(self.relevant), "acceptable": list(self.acceptable),
            "selected": list(self.selected),
            "history": self.history, "in_context": list(self.in_context),
            "earlier_relevant": list(self.earlier_relevant),
            "discarded": self.discarded, "skipped": self.skipped,
            "surfaced_bytes": self.surfaced_bytes,
            "selector_usage": self.selector_usage.to_dict(),
            "selector_error": self.selector_error,
            "errors": list(self.errors),
            "startup_reachable": dict(self.startup_reachable),
            "judgements": [j.to_dict() for j in self.judgements.values()],
            "record": record,
        } | ({} if payloads is not None else {"root": self.root})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any],
                  payloads: Mapping[str, Any] | None = None) -> TurnResult:
        """Read a row back; `payloads` resolves the references of a compacted record."""
        version = data.get("v")
        if version != SCHEMA_VERSION:
            raise SchemaMismatch(version)
        turn_id = str(data["turn_id"])
        judgements = [Judgement.from_dict(j, turn_id) for j in data.get("judgements") or ()]
        return cls(
            scenario=str(data["scenario"]), scenario_path=str(data.get("scenario_path", "")),
            turn_id=turn_id, turn_index=int(data.get("turn_index", 0)),
            selector=str(data["selector"]), repeat=int(data.get("repeat", 0)),
            category=str(data.get("category") or "uncategorized"), why=str(data.get("why") or ""),
            tags=tuple(data.get("tags") or ()), query=str(data.get("query") or ""),
            answer=data.get("answer"),
            relevant=tuple(data.get("relevant") or ()),
            acceptable=tuple(data.get("acceptable") or ()),
            selected=tuple(data.get("selected") or ()),
            history=str(data.get("history") or "own"),
            in_context=tuple(data.get("in_context") or ()),
            earlier_relevant=tuple(data.get("earlier_relevant") or ()),
            discarded=bool(data.get("discarded")), skipped=data.get("skipped"),
            surfaced_bytes=int(data.get("surfaced_bytes") or 0),
            selector_usage=Usage(**(data.get("selector_usage") or {})),
            selector_error=data.get("selector_error"),
            errors=tuple(data.get("errors") or ()),
            startup_reachable=dict(data.get("startup_reachable") or {}),
            judgements={j.judge: j for j in judgements},
            record=expand_record(data.get("record") or {}, payloads or {}),
            root=str(data.get("root") or ""),
        )


class SchemaMismatch(MemevalError):
    """A row written by another memeval version's results format."""

    def __init__(self, version: Any) -> None:
        wrote = "a memeval before 0.2 (rows had no version)" if version is None else \
            f"results format v{version}"
        super().__init__(f"written by {wrote}; this memeval reads format v{SCHEMA_VERSION}. "
                         "Rerun the evaluation into a new --out folder.")


# -- compaction -----------------------------------------------------------------------

def payload_hash(value: Any) -> str:
    """Content address of a JSON value (16 hex digits of SHA-256 of its canonical form)."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class PayloadStore:
    """Values stored once by content hash; `pending()` hands out the ones not yet written."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self._known = set(known)
        self._pending: dict[str, Any] = {}

    def ref(self, value: Any) -> dict[str, str]:
        digest = payload_hash(value)
        if digest not in self._known:
            self._known.add(digest)
            self._pending[digest] = value
        return {_REF: digest}

    def pending(self) -> dict[str, Any]:
        """New values since the last call (the writer stores them before the rows)."""
        out, self._pending = self._pending, {}
        return out


def _relative(path: Any, root: str) -> Any:
    if root and isinstance(path, str) and path.startswith(root):
        return path[len(root):].lstrip("/") or "."
    return path


def compact_record(record: Mapping[str, Any], root: str, store: PayloadStore) -> dict[str, Any]:
    """The stored form of a `TurnRecord` dict (see the module docstring)."""
    out = {k: v for k, v in record.items() if k not in _DERIVED}
    dirs = []
    for d in record.get("dirs") or ():
        candidates = [store.ref({k: v for k, v in c.items() if k != "file_path"})
                      for c in d.get("candidates") or ()]
        manifest = d.get("manifest") or ""
        lines = [store.ref(line) for line in manifest.split("\n")] if manifest else []
        dirs.append({**d, "memory_dir": _relative(d.get("memory_dir"), root),
                     "candidates": candidates, "manifest": lines})
    out["dirs"] = dirs
    for name in ("surfaced", "discarded", "picked"):
        out[name] = [{**m, "path": _relative(m.get("path"), root)} for m in record.get(name) or ()]
    return out


def _resolve(value: Any, payloads: Mapping[str, Any]) -> Any:
    if isinstance(value, Mapping) and set(value) == {_REF}:
        try:
            return payloads[value[_REF]]
        except KeyError:
            raise MemevalError(f"payload {value[_REF]} is missing from payloads.jsonl; the run "
                               "folder is incomplete. Rerun the same command to repair it.") \
                from None
    return value


def expand_record(record: Mapping[str, Any], payloads: Mapping[str, Any]) -> dict[str, Any]:
    """Inverse of `compact_record`, except for the paths (left relative to the root)."""
    out = dict(record)
    dirs = []
    for d in record.get("dirs") or ():
        manifest = d.get("manifest")
        if isinstance(manifest, list):
            manifest = "\n".join(_resolve(line, payloads) for line in manifest)
        candidates = []
        for c in d.get("candidates") or ():
            header = dict(_resolve(c, payloads))
            header.setdefault("file_path", f"{d.get('memory_dir', '')}/{header['filename']}")
            candidates.append(header)
        dirs.append({**d, "manifest": manifest or "", "candidates": candidates})
    out["dirs"] = dirs
    return out
