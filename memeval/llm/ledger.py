"""The call bookkeeping the direct and the batch paths share, as a protocol.

Every model call goes through the same steps whichever way it is sent: look for a
free answer (cache, cassette), admit it against the budget, then account for the
answer or the failure. `LLMClient` implements them; `memeval.llm.batches` drives
them through this protocol, so the batch path needs nothing else of the client and
the two modules do not import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from memeval.llm.batch_journal import BatchJournal
from memeval.llm.budget import Budget
from memeval.llm.endpoint import Endpoint
from memeval.llm.records import LLMResponse, Source
from memeval.llm.request import LLMRequest

Validator = Callable[[str], str | None]  # answer text -> problem, or None when usable


class CallLedger(Protocol):
    """What a path that sends calls needs from the client that accounts for them."""

    budget: Budget
    batch_wait: float
    poll_interval: float
    target: Endpoint
    batch_stash: dict[str, Any]  # results of an earlier attempt's batch not yet asked for

    @property
    def batch_journal(self) -> BatchJournal | None: ...

    @property
    def sync_client(self) -> Any: ...

    def lookup(self, request: LLMRequest, key: str,
               validate: Validator | None) -> LLMResponse | None: ...

    def admit(self, request: LLMRequest, key: str, *,
              batch: bool) -> tuple[float, LLMResponse | None]: ...

    def fail(self, request: LLMRequest, key: str, error: str, *, latency: float = 0.0,
             source: Source = "none", request_id: str | None = None) -> LLMResponse: ...

    def finish(self, request: LLMRequest, key: str, message: dict[str, Any], source: Source,
               latency: float, validate: Validator | None,
               request_id: str | None = None) -> LLMResponse: ...
