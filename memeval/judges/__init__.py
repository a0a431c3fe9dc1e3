"""Judges grade what a selector surfaced, and the registry that builds them from specs.

Example:
    >>> from memeval.judges import resolve_judge
    >>> resolve_judge("gold").name
    'gold'

Built in: `gold` (from the scenario's labels) and `claude:<model>` (loaded on first
use). Third-party judges register under the entry-point group `memeval.judges`.
How far two judges agree is scored in `memeval.scoring.agreement`.
"""

from memeval.judges._registry import (
    ENTRY_POINT_GROUP,
    JUDGES,
    available_judges,
    judge,
    judge_params,
    resolve_judge,
)
from memeval.judges.base import (
    VERDICTS,
    Judge,
    Judgement,
    JudgeRequest,
    MemoryVerdict,
    Verdict,
)
from memeval.judges.gold import GoldJudge

__all__ = [
    "ENTRY_POINT_GROUP",
    "JUDGES",
    "VERDICTS",
    "GoldJudge",
    "Judge",
    "JudgeRequest",
    "Judgement",
    "MemoryVerdict",
    "Verdict",
    "available_judges",
    "judge",
    "judge_params",
    "resolve_judge",
]
