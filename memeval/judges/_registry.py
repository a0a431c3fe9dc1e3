"""The judge registry: spec string → Judge.

`gold` is built in; `claude:<model>` is imported on first use (it needs the model
door); installed packages add judges under the entry-point group `memeval.judges`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memeval._spec import ParamInfo, Registry, lazy_factory
from memeval.judges.base import Judge

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_POINT_GROUP = "memeval.judges"

JUDGES: Registry[Judge] = Registry(kind="judge", group=ENTRY_POINT_GROUP, protocol=Judge)


def judge(name: str, *, arg: str | None = None) -> Callable[[F], F]:
    """Register a judge class or factory under a spec name.

    Args:
        name: what users write in a spec (`gold`).
        arg: the keyword parameter that receives the text after `name:`.
    """
    return JUDGES.decorator(name, arg=arg)  # type: ignore[return-value]


def resolve_judge(spec: str, *, models: ModelAccess | None = None) -> Judge:
    """Build the judge a spec string names; `.name` is its canonical spec.

    Args:
        spec: `name[:arg][?key=value&...]`, e.g. `gold`, `claude:claude-sonnet-4-6?order=both`.
        models: the run's model access, handed to a component that calls models.

    Raises:
        MemevalError: unknown name, unknown parameter or a value of the wrong type.
    """
    built = JUDGES.resolve(spec)
    if models is not None:  # only a run that calls models has built one
        from memeval.llm.access import connect

        connect(built, models)
    return built


def available_judges() -> dict[str, str]:
    """Every judge name that `resolve_judge` accepts → a one-line summary."""
    return JUDGES.available()


def judge_params(name: str) -> tuple[ParamInfo, ...]:
    """The spec parameters of judge `name`, with types and defaults."""
    return JUDGES.params(name)


_load_claude = lazy_factory(JUDGES, "claude", "memeval.judges.claude", "ClaudeJudge")

JUDGES.register("claude", arg="model", loader=_load_claude,
                summary="Claude grades each surfaced memory (needs an API key or a cassette)",
                origin="lazy")

_load_openai = lazy_factory(JUDGES, "openai", "memeval.judges.claude", "OpenAIJudge")

JUDGES.register("openai", arg="model", loader=_load_openai,
                summary="the same grading on any OpenAI-compatible server "
                "(needs memeval[openai])", origin="lazy")
