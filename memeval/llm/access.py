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
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import asdict
from typing import Any, Protocol, TypeVar, runtime_checkable

from memeval.llm.batch_journal import BatchJournal
from memeval.llm.budget import Budget, BudgetState
from memeval.llm.cache import ResponseCache
from memeval.llm.cassette import Cassette, scrub
from memeval.llm.config import CallTiming, DoorConfig
from memeval.llm.endpoint import Endpoint
from memeval.llm.prices import ModelPrice, PriceTable, load_prices
from memeval.llm.records import CallRecord, LLMResponse
from memeval.llm.spend import SpendLedger
from memeval.llm.throttle import AdaptiveSlots, ThrottleLog
from memeval.llm.writable import require_appendable
from memeval.usage import ZERO_USAGE, Usage


class DoorClient(Protocol):
    """What an access keeps of each client built on it: its key, and how to close it."""

    target: Endpoint
    timing: CallTiming
    api_key_override: str | None

    def close(self) -> None: ...

    async def aclose_for_loop(self) -> None: ...


Client = TypeVar("Client", bound=DoorClient)


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
        if config.record is not None:
            require_appendable(config.record, "cassette", "pass a writable "
                               "--record-cassette path")
        if config.log_path is not None:
            require_appendable(config.log_path, "call log", "point $MEMEVAL_LLM_LOG at a "
                               "writable file, or unset it")
        self.batch_journal = (BatchJournal(config.batch_log) if config.batch_log is not None
                              else None)
        self.budget = Budget(config.max_cost, None if config.spend_log is None
                             else SpendLedger(config.spend_log))
        self.prices: PriceTable = load_prices(config.prices)
        self.throttled = ThrottleLog()
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []
        self._clients: dict[tuple[Endpoint, CallTiming, str | None], DoorClient] = {}
        self._capacity: dict[Endpoint, tuple[int, str]] = {}
        self._thread_slots: dict[Endpoint, threading.BoundedSemaphore] = {}
        self._loop_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                                    dict[Endpoint, AdaptiveSlots]]
        self._loop_slots = weakref.WeakKeyDictionary()
        self._pending: dict[str, Future[LLMResponse]] = {}
        self._stop: threading.Event | None = None
        self.cache_error: str | None = None  # the first answer the cache could not store

    def cache_failed(self, why: str) -> None:
        """Note that an answer could not be stored (a full disk): the run goes on with
        its answers, and its summary says why a rerun may pay for them again."""
        with self._lock:
            if self.cache_error is None:
                self.cache_error = why

    # -- stopping ---------------------------------------------------------------------------
    def stop_calls_on(self, event: threading.Event) -> None:
        """Send no new call once `event` is set (the run got a signal): each is answered
        with a `STOPPED_CALL` error instead, which the run does not write as a row."""
        self._stop = event

    @property
    def stopping(self) -> bool:
        return self._stop is not None and self._stop.is_set()

    # -- clients ------------------------------------------------------------------------
    def kept(self, key: tuple[Endpoint, CallTiming, str | None],
             build: Callable[[], Client]) -> Client:
        """The client kept under `key`, built by `build` the first time it is asked for
        (`LLMClient.of` is how a caller gets one)."""
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                found = self._clients[key] = build()
            return found  # type: ignore[return-value]

    def adopt(self, client: DoorClient) -> None:
        """Count `client` (built with this access) among the ones `close` closes."""
        with self._lock:
            self._clients.setdefault((client.target, client.timing, client.api_key_override),
                                     client)

    def clients(self) -> list[DoorClient]:
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
                "spent_by_earlier_attempts_usd": state.earlier,
                "cache_error": self.cache_error,
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
        if self.budget.ledger is not None:
            self.budget.ledger.close()

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
