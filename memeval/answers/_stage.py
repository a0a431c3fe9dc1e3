"""The answer stage: the answerer answers a turn, the answer judge (if any) grades it.

A failure is recorded on the answer (`error`, `judge_error`), never raised into the
run and never scored: an answer that could not be given has no F1, and a verdict
that could not be given is no verdict.
"""

from __future__ import annotations

from typing import Any

from memeval.answers._extractive import ExtractiveAnswerer
from memeval.answers._model import AnswerJudge, ModelAnswerer, parse_verdict
from memeval.answers._request import AnswerRequest
from memeval.log import GivenAnswer

Answerer = ExtractiveAnswerer | ModelAnswerer


class AnswerStage:
    """An answerer and, optionally, an answer judge, as a run uses them.

    Args:
        answerer: gives the answer (`extractive`, or a model).
        judge: grades it correct or incorrect; None leaves `answer_correct` undefined.
    """

    def __init__(self, answerer: Answerer, judge: AnswerJudge | None = None) -> None:
        self.answerer, self.judge = answerer, judge

    @property
    def components(self) -> list[Any]:
        """What calls models, for the run's model access and config.json."""
        return [c for c in (self.answerer, self.judge) if c is not None]

    async def answer(self, request: AnswerRequest) -> GivenAnswer:
        answerer = self.answerer
        if isinstance(answerer, ExtractiveAnswerer):
            given = GivenAnswer(answerer=answerer.name, text=answerer.answer(request))
        else:
            response = await answerer.aanswer(request)
            given = GivenAnswer(
                answerer=answerer.name, prompt_hash=answerer.prompt_hash, usage=response.usage,
                text=response.text.strip() if response.ok else None,
                error=None if response.ok else f"answerer: {response.error}")
        if self.judge is None or given.text is None:
            return given
        verdict = await self.judge.ajudge(request, given.text)
        found, reason = parse_verdict(verdict.text) if verdict.ok else (None, "")
        return GivenAnswer(
            **{**given.__dict__, "judge": self.judge.name, "judge_usage": verdict.usage,
               "verdict": found, "reason": reason if found else "",
               "judge_error": None if found else
               f"answer judge: {verdict.error or reason}"})

    def config(self) -> dict[str, Any]:
        """config.json's record of the stage: specs, models, prompts and their hashes."""
        def describe(component: Any) -> dict[str, Any]:
            info: dict[str, Any] = {"name": component.name}
            for attr in ("model", "prompt_name", "prompt_hash"):
                value = getattr(component, attr, None)
                if value is not None:
                    info[attr] = value
            endpoint = getattr(component, "endpoint_config", None)
            if callable(endpoint):
                info.update(endpoint())
            return info

        return {"answerer": describe(self.answerer),
                "answer_judge": None if self.judge is None else describe(self.judge)}


__all__ = ["AnswerRequest", "AnswerStage", "Answerer"]
