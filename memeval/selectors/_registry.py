"""The selector registry: spec string → Selector.

Built-in selectors register with `@selector("name")`; the Claude selector is loaded
only when a `claude` spec is resolved (it pulls in the model door), and installed
packages add theirs under the entry-point group `memeval.selectors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memeval._spec import ParamInfo, Registry, lazy_factory
from memeval.selectors.base import Selector

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_POINT_GROUP = "memeval.selectors"

SELECTORS: Registry[Selector] = Registry(kind="selector", group=ENTRY_POINT_GROUP,
                                         protocol=Selector)


def selector(name: str, *, arg: str | None = None) -> Callable[[F], F]:
    """Register a selector class or factory under a spec name.

    Args:
        name: what users write in a spec (`bm25`).
        arg: the keyword parameter that receives the text after `name:`
            (`claude:<model>` passes `model=`).

    Example:
        >>> @selector("first")
        ... class First(SyncSelector):
        ...     def __init__(self, k: int = 1): ...
    """
    return SELECTORS.decorator(name, arg=arg)  # type: ignore[return-value]


def resolve_selector(spec: str, *, models: ModelAccess | None = None) -> Selector:
    """Build the selector a spec string names; `.name` is its canonical spec.

    Args:
        spec: `name[:arg][?key=value&...]`, e.g. `bm25?k=3&threshold=0.5`,
            `recency?k=3`, `random?seed=7`, `claude:claude-sonnet-4-6?prompt=conservative`.
        models: the run's model access, handed to a component that calls models.

    Raises:
        MemevalError: unknown name, unknown parameter or a value of the wrong type;
            the message names the spec and the valid parameters.
    """
    built = SELECTORS.resolve(spec)
    if models is not None:  # only a run that calls models has built one
        from memeval.llm.access import connect

        connect(built, models)
    return built


def available_selectors() -> dict[str, str]:
    """Every selector name that `resolve_selector` accepts → a one-line summary."""
    return SELECTORS.available()


def selector_params(name: str) -> tuple[ParamInfo, ...]:
    """The spec parameters of selector `name`, with types and defaults."""
    return SELECTORS.params(name)


# The Claude selector pulls in the model door; import it only when a spec names it.
_load_claude = lazy_factory(SELECTORS, "claude", "memeval.selectors.claude", "ClaudeSelector")

SELECTORS.register("claude", arg="model", loader=_load_claude,
                   summary="Claude side query (needs an API key or a cassette)",
                   origin="lazy")

_load_openai = lazy_factory(SELECTORS, "openai", "memeval.selectors.claude", "OpenAISelector")

SELECTORS.register("openai", arg="model", loader=_load_openai,
                   summary="the same side query on any OpenAI-compatible server "
                   "(needs memeval[openai])", origin="lazy")
