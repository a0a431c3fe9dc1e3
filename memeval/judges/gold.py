"""The gold judge: verdicts read straight from a scenario's labels.

It is the reference the Claude judge is checked against, and the judge every
offline run uses. A turn without labels cannot be graded: its verdicts are
`unscored` and the Judgement says why, rather than guessing "irrelevant".
"""

from __future__ import annotations

from memeval.judges._registry import JUDGES, judge
from memeval.judges.base import Judgement, JudgeRequest, MemoryVerdict, Verdict
from memeval.labels import GOLD


@judge(GOLD)
class GoldJudge:
    """Verdicts from the scenario's gold labels, for the selection and every candidate."""

    inline = True  # compares labels: runs on the event loop

    def __init__(self, candidates: bool = True) -> None:
        """
        Args:
            candidates: also give a verdict for every candidate, so recall can be
                computed from verdicts alone; off saves space in results.
        """
        self.candidates = candidates
        self.name = JUDGES.canonical("gold", candidates=candidates)

    def _verdicts(self, request: JudgeRequest, keys: tuple[str, ...]) -> tuple[MemoryVerdict, ...]:
        labels = request.labels
        assert labels is not None
        out = []
        for key in keys:
            verdict: Verdict = labels.verdict_for(key)  # type: ignore[assignment]
            out.append(MemoryVerdict(key=key, verdict=verdict))  # the label is the reason
        return tuple(out)

    def score(self, request: JudgeRequest) -> Judgement:
        if request.labels is None:
            reason = "no gold labels for this turn"
            return Judgement(
                turn_id=request.turn_id, judge=self.name,
                verdicts=tuple(MemoryVerdict(k, "unscored", reason) for k in request.selected),
                candidate_verdicts=tuple(MemoryVerdict(k, "unscored", reason)
                                         for k in request.candidates) if self.candidates else None,
                error=f"turn {request.turn_id!r} has no gold labels; add 'relevant:' (and "
                      "optionally 'acceptable:') to it in the scenario, or use a model judge",
            )
        return Judgement(
            turn_id=request.turn_id, judge=self.name,
            verdicts=self._verdicts(request, request.selected),
            candidate_verdicts=self._verdicts(request, request.candidates)
            if self.candidates else None,
            relevant=tuple(sorted(request.labels.relevant)),
            acceptable=tuple(sorted(request.labels.acceptable - request.labels.relevant)),
        )
