"""Manifest-order shuffling, so a selector's order bias shows up as flips across repeats.

The system always lists memories newest first; a selector that leans on position
rather than content would pick differently when the same manifest is reordered.
This wrapper reorders the candidates (and the manifest lines with them) with a seed
derived from the turn and the repeat, so the shuffle is reproducible.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from memeval.memdir import format_memory_manifest
from memeval.selectors.base import SelectionRequest, SelectionResult, Selector, reset_selector


def shuffled_request(request: SelectionRequest, seed: int) -> SelectionRequest:
    """The same request with candidates and manifest in a seeded random order.

    The memdir enters the seed by its last two path parts (which memdir, not where the
    run's temporary copy happens to live), so a rerun shuffles exactly the same way.
    """
    where = "/".join(Path(request.memory_dir).parts[-2:])
    token = f"{seed}:{request.turn_id}:{request.repeat}:{where}"
    rng = random.Random(hashlib.sha256(token.encode()).digest())
    candidates = list(request.candidates)
    rng.shuffle(candidates)
    return replace(request, candidates=tuple(candidates),
                   manifest=format_memory_manifest(candidates))


def unwrapped(component: Any) -> Any:
    """The selector inside the shuffling wrapper, or `component` itself: what its
    declarations (`stateful`, `inline`, being the oracle) are read from."""
    return component.inner if isinstance(component, ShuffledManifestSelector) else component


class ShuffledManifestSelector:
    """Wraps a selector; every request reaches it with the manifest shuffled."""

    def __init__(self, inner: Selector, seed: int = 0) -> None:
        self.inner = inner
        self.seed = seed
        self.name = inner.name

    def select(self, request: SelectionRequest) -> SelectionResult:
        return self.inner.select(shuffled_request(request, self.seed))

    async def aselect(self, request: SelectionRequest) -> SelectionResult:
        return await self.inner.aselect(shuffled_request(request, self.seed))

    def use_labels(self, relevant_by_scope: Any) -> None:
        """Gold labels reach an inner oracle through the wrapper (and nothing else)."""
        use_labels = getattr(self.inner, "use_labels", None)
        if callable(use_labels):
            use_labels(relevant_by_scope)

    def reset(self) -> None:
        """Compaction reaches a stateful inner selector through the wrapper."""
        reset_selector(self.inner)
