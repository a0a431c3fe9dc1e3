"""Reference points every other selector is read against.

`none` is the floor (recall 0 wherever something is relevant, a perfect abstainer
otherwise), `oracle` the ceiling (it reads the gold labels), and `recency` and
`random` are the strategies a model-free system could ship: if a model-backed
selector does not beat them, its cost buys nothing. `all` is no strategy: it names
every candidate and lets the session's cap decide, which exercises the cap and the
merge (invariant 2); what surfaces is the five newest, the same as `recency`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from memeval.errors import MemevalError
from memeval.memdir import MAX_SURFACED_PER_TURN
from memeval.selectors._registry import SELECTORS, selector
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector

CAP = MAX_SURFACED_PER_TURN  # the session keeps no more


def _check_k(name: str, k: int) -> int:
    if k < 0:
        raise MemevalError(f"{name}: k={k} must be 0 or more")
    return k


@selector("none")
class NoneSelector(SyncSelector):
    """Never picks anything: the floor, and a perfect score on turns needing nothing."""

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self) -> None:
        self.name = SELECTORS.canonical("none")

    def select(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult(names=(), raw_output="none: abstains always")


@selector("all")
class AllSelector(SyncSelector):
    """Names every candidate; the session's cap keeps the first five (the newest).

    Not a baseline to beat (it surfaces exactly what `recency` surfaces), but the way
    to see the cap and the merge at work on a selector that asks for too much.
    """

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self) -> None:
        self.name = SELECTORS.canonical("all")

    def select(self, request: SelectionRequest) -> SelectionResult:
        names = request.filenames
        return SelectionResult(names=names, raw_output=f"all: every one of {len(names)}")


@selector("recency")
class RecencySelector(SyncSelector):
    """Picks the k most recently modified memories."""

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self, k: int = CAP) -> None:
        """
        Args:
            k: how many of the newest memories to pick.
        """
        self.k = _check_k("recency", k)
        self.name = SELECTORS.canonical("recency", k=k)

    def select(self, request: SelectionRequest) -> SelectionResult:
        # The manifest is already newest first; sorting again keeps the selector right
        # even for a caller that passes headers in another order. Ties keep their order.
        ordered = sorted(request.candidates, key=lambda h: -h.mtime_ms)
        names = tuple(h.filename for h in ordered[: self.k])
        return SelectionResult(names=names, raw_output=f"recency: newest {len(names)}")


def _turn_seed(seed: int, scenario: str, turn_id: str, repeat: int) -> list[int]:
    """Seed material stable across processes (unlike hash()) and distinct per scenario,
    turn and repeat: turn ids such as `t1` recur in every scenario, and scenarios that
    shared one stream would draw correlated picks."""
    digest = hashlib.sha256(f"{scenario}\x1f{turn_id}".encode()).digest()
    return [seed, int.from_bytes(digest[:8], "big"), repeat]


@selector("random")
class RandomSelector(SyncSelector):
    """Picks k candidates uniformly at random, reproducibly per seed, scenario, turn
    and repeat."""

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self, k: int = CAP, seed: int = 0) -> None:
        """
        Args:
            k: how many memories to pick (fewer when there are fewer candidates).
            seed: the run's seed; with the scenario, turn and repeat it fixes every pick, so
                results do not depend on the order turns are evaluated in.
        """
        if seed < 0:
            raise MemevalError(f"random: seed={seed} must be 0 or more")
        self.k = _check_k("random", k)
        self.seed = seed
        self.name = SELECTORS.canonical("random", k=k, seed=seed)

    def select(self, request: SelectionRequest) -> SelectionResult:
        filenames = request.filenames
        rng = np.random.default_rng(_turn_seed(self.seed, request.scenario, request.turn_id,
                                               request.repeat))
        count = min(self.k, len(filenames))
        chosen = rng.choice(len(filenames), size=count, replace=False) if count else []
        names = tuple(filenames[int(i)] for i in chosen)
        return SelectionResult(names=names,
                               raw_output=f"random: seed={self.seed} picked {len(names)}")


@selector("oracle")
class OracleSelector(SyncSelector):
    """Picks exactly the gold-relevant candidates: the ceiling a selector can reach."""

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self) -> None:
        self.name = SELECTORS.canonical("oracle")
        self._labels: Mapping[str, Sequence[str]] | None = None

    def use_labels(self, relevant_by_scope: Mapping[str, Sequence[str]] | None) -> None:
        """The harness hands over the next turn's relevant filenames per memdir scope."""
        self._labels = relevant_by_scope

    def select(self, request: SelectionRequest) -> SelectionResult:
        gold = None if self._labels is None else self._labels.get(request.scope)
        if gold is None:
            return SelectionResult.failure(
                f"oracle: turn {request.turn_id or '?'} carries no gold labels; give the "
                "scenario turn a 'relevant:' list or use another selector"
            )
        # Only candidates can be picked: an already-surfaced relevant memory is no
        # longer in the manifest, and naming it would only be filtered out later.
        available = set(request.filenames)
        names = tuple(dict.fromkeys(n for n in gold if n in available))
        missing = len(gold) - len(names)
        trace = f"oracle: {len(names)} relevant"
        if missing:
            trace += f", {missing} not among the candidates"
        return SelectionResult(names=names, raw_output=trace)
