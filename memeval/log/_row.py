"""One row of `results.jsonl`: a turn as one selector played it, with every judge's say.

A `TurnResult` is the unit of a run's results: the turn's identity and labels, what
the selector surfaced, the session's full record of the turn (for drill-down) and one
`Judgement` per judge. Rows are one per turn, never one per judge, so the record is
stored once however many judges ran. Scoring lives in `memeval.scoring.metrics`; a row
only holds evidence. How its large values are stored is `memeval.log._payloads`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memeval.errors import MemevalError
from memeval.judges.base import Judgement
from memeval.log._answer import GivenAnswer
from memeval.log._payloads import (
    PayloadStore,
    Resolver,
    as_resolver,
    compact_judgement,
    compact_record,
    expand_judgement,
    expand_record,
)
from memeval.log._turn import RecordedTurn
from memeval.usage import Usage

# v3 stores every large repeated value by reference. Earlier formats are refused with
# the fix (rerun, or read with the memeval that wrote them): they were days old.
SCHEMA_VERSION = 3
READABLE_VERSIONS = (3,)
_ROW_LISTS = ("earlier_relevant", "in_context")  # grow with the scenario: by reference


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
        record: what the session did in the turn (`RecordedTurn`).
        history: `gold` (played from the state the labels imply) or `own` (the
            selector's own session end to end).
        in_context: memory keys already in the transcript when the turn began.
        earlier_relevant: keys labelled relevant at an earlier turn of the scenario.
        answered: what the agent answered with what surfaced (`--answerer`), if asked.
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
    record: RecordedTurn = field(default_factory=RecordedTurn)
    tags: tuple[str, ...] = ()
    answer: str | None = None
    history: str = "own"
    in_context: tuple[str, ...] = ()
    earlier_relevant: tuple[str, ...] = ()
    answered: GivenAnswer | None = None
    root: str = field(default="", compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The row's identity: (scenario, turn, selector, repeat)."""
        return (self.scenario, self.turn_id, self.selector, self.repeat)

    @property
    def turn_key(self) -> tuple[str, str, int, int]:
        """(scenario, selector, repeat, turn index): the turn resume and merge go by."""
        return (self.scenario, self.selector, self.repeat, self.turn_index)

    @property
    def label_judge(self) -> str | None:
        """The first of the row's judges that states its labels (the gold judge on a
        labelled turn), or None."""
        return next((name for name, j in self.judgements.items() if j.relevant is not None),
                    None)

    @property
    def session_key(self) -> tuple[str, str, int]:
        """The session the row belongs to: (scenario, selector, repeat)."""
        return (self.scenario, self.selector, self.repeat)

    @property
    def candidates(self) -> tuple[str, ...]:
        """Memory keys of every candidate shown to the selector, in manifest order."""
        return tuple(key for d in self.record.dirs for key in d.candidate_keys)

    def to_dict(self, payloads: PayloadStore | None = None) -> dict[str, Any]:
        """JSON-ready; with `payloads`, the record is compacted into it."""
        record = self.record.to_dict() if payloads is None else compact_record(
            self.record.to_dict(), self.root, payloads)
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
            "history": self.history,
            **{name: list(getattr(self, name)) if payloads is None
               else payloads.maybe_ref(list(getattr(self, name))) for name in _ROW_LISTS},
            "discarded": self.discarded, "skipped": self.skipped,
            "surfaced_bytes": self.surfaced_bytes,
            "selector_usage": self.selector_usage.to_dict(),
            "selector_error": self.selector_error,
            "errors": list(self.errors),
            "startup_reachable": dict(self.startup_reachable),
            "judgements": [j.to_dict() if payloads is None else
                           compact_judgement(j.to_dict(), payloads)
                           for j in self.judgements.values()],
            "record": record,
            **({} if self.answered is None else {"answered": self.answered.to_dict()}),
        } | ({} if payloads is not None else {"root": self.root})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any],
                  payloads: Mapping[str, Any] | Resolver | None = None, *,
                  searches: bool = True) -> TurnResult:
        """Read a row back; `payloads` resolves the references of a compacted record
        (`searches=False`: without the record's memdir searches, see `expand_record`)."""
        version = data.get("v")
        if version not in READABLE_VERSIONS:
            raise SchemaMismatch(version)
        turn_id = str(data["turn_id"])
        resolver = as_resolver(payloads)
        judgements = [expand_judgement(j, turn_id, resolver) for j in data.get("judgements") or ()]
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
            in_context=tuple(resolver.resolve(data.get("in_context")) or ()),
            earlier_relevant=tuple(resolver.resolve(data.get("earlier_relevant")) or ()),
            discarded=bool(data.get("discarded")), skipped=data.get("skipped"),
            surfaced_bytes=int(data.get("surfaced_bytes") or 0),
            selector_usage=Usage.from_dict(data.get("selector_usage")),
            selector_error=data.get("selector_error"),
            errors=tuple(data.get("errors") or ()),
            startup_reachable=dict(data.get("startup_reachable") or {}),
            judgements={j.judge: j for j in judgements},
            record=RecordedTurn.from_dict(
                expand_record(data.get("record") or {}, resolver, searches=searches)),
            root=str(data.get("root") or ""),
            answered=None if data.get("answered") is None
            else GivenAnswer.from_dict(data["answered"]),
        )


class SchemaMismatch(MemevalError):
    """A row written by another memeval version's results format."""

    def __init__(self, version: Any) -> None:
        wrote = "a memeval before 0.2 (rows had no version)" if version is None else \
            f"results format v{version}"
        readable = " and ".join(f"v{v}" for v in READABLE_VERSIONS)
        super().__init__(f"written by {wrote}; this memeval reads formats {readable}. "
                         "Rerun the evaluation into a new --out folder (or read it with "
                         "the memeval that wrote it).")


