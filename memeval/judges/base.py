"""The judge seam: grading what a selector surfaced for one turn."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memeval.labels import GoldLabels
from memeval.usage import ZERO_USAGE, Usage

Verdict = Literal["relevant", "acceptable", "irrelevant", "unscored"]
VERDICTS: tuple[Verdict, ...] = ("relevant", "acceptable", "irrelevant", "unscored")


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a judge may look at for one turn.

    Args:
        turn_id: the scenario turn.
        query: the user's message.
        manifest: the manifest(s) shown to the selector, joined.
        candidates: memory keys of every candidate, in manifest order.
        descriptions: candidate key -> description (for judges that grade recall).
        selected: memory keys that surfaced, in order.
        contents: surfaced key -> content exactly as attached.
        labels: the scenario's gold labels, when it has them.
    """

    turn_id: str
    query: str
    manifest: str
    candidates: tuple[str, ...]
    selected: tuple[str, ...]
    contents: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    labels: GoldLabels | None = None


@dataclass(frozen=True)
class MemoryVerdict:
    """A judge's call on one memory. `unscored` means the judge could not decide."""

    key: str
    verdict: Verdict
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"key": self.key, "verdict": self.verdict}
        return out | {"reason": self.reason} if self.reason else out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryVerdict:
        return cls(str(data["key"]), data["verdict"], str(data.get("reason") or ""))


def _verdicts(items: Iterable[Mapping[str, Any]] | None) -> tuple[MemoryVerdict, ...] | None:
    if items is None:
        return None
    if isinstance(items, tuple) and all(isinstance(v, MemoryVerdict) for v in items):
        return items  # parsed already: readers share one tuple between rows that repeat it
    return tuple(v if isinstance(v, MemoryVerdict) else MemoryVerdict.from_dict(v)
                 for v in items)


@dataclass(frozen=True)
class Judgement:
    """A judge's grading of one turn.

    Args:
        turn_id: the scenario turn.
        judge: the judge's spec string.
        verdicts: one per selected memory, in selection order.
        candidate_verdicts: one per candidate when the judge grades recall, else None.
        relevant: every memory the judge holds relevant for the turn, when it knows
            them all (the gold judge always does); recall is defined only then.
        acceptable: memories the judge holds harmless to surface.
        usage: what judging cost.
        error: why the turn could not be judged; verdicts are then `unscored`.
    """

    turn_id: str
    judge: str
    verdicts: tuple[MemoryVerdict, ...]
    candidate_verdicts: tuple[MemoryVerdict, ...] | None = None
    relevant: tuple[str, ...] | None = None
    acceptable: tuple[str, ...] = ()
    usage: Usage = ZERO_USAGE
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the turn id is left out (the row carries it)."""
        return {
            "judge": self.judge,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "candidate_verdicts": None if self.candidate_verdicts is None
            else [v.to_dict() for v in self.candidate_verdicts],
            "relevant": None if self.relevant is None else list(self.relevant),
            "acceptable": list(self.acceptable),
            "usage": self.usage.to_dict(),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], turn_id: str) -> Judgement:
        relevant = data.get("relevant")
        return cls(
            turn_id=turn_id, judge=str(data["judge"]),
            verdicts=_verdicts(data.get("verdicts")) or (),
            candidate_verdicts=_verdicts(data.get("candidate_verdicts")),
            relevant=None if relevant is None else tuple(relevant),
            acceptable=tuple(data.get("acceptable") or ()),
            usage=Usage.from_dict(data.get("usage")),
            error=data.get("error"),
        )


@runtime_checkable
class Judge(Protocol):
    """Grades a turn. `name` is the spec string it was built from."""

    name: str

    def score(self, request: JudgeRequest) -> Judgement: ...
