"""What the agent answered at a turn, as a row keeps it (`memeval run --answerer`).

The answer stage is optional: a row without it has no `answered` key on disk, so
folders written before it read as they did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memeval.usage import Usage

Verdict = Literal["correct", "incorrect"]


@dataclass(frozen=True)
class GivenAnswer:
    """The answerer's answer to one turn and, when an answer judge ran, its verdict.

    Args:
        answerer: the answerer spec; `text` its answer (None when it failed).
        prompt_hash: hash of the rendered prompt template (None for `extractive`).
        usage: what the answer cost; `error` why there is no answer, if so.
        verdict: the answer judge's `correct`/`incorrect` (None: no judge, or it failed).
        reason: the judge's one-line reason; `judge` its spec; `judge_usage`,
            `judge_error` what it cost and why it gave no verdict.
    """

    answerer: str
    text: str | None = None
    prompt_hash: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    verdict: Verdict | None = None
    reason: str = ""
    judge: str | None = None
    judge_usage: Usage = field(default_factory=Usage)
    judge_error: str | None = None

    @property
    def correct(self) -> float | None:
        """1.0 / 0.0 by the judge's verdict; None when there is none."""
        return None if self.verdict is None else float(self.verdict == "correct")

    def to_dict(self) -> dict[str, Any]:
        return {"answerer": self.answerer, "text": self.text, "prompt_hash": self.prompt_hash,
                "usage": self.usage.to_dict(), "error": self.error, "verdict": self.verdict,
                "reason": self.reason, "judge": self.judge,
                "judge_usage": self.judge_usage.to_dict(), "judge_error": self.judge_error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GivenAnswer:
        verdict = data.get("verdict")
        return cls(answerer=str(data.get("answerer") or ""), text=data.get("text"),
                   prompt_hash=data.get("prompt_hash"), usage=Usage.from_dict(data.get("usage")),
                   error=data.get("error"),
                   verdict=verdict if verdict in ("correct", "incorrect") else None,
                   reason=str(data.get("reason") or ""), judge=data.get("judge"),
                   judge_usage=Usage.from_dict(data.get("judge_usage")),
                   judge_error=data.get("judge_error"))
