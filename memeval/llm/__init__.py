"""memeval's one door to the models: everything that talks to Claude, OpenAI or an
OpenAI-compatible server goes through here.

`LLMClient` owns the SDK clients, retries, timeouts, concurrency, the response cache,
record/replay cassettes, the cost budget and Message Batches mode. A process-wide
default client lets the CLI configure all of that once for every selector and judge;
a component naming its own server gets a sibling of it (`LLMClient.for_endpoint`).
"""

from __future__ import annotations

import threading

from memeval.llm.budget import Budget, BudgetState
from memeval.llm.cache import ResponseCache
from memeval.llm.cassette import Cassette, CassetteMode
from memeval.llm.client import LLMClient, Validator
from memeval.llm.config import build_client, default_cache_path
from memeval.llm.errors import BudgetExceeded, CassetteMiss, LLMError, PriceTableError
from memeval.llm.prices import ModelPrice, PriceTable, load_prices
from memeval.llm.records import CallRecord, LLMResponse
from memeval.llm.request import LLMRequest

_default: LLMClient | None = None
_default_lock = threading.Lock()


def get_default_client() -> LLMClient:
    """The client selectors and judges use when none is passed (built from env on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = build_client()
        return _default


def default_client_installed() -> bool:
    """Has a client been set (or built) for this process already?"""
    return _default is not None


def set_default_client(client: LLMClient | None) -> None:
    """Install the run's configured client (cache, cassette, budget); None resets."""
    global _default
    with _default_lock:
        _default = client


async def close_loop_clients() -> None:
    """Close the default door's SDK clients of the running event loop (call before the
    loop ends: a runner's `asyncio.run`)."""
    if _default is not None:
        await _default.aclose_for_loop()


def configure(**options: object) -> LLMClient:
    """Build a client with `build_client(**options)` and make it the default; returns it."""
    client = build_client(**options)  # type: ignore[arg-type]
    set_default_client(client)
    return client


__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetState",
    "CallRecord",
    "Cassette",
    "CassetteMiss",
    "CassetteMode",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "ModelPrice",
    "PriceTable",
    "PriceTableError",
    "ResponseCache",
    "Validator",
    "build_client",
    "configure",
    "default_cache_path",
    "get_default_client",
    "load_prices",
    "set_default_client",
]
