"""memeval's one door to the models: everything that talks to Claude, OpenAI or an
OpenAI-compatible server goes through here.

A run describes how calls are made in a `DoorConfig` (`door_config` reads the options
and `MEMEVAL_*` variables), builds one `ModelAccess` from it, and hands that to each
component that calls a model; the access gives one `LLMClient` per endpoint, which
owns the SDK clients, retries, deadlines and concurrency, while cache, cassettes,
budget, prices and the call records are the access's, shared by all of them.
"""

from __future__ import annotations

from memeval.llm.access import ModelAccess
from memeval.llm.budget import Budget, BudgetState
from memeval.llm.cache import ResponseCache
from memeval.llm.cassette import Cassette, CassetteMode
from memeval.llm.client import LLMClient, Validator
from memeval.llm.config import CallTiming, DoorConfig, default_cache_path, door_config
from memeval.llm.errors import BudgetExceeded, CassetteMiss, LLMError, PriceTableError
from memeval.llm.prices import ModelPrice, PriceTable, load_prices
from memeval.llm.records import CallRecord, LLMResponse
from memeval.llm.request import LLMRequest

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetState",
    "CallRecord",
    "CallTiming",
    "Cassette",
    "CassetteMiss",
    "CassetteMode",
    "DoorConfig",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "ModelAccess",
    "ModelPrice",
    "PriceTable",
    "PriceTableError",
    "ResponseCache",
    "Validator",
    "default_cache_path",
    "door_config",
    "load_prices",
]
