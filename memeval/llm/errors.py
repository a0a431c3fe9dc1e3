"""Errors of the model door. Each names what went wrong and what to do about it."""

from __future__ import annotations

import anthropic

from memeval.errors import MemevalError


class LLMError(MemevalError):
    """A model call could not be answered."""


class BudgetExceeded(LLMError):
    """The run's `--max-cost` would be passed by the next call, so it was not sent."""


class CassetteMiss(LLMError):
    """Replay mode met a request the cassette does not hold."""


class PriceTableError(LLMError):
    """The price table file is missing or malformed."""


def describe_exception(exc: BaseException) -> str:
    """One line naming the failure; never includes request headers."""
    if isinstance(exc, anthropic.APIStatusError):
        return f"{type(exc).__name__}: HTTP {exc.status_code}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"
