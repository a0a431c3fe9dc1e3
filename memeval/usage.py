"""Token, cost and latency accounting shared by selectors, judges and the model door."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Usage:
    """What one or more model calls cost. Offline components report zero usage.

    Args:
        calls: model requests actually sent (cache and replay hits are not calls).
        input_tokens: uncached input tokens billed.
        output_tokens: output tokens billed.
        cache_read_input_tokens: input tokens served from the prompt cache.
        cache_creation_input_tokens: input tokens written to the prompt cache.
        cost_usd: price of the above from the price table.
        latency_s: wall time spent waiting for the model.
        cached: answers served by memeval's own response cache or a cassette.
        unpriced: calls sent to a model the price table does not know; their cost is
            unknown, so `cost_usd` is a lower bound whenever this is not 0.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: int = 0
    unpriced: int = 0

    @property
    def cost_known(self) -> bool:
        """Is `cost_usd` the whole cost (no call went to an unpriced model)?"""
        return self.unpriced == 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*map(operator.add, _values(self), _values(other)))

    def to_dict(self) -> dict[str, float | int]:
        return dict(zip(_NAMES, _values(self), strict=True))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage:
        """A stored usage. JSON has no NaN: a cost or latency that was not a finite
        number was stored as null, and reads back as NaN (unknown), not None."""
        if not data:
            return ZERO_USAGE
        return cls(**{k: math.nan if v is None and k in _FLOATS else v
                      for k, v in data.items()})


# Every row and model call adds or stores a Usage: the field names read once, the
# values in one C call (`fields()` per call was most of it).
_NAMES = tuple(f.name for f in fields(Usage))
_FLOATS = frozenset(f.name for f in fields(Usage) if f.type in (float, "float"))
_values = operator.attrgetter(*_NAMES)
ZERO_USAGE = Usage()
