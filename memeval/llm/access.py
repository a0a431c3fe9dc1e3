"""A run's model access: the clients it builds and hands to the components that call models.

One `ModelAccess` per run owns what every call shares (response cache, cassette,
budget, price table, call log and records, throttling tally) and gives one
`LLMClient` per endpoint and timing. Calls to one endpoint share its slots, so
the server never holds more requests than its capacity: `--concurrency` (or
`$MEMEVAL_MAX_CONCURRENCY`), a spec's `concurrency=`, or what the server states
itself (`set_capacity`). Nothing finds it through a module global: the run builds it
and passes it on (`PromptedModel.connect`), and closes it when the run ends.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memeval.llm.budget import Budget, BudgetState
from memeval.llm.cache import ResponseCache
from memeval.llm.cassette import Cassette, scrub
from memeval.llm.config import CallTiming, DoorConfig
from memeval.llm.endpoint import ANTHROPIC, Endpoint
from memeval.llm.prices import ModelPrice, PriceTable, load_prices
from memeval.llm.records import CallRecord, LLMResponse
from memeval.llm.throttle import AdaptiveSlots, ThrottleLog
from memeval.usage import ZERO_USAGE, Usage

if TYPE_CHECKING:
    from memeval.llm.client import LLMClient


class CallAbandoned(Exception):
    """The call an identical request waited on ended without an answer (cancelled)."""


class ModelAccess:
    """Everything a run's model calls share, and the clients that make them.

    Args:
        config: the run's cache, cassette, budget, prices, log, batches, concurrency
            and default timing.
    """

    def __init__(self, config: DoorConfig | None = None) -> None:
        self.config = config = config or DoorConfig()
        self.cache = ResponseCache(config.cache) if config.cache is not None else None
        self.cassette = (Cassette(config.replay, "replay") if config.replay is not None
                         else Cassette(config.record, "record") if config.record is not None
                         else None)
        self.budget = Budget(config.max_cost)
        self.prices: PriceTable = load_prices(config.prices)
        self.throttled = ThrottleLog()
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []
        self._clients: dict[tuple[Endpoint, CallTiming, str | None], LLMClient] = {}
        self._capacity: dict[Endpoint, tuple[int, str]] = {}
        self._thread_slots: dict[Endpoint, threading.BoundedSemaphore] = {}
        self._loop_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                                    dict[Endpoint, AdaptiveSlots]]
        self._loop_slots = weakref.WeakKeyDictionary()
        self._pending: dict[str, Future[LLMResponse]] = {}

    # -- clients ------------------------------------------------------------------------
    def client(self, endpoint: Endpoint = ANTHROPIC, timing: CallTiming | None = None, *,
               api_key: str | None = None) -> LLMClient:
        """The client for `endpoint` with `timing` (default the run's), built once."""
        from memeval.llm.client import LLMClient

        timing = timing or self.config.timing
        with self._lock:
            found = self._clients.get((endpoint, timing, api_key))
            if found is None:
                found = LLMClient(endpoint, access=self, timing=timing, api_key=api_key)
                self._clients[(endpoint, timing, api_key)] = found
            return found

    def adopt(self, client: LLMClient) -> None:
        """Count `client` (built with this access) among the ones `close` closes."""
        with self._lock:
            self._clients.setdefault((client.target, client.timing, client.api_key_override),
                                     client)

    def clients(self) -> list[LLMClient]:
        with self._lock:
            return list(self._clients.values())

    @property
    def use_batches(self) -> bool:
        return self.config.batches

    @property
    def batch_max(self) -> int:
        return self.config.batch_max

    def batches_for(self, endpoint: Endpoint) -> bool:
        """Message Batches are an Anthropic API feature; other transports send singly."""
        return self.config.batches and endpoint.transport == "anthropic"

    # -- capacity -----------------------------------------------------------------------
    def set_capacity(self, endpoint: Endpoint, slots: int, reason: str) -> None:
        """Let at most `slots` calls be in flight to `endpoint`; the smallest wins, since
        every component of the run that talks to it shares those slots."""
        slots = max(1, int(slots))
        with self._lock:
            known = self._capacity.get(endpoint)
            if known is None or slots < known[0]:
                self._capacity[endpoint] = (slots, reason)

    def capacity_set(self, endpoint: Endpoint) -> bool:
        """Has a spec or the server set `endpoint`'s capacity?"""
        with self._lock:
            return endpoint in self._capacity

    def endpoints(self) -> dict[str, dict[str, Any]]:
        """Each endpoint a client was built for: its concurrency and who chose it."""
        return {client.target.label(): {"concurrency": self.capacity(client.target),
                                        "chosen_by": self.capacity_reason(client.target)}
                for client in self.clients()}

    def capacity(self, endpoint: Endpoint) -> int:
        with self._lock:
            known = self._capacity.get(endpoint)
        return known[0] if known else self.config.max_concurrency

    def capacity_reason(self, endpoint: Endpoint) -> str:
        with self._lock:
            known = self._capacity.get(endpoint)
        return known[1] if known else "the run's --concurrency"

    def thread_slots(self, endpoint: Endpoint) -> threading.BoundedSemaphore:
        with self._lock:
            slots = self._thread_slots.get(endpoint)
            if slots is None:
                slots = threading.BoundedSemaphore(self._capacity_locked(endpoint))
                self._thread_slots[endpoint] = slots
            return slots

    def loop_slots(self, endpoint: Endpoint) -> AdaptiveSlots:
        """The running loop's slots for `endpoint` (asyncio primitives belong to a loop)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            per_loop = self._loop_slots.setdefault(loop, {})
            slots = per_loop.get(endpoint)
            if slots is None:
                slots = AdaptiveSlots(self._capacity_locked(endpoint), self.throttled)
                per_loop[endpoint] = slots
            return slots

    def _capacity_locked(self, endpoint: Endpoint) -> int:
        known = self._capacity.get(endpoint)
        return known[0] if known else self.config.max_concurrency

    # -- identical requests in flight --------------------------------------------------------
    def lead(self, scoped_key: str) -> tuple[bool, Future[LLMResponse]]:
        """(True, a new future) for the first caller of a request not in flight; (False,
        the first caller's future) for an identical request sent meanwhile, which is
        then answered by that one call rather than sent twice."""
        with self._lock:
            pending = self._pending.get(scoped_key)
            if pending is not None:
                return False, pending
            pending = self._pending[scoped_key] = Future()
            return True, pending

    def settle(self, scoped_key: str, future: Future[LLMResponse],
               response: LLMResponse | None) -> None:
        """End a lead: followers get `response` (or the lead's failure to answer)."""
        with self._lock:
            self._pending.pop(scoped_key, None)
        if response is not None:
            future.set_result(response)
        else:
            future.set_exception(CallAbandoned("the identical call in flight was cancelled"))

    # -- prices and budget ----------------------------------------------------------------
    def use_price(self, model: str, price: ModelPrice) -> None:
        """Price `model` for this run's calls (a spec's `price_in`/`price_out`)."""
        with self._lock:
            self.prices = self.prices.with_model(model, price)

    def unpriced(self, models: Iterable[str]) -> list[str]:
        """Which of `models` the run's price table cannot price."""
        return sorted({m for m in models if self.prices.price_for(m) is None})

    def budget_state(self) -> BudgetState:
        return self.budget.state()

    # -- records ----------------------------------------------------------------------------
    def record(self, record: CallRecord, secrets: tuple[str, ...]) -> None:
        with self._lock:
            self._records.append(record)
            path = self.config.log_path
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                line = scrub(json.dumps(record.to_dict(), ensure_ascii=False), secrets)
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")

    @property
    def records(self) -> tuple[CallRecord, ...]:
        with self._lock:
            return tuple(self._records)

    @property
    def usage(self) -> Usage:
        """Everything spent through this run's clients so far."""
        total = ZERO_USAGE
        for record in self.records:
            total = total + record.usage()
        return total

    def summary(self) -> dict[str, Any]:
        """Totals for a run summary, including whether the budget stopped calls."""
        state = self.budget.state()
        records = self.records
        return {**self.usage.to_dict(), "errors": sum(1 for r in records if r.error),
                "served_from_cache": bool(records) and all(
                    r.source in ("cache", "replay") for r in records),
                "max_cost": state.max_cost, "budget_exhausted": state.exhausted,
                "calls_refused_by_budget": state.refused, "price_table": self.prices.source,
                **asdict(self.throttled), "endpoints": self.endpoints()}

    # -- closing ----------------------------------------------------------------------------
    async def aclose_for_loop(self) -> None:
        """Close every client's SDK connections of the running event loop: they belong
        to the loop, and `asyncio.run` ends it. Requests a server on this machine is
        still computing for a call that gave up are waited for first (up to one
        deadline), so they do not queue ahead of the next run's calls."""
        with self._lock:
            slots = list(self._loop_slots.get(asyncio.get_running_loop(), {}).values())
        for endpoint_slots in slots:
            await endpoint_slots.orphans_done(self.config.timing.deadline)
        for client in self.clients():
            await client.aclose_for_loop()

    def close(self) -> None:
        """Close every client's sync connections (async ones close with their loop)."""
        for client in self.clients():
            client.close()

    def __enter__(self) -> ModelAccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@runtime_checkable
class UsesModels(Protocol):
    """A selector or judge that calls models and takes its client from the run."""

    def connect(self, access: ModelAccess) -> None: ...


def connect(component: object, access: ModelAccess) -> None:
    """Hand `access` to `component` when it calls models; other components need none."""
    if isinstance(component, UsesModels):
        component.connect(access)
