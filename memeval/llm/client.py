"""The one door to the models: SDK clients, retries, concurrency, cache, replay, budget, cost.

Every model call of memeval goes through `LLMClient.complete` / `acomplete` /
`run_batch`, so each concern is written once. A call never raises for an API
problem: the failure is returned as a response whose record carries the error, and
the caller turns it into a recorded selector or judge error.

A client talks to one `Endpoint`: the Messages API through the `anthropic` SDK, or
Chat Completions through the `openai` SDK (translated at the edge, in
`memeval.llm.openai_chat`). The run's `ModelAccess` builds one per endpoint and
timing; they share its cache, cassette, budget, call log and the endpoint's slots.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from typing import Any

import anthropic

from memeval.errors import INVALID_OUTPUT, STOPPED_CALL
from memeval.llm.access import CallAbandoned, ModelAccess
from memeval.llm.batch_journal import BatchJournal
from memeval.llm.batches import AutoBatcher, run_message_batch
from memeval.llm.body_cap import MAX_RESPONSE_HEADER
from memeval.llm.budget import CHARS_PER_TOKEN, Budget, BudgetState
from memeval.llm.cache import ResponseCache, default_cache_path
from memeval.llm.cassette import Cassette, scrub, scrub_value
from memeval.llm.config import CallTiming, DoorConfig
from memeval.llm.deadline import AsyncDeadlineTransport, DeadlineTransport, deadline_headers
from memeval.llm.endpoint import ANTHROPIC, FAKE_SERVER_HEADER, NO_KEY, Endpoint
from memeval.llm.errors import BudgetExceeded, CassetteMiss, LLMError, describe_exception
from memeval.llm.ledger import Validator
from memeval.llm.openai_chat import chat_body, message_body, require_openai
from memeval.llm.prices import PriceTable
from memeval.llm.records import (
    COMPLETE_STOP_REASONS,
    CallRecord,
    LLMResponse,
    Source,
    message_text,
)
from memeval.llm.request import LLMRequest
from memeval.llm.structured import (
    answer_text,
    ignored_tool_message,
    rejection_message,
    rejects_mode,
)
from memeval.llm.throttle import OVERLOADED, AdaptiveSlots
from memeval.usage import Usage

MIN_SECRET_LEN = 16  # real API keys are far longer; dummy keys of local servers are not


@functools.cache
def named_params(method: Callable[..., Any]) -> frozenset[str]:
    """The body fields an SDK method takes as keywords (read once per method)."""
    return frozenset(inspect.signature(method).parameters) - {
        "self", "extra_body", "extra_headers", "extra_query", "timeout"}


_CREATE_PARAMS = named_params(anthropic.resources.messages.Messages.create)


def sdk_kwargs(body: dict[str, Any], named: frozenset[str] = _CREATE_PARAMS) -> dict[str, Any]:
    """Split a request body into SDK keyword arguments; unknown ones go in `extra_body`.

    Older SDKs lack named `output_config`; sending it through `extra_body` keeps the
    wire request identical either way.
    """
    kwargs = {k: v for k, v in body.items() if k in named}
    extra = {k: v for k, v in body.items() if k not in named}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
                "cache_creation_input_tokens")
MAX_TOKENS_FIGURE = 10**9  # no single call bills more; a larger figure is a broken server


def usage_tokens(usage: dict[str, Any]) -> tuple[dict[str, int], str | None]:
    """Token counts of a usage block, or zeros and the reason they cannot be trusted."""
    tokens = {}
    for name in TOKEN_FIELDS:
        value = usage.get(name) or 0
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or not 0 <= value <= MAX_TOKENS_FIGURE:
            return dict.fromkeys(TOKEN_FIELDS, 0), f"usage {name}={value!r} is not a token count"
        tokens[name] = int(value)
    return tokens, None


class LLMClient:
    """The door to one endpoint: its SDK clients and everything around a call.

    A run builds its clients through one `ModelAccess` (`LLMClient.of(access,
    endpoint, timing)`), which holds what they share: cache, cassette, budget, prices, records
    and the endpoint's slots. A client built on its own gets an access of its own.

    Args:
        endpoint: the server and API to call; a string is the base URL of a Messages
            API server; default Anthropic's (or `$ANTHROPIC_BASE_URL`).
        config: the shared settings, when this client makes its own access.
        api_key: the key itself, overriding the endpoint's variable (tests).
        access: the run's access this client belongs to.
        timing: per-attempt timeout, per-call deadline and retries (default the
            access's).
    """

    def __init__(self, endpoint: Endpoint | str | None = None, config: DoorConfig | None = None,
                 *, api_key: str | None = None, access: ModelAccess | None = None,
                 timing: CallTiming | None = None) -> None:
        if isinstance(endpoint, str):
            endpoint = Endpoint(base_url=endpoint)
        self.target = endpoint or ANTHROPIC
        self.access = access or ModelAccess(config)
        self.timing = timing or self.access.config.timing
        self.api_key_override = api_key
        self.use_batches = self.access.batches_for(self.target)
        config = self.access.config
        self.poll_interval, self.batch_wait = config.poll_interval, config.batch_wait
        self.batch_max = config.batch_max
        self._batcher = AutoBatcher(self, config.batch_window, config.batch_max)
        self.batch_stash: dict[str, Any] = {}
        self._sync: Any = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._async = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        if access is None:
            self.access.adopt(self)

    @classmethod
    def of(cls, access: ModelAccess, endpoint: Endpoint = ANTHROPIC,
           timing: CallTiming | None = None, *, api_key: str | None = None) -> LLMClient:
        """The client of `access` for `endpoint` with `timing` (default the access's),
        built once and then shared by every component that asks for it."""
        timing = timing or access.config.timing
        return access.kept((endpoint, timing, api_key), lambda: cls(
            endpoint, access=access, timing=timing, api_key=api_key))

    # -- what the run's access holds -----------------------------------------------------
    @property
    def cache(self) -> ResponseCache | None:
        return self.access.cache

    @property
    def cassette(self) -> Cassette | None:
        return self.access.cassette

    @property
    def budget(self) -> Budget:
        return self.access.budget

    @property
    def batch_journal(self) -> BatchJournal | None:
        return self.access.batch_journal

    @property
    def prices(self) -> PriceTable:
        return self.access.prices

    @property
    def max_concurrency(self) -> int:
        return self.access.capacity(self.target)

    @property
    def timeout(self) -> float:
        return self.timing.timeout

    @property
    def max_retries(self) -> int:
        return self.timing.max_retries

    # -- SDK clients ------------------------------------------------------------------
    def _sdk(self, *, asynchronous: bool = False,
             on_status: Callable[[int], None] | None = None,
             on_orphan: Callable[[asyncio.Future[Any]], None] | None = None) -> Any:
        """A new SDK client for this endpoint, under the deadline transport (which tells
        an async client's `on_status` every answer's status, and hands `on_orphan` the
        requests it gave up on that a server on this machine may still compute)."""
        kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": self.max_retries}
        api_key = self.api_key_override or self.target.api_key()
        if api_key is not None:
            kwargs["api_key"] = api_key
        # Resolved (and checked) here, variable included: the SDK never reads
        # $ANTHROPIC_BASE_URL / $OPENAI_BASE_URL by itself.
        kwargs["base_url"] = self.target.url
        module = require_openai() if self.target.transport == "openai" else anthropic
        pool, patient = self.max_concurrency, self.target.local
        kwargs["http_client"] = (
            module.DefaultAsyncHttpxClient(transport=AsyncDeadlineTransport(
                calls_in_flight=pool, on_status=on_status, patient=patient,
                on_orphan=on_orphan))
            if asynchronous else
            module.DefaultHttpxClient(transport=DeadlineTransport(calls_in_flight=pool,
                                                                  patient=patient)))
        if self.target.transport == "openai":
            return (module.AsyncOpenAI if asynchronous else module.OpenAI)(**kwargs)
        return (anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic)(**kwargs)

    @property
    def sync_client(self) -> Any:
        """Built on first use, so replay and cache-only runs need no key."""
        with self._lock:
            if self._sync is None:
                self._sync = self._sdk()
            return self._sync

    def _async_sdk(self) -> tuple[Any, AdaptiveSlots]:
        # an async client and its slots belong to one event loop; asyncio.run makes new ones
        loop = asyncio.get_running_loop()
        slots = self.access.loop_slots(self.target)
        with self._lock:
            sdk = self._async.get(loop)
            if sdk is None:
                sdk = self._sdk(asynchronous=True, on_status=slots.observe,
                                on_orphan=slots.hold)
                self._async[loop] = sdk
            return sdk, slots

    async def aclose_for_loop(self) -> None:
        """Close this client's SDK client of the running event loop: its connections
        belong to the loop, and `asyncio.run` ends it."""
        loop = asyncio.get_running_loop()
        with self._lock:
            sdk = self._async.pop(loop, None)
        if sdk is not None:
            await sdk.close()

    def throttling(self) -> dict[str, int | None]:
        """How the servers pushed back: overload answers (429/529) seen, and the fewest
        calls in flight a door came down to (None if it never had to)."""
        return asdict(self.access.throttled)

    def _create_call(self, request: LLMRequest,
                     sdk: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
        """The SDK's raw-response create method for this endpoint's API, and the
        keyword arguments that send `request` through it."""
        body = request.to_params()
        if self.target.transport == "openai":
            resource = sdk.chat.completions
            kwargs = sdk_kwargs(chat_body(body, official=self.target.public),
                                named_params(type(resource).create))
        else:
            resource, kwargs = sdk.messages, sdk_kwargs(body)
        headers = {**deadline_headers(self.timing.deadline),
                   MAX_RESPONSE_HEADER: str(self.access.config.max_response_bytes)}
        return resource.with_raw_response.create, {**kwargs, "extra_headers": headers}

    def _send(self, request: LLMRequest) -> Any:
        create, kwargs = self._create_call(request, self.sync_client)
        raw = create(**kwargs)
        return raw, raw.parse()

    async def _asend(self, request: LLMRequest, sdk: Any) -> Any:
        create, kwargs = self._create_call(request, sdk)
        raw = await create(**kwargs)
        parsed = raw.parse()  # awaitable for anthropic's async client, plain for openai's
        return raw, (await parsed if inspect.isawaitable(parsed) else parsed)

    def close(self) -> None:
        """Close the sync SDK client's connections (async ones close with their loop)."""
        with self._lock:
            sync, self._sync = self._sync, None
        if sync is not None:
            sync.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _secrets(self) -> tuple[str, ...]:
        """Keys that must never be stored. A short value is a local server's dummy key
        (`ollama`, `EMPTY`); scrubbing it would corrupt answers and protect nothing."""
        values = (self.api_key_override, self.target.api_key(), os.environ.get("ANTHROPIC_API_KEY"),
                  os.environ.get("ANTHROPIC_AUTH_TOKEN"), os.environ.get("OPENAI_API_KEY"))
        return tuple(sorted({v for v in values
                             if v and len(v) >= MIN_SECRET_LEN and v != NO_KEY}))

    # -- accounting -------------------------------------------------------------------
    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every call of the run's access (this client's siblings' too)."""
        return self.access.records

    @property
    def usage(self) -> Usage:
        """Everything spent through the run's access so far."""
        return self.access.usage

    def budget_state(self) -> BudgetState:
        return self.budget.state()

    def summary(self) -> dict[str, Any]:
        """Totals for a run summary (see `ModelAccess.summary`)."""
        return self.access.summary()

    def _record(self, record: CallRecord) -> None:
        self.access.record(record, self._secrets())

    def _estimate(self, request: LLMRequest, *, batch: bool) -> float | None:
        return self.prices.cost(request.model,
                                input_tokens=int(request.input_chars() / CHARS_PER_TOKEN) + 1,
                                output_tokens=request.max_tokens, batch=batch)

    # -- the steps every call shares ----------------------------------------------------
    def _keeps(self, fake: bool) -> bool:
        """Whether an answer may enter the cache: a loopback test server's never enters
        the user's default one (it would later pass for a real model's)."""
        if self.cache is None:
            return False
        return not (fake and self.cache.path.resolve() == default_cache_path().resolve())

    def lookup(self, request: LLMRequest, key: str,
                validate: Validator | None) -> LLMResponse | None:
        """An answer that needs no call (cache, cassette), or a replay miss; None to call."""
        if self.cache is not None:
            message = self.cache.get(self.target.scope(key))
            if message is not None:
                return self.finish(request, key, message, "cache", 0.0, validate)
        if self.cassette is not None:
            body = request.to_params()
            if self.cassette.mode == "replay":
                try:
                    message = self.cassette.require(key, body, self.target.label())
                except CassetteMiss as exc:
                    return self.fail(request, key, f"CassetteMiss: {exc}")
                return self.finish(request, key, message, "replay", 0.0, validate)
            message = self.cassette.get(key, self.target.label())
            if message is not None:  # recording over an existing cassette: reuse
                return self.finish(request, key, message, "replay", 0.0, validate)
        return None

    def admit(self, request: LLMRequest, key: str,
               *, batch: bool) -> tuple[float, LLMResponse | None]:
        """Reserve budget; a refusal comes back as a BudgetExceeded response."""
        estimate = self._estimate(request, batch=batch)
        if estimate is None:
            if self.budget.max_cost is None:
                return 0.0, None
            exc = BudgetExceeded(
                f"model {request.model!r} has no price in {self.prices.source}, so "
                "--max-cost cannot be enforced; add it to the table (--prices) or drop "
                "--max-cost")
            return 0.0, self.fail(request, key, f"BudgetExceeded: {exc}")
        if not self.budget.reserve(estimate):
            state = self.budget.state()
            earlier = (f" (${state.earlier:.4f} of it by earlier attempts of this run "
                       "folder)" if state.earlier else "")
            exc = BudgetExceeded(
                f"call not sent: spend ${state.spent:.4f}{earlier} plus this call's worst "
                f"case ${estimate:.4f} would pass --max-cost ${state.max_cost:.4f}")
            return estimate, self.fail(request, key, f"BudgetExceeded: {exc}")
        return estimate, None

    def fail(self, request: LLMRequest, key: str, error: str, *, latency: float = 0.0,
              source: Source = "none", request_id: str | None = None) -> LLMResponse:
        record = CallRecord(key=key, model=request.model, purpose=request.purpose,
                            source=source, latency_s=latency, request_id=request_id,
                            error=scrub(error, self._secrets()))
        self._record(record)
        return LLMResponse(text="", message=None, record=record)

    def finish(self, request: LLMRequest, key: str, message: dict[str, Any], source: Source,
                latency: float, validate: Validator | None,
                request_id: str | None = None, fake: bool = False) -> LLMResponse:
        """Account for an answer, check it, and store it when it is complete and valid.

        A key the server echoed (whole or in part) is redacted first, so it reaches
        neither cache, cassette, rows nor report; usage figures that are not finite
        non-negative numbers make the answer an error instead of a bill.
        """
        message = scrub_value(message, self._secrets())
        text = answer_text(message, request.structured)
        stop = message.get("stop_reason")
        billed = source in ("api", "batch")
        usage = message.get("usage") or {}
        tokens, bad_usage = usage_tokens(usage) if billed else (dict.fromkeys(TOKEN_FIELDS, 0),
                                                                None)
        cost = self.prices.cost(request.model, batch=source == "batch", **tokens)
        error = None
        if bad_usage:
            error = f"unusable answer: {bad_usage}"
        elif stop == "refusal":
            error = "model refused to answer (stop_reason refusal)"
        elif validate is not None:
            problem = validate(text)
            if problem and request.structured == "tool" and stop != "max_tokens" \
                    and not _calls_a_tool(message):
                problem = ignored_tool_message(message_text(message))
            if problem:
                cut = (f"the answer was cut at max_tokens={request.max_tokens}; "
                       if stop == "max_tokens" else "")
                error = f"{INVALID_OUTPUT} (stop_reason {stop}): {cut}{problem}"
        if billed and self.cassette is not None:
            self.cassette.add(key, request.to_params(), message, self.target.label())
        if (billed and error is None and stop in COMPLETE_STOP_REASONS
                and self._keeps(fake)):
            try:
                self.cache.put(self.target.scope(key), request.model, message)
            except LLMError as exc:  # a paid answer is kept even when it cannot be stored
                self.access.cache_failed(str(exc))
        record = CallRecord(key=key, model=request.model, purpose=request.purpose,
                            source=source, cost_usd=cost if billed else 0.0, latency_s=latency,
                            request_id=request_id or message.get("_request_id"),
                            stop_reason=stop, error=error, **tokens)
        self._record(record)
        return LLMResponse(text=text, message=message, record=record)

    # -- single calls ---------------------------------------------------------------------
    def complete(self, request: LLMRequest, *, repeat: int = 0,
                 validate: Validator | None = None) -> LLMResponse:
        """Answer one request (from cache, cassette or the API); never raises for API errors.

        Args:
            request: what to ask.
            repeat: which repeat of the same request this is; repeats are cached apart.
            validate: checks the answer text; a problem makes it an error, not cached.
        """
        key = request.key(repeat)
        found = self.lookup(request, key, validate)
        if found is not None:
            return found
        if self.use_batches:  # free answers above come at once; the rest join a batch
            return self._batcher.submit(request, repeat, validate).result()
        scoped = self.target.scope(key)
        leads, pending = self.access.lead(scoped)
        if not leads:
            try:
                return self._shared(request, key, pending.result())
            except CallAbandoned:  # the first caller went away: ask ourselves
                return self._call(request, key, validate)
        response = None
        try:
            response = self._call(request, key, validate)
        finally:
            self.access.settle(scoped, pending, response)
        return response

    async def acomplete(self, request: LLMRequest, *, repeat: int = 0,
                        validate: Validator | None = None) -> LLMResponse:
        """Async twin of `complete`, limited by the endpoint's slots on this loop."""
        key = request.key(repeat)
        found = self.lookup(request, key, validate)
        if found is not None:
            return found
        if self.use_batches:
            return await asyncio.wrap_future(self._batcher.submit(request, repeat, validate))
        scoped = self.target.scope(key)
        leads, pending = self.access.lead(scoped)
        if not leads:
            try:
                return self._shared(request, key, await asyncio.wrap_future(pending))
            except CallAbandoned:
                return await self._acall(request, key, validate)
        response = None
        try:
            response = await self._acall(request, key, validate)
        finally:
            self.access.settle(scoped, pending, response)
        return response

    def _shared(self, request: LLMRequest, key: str, first: LLMResponse) -> LLMResponse:
        """The answer of an identical call in flight, recorded as sent by none."""
        record = replace(first.record, key=key, source="shared", input_tokens=0,
                         output_tokens=0, cache_read_input_tokens=0,
                         cache_creation_input_tokens=0, cost_usd=0.0,
                         purpose=request.purpose)
        self._record(record)
        return LLMResponse(text=first.text, message=first.message, record=record)

    def _call(self, request: LLMRequest, key: str, validate: Validator | None) -> LLMResponse:
        if self.access.stopping:
            return self.fail(request, key, f"{STOPPED_CALL}; this call was not sent")
        estimate, refused = self.admit(request, key, batch=False)
        if refused is not None:
            return refused
        with self.access.thread_slots(self.target):
            started = time.perf_counter()  # latency is the model's, not the queue's
            try:
                answer = self._send(request)
            except Exception as exc:  # an API failure is recorded, never raised into the run
                self.budget.settle(estimate, 0.0)
                return self.fail(request, key, call_error(request, exc),
                                  latency=time.perf_counter() - started,
                                  request_id=_request_id_of(exc))
        return self._settled(request, key, answer, estimate, started, validate)

    async def _acall(self, request: LLMRequest, key: str,
                     validate: Validator | None) -> LLMResponse:
        if self.access.stopping:
            return self.fail(request, key, f"{STOPPED_CALL}; this call was not sent")
        estimate, refused = self.admit(request, key, batch=False)
        if refused is not None:
            return refused
        client, slots = self._async_sdk()
        async with slots:
            started = time.perf_counter()
            try:
                answer = await self._asend(request, client)
            except Exception as exc:  # recorded, as in complete
                self.budget.settle(estimate, 0.0)
                return self.fail(request, key, call_error(request, exc),
                                  latency=time.perf_counter() - started,
                                  request_id=_request_id_of(exc))
        return self._settled(request, key, answer, estimate, started, validate)

    def _settled(self, request: LLMRequest, key: str, answer: tuple[Any, Any], estimate: float,
                 started: float, validate: Validator | None) -> LLMResponse:
        latency = time.perf_counter() - started
        raw, message = answer
        request_id = raw.headers.get("request-id") or raw.headers.get("x-request-id")
        if not hasattr(message, "model_dump"):  # a 200 whose body is not a JSON message
            self.budget.settle(estimate, 0.0)
            return self.fail(request, key, "unusable answer: the server's 200 response is "
                             f"not a JSON {self.target.transport} API body "
                             f"({str(message)[:80]!r})", latency=latency, source="api",
                             request_id=request_id)
        body = message.model_dump(mode="json", exclude_none=True)
        if self.target.transport == "openai":
            if not body.get("choices"):  # an error or an empty body under a 200
                self.budget.settle(estimate, 0.0)
                detail = str(body.get("error") or body)[:200]
                return self.fail(request, key, "unusable answer: the server's 200 response "
                                 f"has no choices ({detail})", latency=latency, source="api",
                                 request_id=request_id)
            body = message_body(body, request.max_tokens)
        response = self.finish(request, key, body, "api", latency, validate,
                                request_id=request_id,
                                fake=bool(raw.headers.get(FAKE_SERVER_HEADER)))
        self.budget.settle(estimate, response.record.cost_usd or 0.0)
        return response

    def count_tokens(self, request: LLMRequest) -> int:
        """Input tokens of `request` per the API's counter (a live call, never cached)."""
        if self.target.transport != "anthropic":
            raise LLMError("count_tokens is a Messages API call; Chat Completions servers "
                           "have no token counter")
        body = request.to_params()
        body.pop("max_tokens", None)
        named = named_params(anthropic.resources.messages.Messages.count_tokens)
        return int(self.sync_client.messages.count_tokens(
            **sdk_kwargs(body, named)).input_tokens)

    # -- many calls ---------------------------------------------------------------------
    def run_batch(self, items: Sequence[tuple[LLMRequest, int]], *,
                  validate: Validator | None = None) -> list[LLMResponse]:
        """Answer many requests at once; answers come back in `items` order.

        With `use_batches` they go through the Message Batches API (half price, slow);
        otherwise they are sent concurrently. Cache and cassette apply either way.

        Args:
            items: `(request, repeat)` pairs.
            validate: as for `complete`.
        """
        if not self.use_batches:  # threads, so this works inside a running event loop too
            with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
                return list(pool.map(lambda item: self.complete(item[0], repeat=item[1],
                                                                validate=validate), items))
        return run_message_batch(self, [(r, n, validate) for r, n in items])


def _calls_a_tool(message: dict[str, Any]) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_use"
               for b in message.get("content") or [])


def call_error(request: LLMRequest, exc: BaseException) -> str:
    """Why a call failed; a server refusing the structured mode asked for is told so,
    with the mode to use instead."""
    text = describe_exception(exc)
    status = getattr(exc, "status_code", None)  # either SDK's APIStatusError
    if isinstance(status, int) and status >= 400 and status not in OVERLOADED \
            and request.structured != "prompt" and rejects_mode(request.structured, text):
        return rejection_message(request.structured, text)
    return text


def _request_id_of(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    return headers.get("request-id") or headers.get("x-request-id")
