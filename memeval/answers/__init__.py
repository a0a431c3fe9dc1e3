"""The answer stage: does the selector's choice make the agent answer right?

`memeval run --answerer SPEC` puts each turn that has a gold answer (or whose right
answer is to decline) to an answerer that sees what the agent would see at that
turn; `--answer-judge SPEC` grades the answers correct or incorrect. Answerers:
`extractive` (offline, deterministic), `claude:<model>`, `openai:<model>?base_url=…`;
answer judges: `claude:<model>`, `openai:<model>?base_url=…`. Spec parameters are
the prompted selector's (`prompt`, `max_tokens`, `temperature`, `base_url`, ...).
The scores are `memeval.scoring.answer_metrics`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memeval._spec import Registry, lazy_factory
from memeval.answers._extractive import DECLINE, ExtractiveAnswerer
from memeval.answers._request import AnswerRequest, answer_request, answers_turn
from memeval.answers._stage import AnswerStage

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

ANSWERERS: Registry[Any] = Registry(kind="answerer", group="memeval.answerers")
ANSWER_JUDGES: Registry[Any] = Registry(kind="answer judge", group="memeval.answer_judges")

ANSWERERS.register("extractive", ExtractiveAnswerer,
                   summary="the context's sentence that best matches the question (offline)")
for _registry, _kind, _classes in ((ANSWERERS, "answerer", ("ModelAnswerer", "OpenAIAnswerer")),
                                   (ANSWER_JUDGES, "answer judge",
                                    ("AnswerJudge", "OpenAIAnswerJudge"))):
    for _name, _class in zip(("claude", "openai"), _classes, strict=True):
        _registry.register(_name, arg="model", origin="lazy",
                           loader=lazy_factory(_registry, _name, "memeval.answers._model",
                                               _class),
                           summary=f"a model as the {_kind} ({_name} transport)")


def _built(registry: Registry[Any], spec: str, models: ModelAccess | None) -> Any:
    built = registry.resolve(spec)
    if models is not None:
        from memeval.llm.access import connect

        connect(built, models)
    return built


def resolve_answerer(spec: str, *, models: ModelAccess | None = None) -> Any:
    """The answerer a spec names (`extractive`, `claude:<model>`, `openai:<model>?…`)."""
    return _built(ANSWERERS, spec, models)


def resolve_answer_judge(spec: str, *, models: ModelAccess | None = None) -> Any:
    """The answer judge a spec names (`claude:<model>`, `openai:<model>?base_url=…`)."""
    return _built(ANSWER_JUDGES, spec, models)


def answer_stage(answerer: str, judge: str | None = None, *,
                 models: ModelAccess | None = None) -> AnswerStage:
    """The stage a run's `--answerer` and `--answer-judge` name."""
    return AnswerStage(resolve_answerer(answerer, models=models),
                       None if judge is None else resolve_answer_judge(judge, models=models))


__all__ = ["ANSWERERS", "ANSWER_JUDGES", "DECLINE", "AnswerRequest", "AnswerStage",
           "ExtractiveAnswerer", "answer_request", "answer_stage", "answers_turn",
           "resolve_answer_judge", "resolve_answerer"]
