"""The judge seam: grading what a selector surfaced for one turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

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


@dataclass(frozen=True)
class ScoredTurn:
    """A judge's grading of one turn.

    Args:
        turn_id: the scenario turn.
        judge: the judge's spec string.
        verdicts: one per selected memory, in selection order.
        candidate_verdicts: one per candidate when the judge grades recall, else None.
        usage: what judging cost.
        error: why the turn could not be judged; verdicts are then `unscored`.
    """

    turn_id: str
    judge: str
    verdicts: tuple[MemoryVerdict, ...]
    candidate_verdicts: tuple[MemoryVerdict, ...] | None = None
    usage: Usage = ZERO_USAGE
    error: str | None = None


@runtime_checkable
class Judge(Protocol):
    """Grades a turn. `name` is the spec string it was built from."""

    name: str

    def score(self, request: JudgeRequest) -> ScoredTurn: ...
