"""The selector seam: what a memory selector is given and what it must answer.

A selector plays the role of Claude Code's side query (SPEC §2.5): from a query and
a manifest of one memdir it names the memories worth attaching. The session, not the
selector, validates those names, caps them and reads the files, so a selector can
never widen what is surfaced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memeval.usage import ZERO_USAGE, Usage

if TYPE_CHECKING:
    from memeval.memdir import MemoryHeader


@dataclass(frozen=True)
class SelectionRequest:
    """One side query against one memdir.

    Args:
        query: the user's message for this turn.
        manifest: the manifest text exactly as the model would see it.
        candidates: the headers behind the manifest, newest first.
        memory_dir: the memdir the candidates come from.
        scope: `"project"` or the agent type whose memdir this is.
        recent_tools: successful tools since the previous human turn, most recent first.
        already_surfaced: absolute paths surfaced earlier in the session.
        turn_id: the scenario turn this request serves, for caching and reports.
        repeat: which repeat of the turn this is (0 for the first), so caches keep
            repeats apart.
        scenario: the scenario's id, so seeded selectors draw a stream per scenario
            and turn (turn ids repeat across scenarios).
    """

    query: str
    manifest: str
    candidates: tuple[MemoryHeader, ...]
    memory_dir: Path
    scope: str = "project"
    recent_tools: tuple[str, ...] = ()
    already_surfaced: frozenset[str] = frozenset()
    turn_id: str = ""
    repeat: int = 0
    scenario: str = ""

    @property
    def filenames(self) -> tuple[str, ...]:
        return tuple(h.filename for h in self.candidates)


@dataclass(frozen=True)
class SelectionResult:
    """A selector's answer.

    Args:
        names: the names the selector returned, in its order, unvalidated (they may
            be unknown, duplicated or not even strings; the session decides).
        raw_output: the model's text (or a selector's own trace), for reports.
        usage: tokens, cost and latency of producing the answer.
        error: why no answer could be had; `None` on success. An error is never an
            empty selection: `names` is then empty *and* `error` says why.
        reasons: optional per-name explanation, for reports.
    """

    names: tuple[Any, ...] = ()
    raw_output: str | None = None
    usage: Usage = ZERO_USAGE
    error: str | None = None
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def failure(cls, error: str, *, raw_output: str | None = None,
                usage: Usage = ZERO_USAGE) -> SelectionResult:
        return cls(names=(), raw_output=raw_output, usage=usage, error=error)


@runtime_checkable
class Selector(Protocol):
    """Anything that can pick memories. `name` is the spec string it was built from."""

    name: str

    def select(self, request: SelectionRequest) -> SelectionResult: ...

    async def aselect(self, request: SelectionRequest) -> SelectionResult: ...


class SyncSelector:
    """Base for selectors that compute locally: `aselect` runs `select` in a thread.

    `inline = True` says `select` is quick, pure computation (no I/O, no waiting):
    the runner then calls it on its event loop, which is faster than a thread hop.
    Leave it False for a selector that calls a service or reads much: it runs in a
    thread, so other units' calls go on meanwhile.
    """

    name: str = "selector"
    inline: bool = False

    def select(self, request: SelectionRequest) -> SelectionResult:
        raise NotImplementedError

    async def aselect(self, request: SelectionRequest) -> SelectionResult:
        return await asyncio.to_thread(self.select, request)


def reset_selector(selector: object) -> None:
    """Make a selector forget earlier turns, if it keeps any (it has `reset`), as a
    compaction does."""
    reset = getattr(selector, "reset", None)
    if callable(reset):
        reset()


def _validated(selector: Selector, result: object) -> SelectionResult:
    """What a selector returned, or a recorded failure saying why it is not an answer."""
    if not isinstance(result, SelectionResult):
        return SelectionResult.failure(
            f"selector {getattr(selector, 'name', selector)!r} returned "
            f"{type(result).__name__}, expected SelectionResult"
        )
    if not isinstance(result.names, Sequence) or isinstance(result.names, str | bytes):
        return SelectionResult.failure(
            f"selector returned names of type {type(result.names).__name__}, expected a list",
            raw_output=result.raw_output, usage=result.usage,
        )
    return result


def safe_select(selector: Selector, request: SelectionRequest) -> SelectionResult:
    """Call a selector, turning any exception into a recorded error (never an empty pick)."""
    try:
        result = selector.select(request)
    except Exception as exc:  # a selector bug must not end the run; it is recorded
        return SelectionResult.failure(f"{type(exc).__name__}: {exc}")
    return _validated(selector, result)


async def safe_aselect(selector: Selector, request: SelectionRequest) -> SelectionResult:
    """Async twin of `safe_select`, with the same checks."""
    try:
        result = await selector.aselect(request)
    except Exception as exc:  # recorded, as in safe_select
        return SelectionResult.failure(f"{type(exc).__name__}: {exc}")
    return _validated(selector, result)
