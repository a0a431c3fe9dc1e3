"""Deadlines below the SDK: no call may hang a run, whatever the server does.

The SDK's timeout bounds each read, not an attempt (a server that drips a byte every
few seconds never trips it), and it honours any `retry-after` (up to weeks). This
transport, under the SDK's HTTP client, gives every call a wall-clock deadline that
spans its attempts and retries: no attempt waits past it, each must deliver its
whole body before it, and a `retry-after` is cut to fit what is left of it (and to
`RETRY_AFTER_CAP_S`). A call past its deadline fails with an error naming the
option that changes it (`--deadline`, `deadline=`), which the client records as
that turn's error; the run goes on.

A server on this machine (llama.cpp, llama-cpp-python, Ollama...) is patient: a
timed-out attempt is not retried, and it is not abandoned either. Some of these
servers (llama-cpp-python) go on computing a request whose client left, so a
retry, or the next turn's call, would queue behind the orphan and time out in turn.
The transport answers the SDK at once with the timeout error, but keeps the
connection open in the background until the server answers, and the endpoint's
slot stays taken until then (`on_orphan`): the server never holds more requests
than the run allows it.

The deadline travels with the request in a header the client sets per call and this
transport removes before anything is sent.
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

try:  # the HTTP library under the anthropic SDK: httpx2 in recent releases, else httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

from memeval.llm.structured import asked_mode, rejects_mode

DEADLINE_HEADER = "x-memeval-deadline"
RETRY_AFTER_CAP_S = 60.0  # no server gets to park a run longer than this per retry
ORPHAN_CAP_S = 900.0  # a local answer still unfinished after 15 minutes is a hung server
OVERLOADED = frozenset({429, 529})  # pushback, not a verdict on the request's shape


@dataclass(frozen=True)
class Deadline:
    """When a call must be over (`at`, epoch seconds) and the budget it was given."""

    at: float
    seconds: float

    def left(self) -> float:
        return self.at - time.time()


def _deadline(request: httpx.Request) -> Deadline | None:
    raw = request.headers.pop(DEADLINE_HEADER, None)
    try:
        at, seconds = (raw or "").split()
        return Deadline(float(at), float(seconds))
    except ValueError:
        return None


def _left(deadline: Deadline | None, request: httpx.Request) -> float | None:
    if deadline is None:
        return None
    left = deadline.left()
    if left <= 0:
        raise httpx.ReadTimeout(_deadline_text(deadline.seconds), request=request)
    return left


def _deadline_text(seconds: float) -> str:
    return (f"memeval: the call's deadline ({seconds:g} s, retries included) passed; the "
            "server is too slow or stalling. Raise it with --deadline SECONDS (or "
            "deadline=SECONDS in the spec)")


def _timeout_text(seconds: float) -> str:
    return (f"memeval: no answer within the per-attempt timeout ({seconds:g} s); not "
            "retried, since a server on this machine may still be computing it. Raise "
            "it with --timeout SECONDS (or timeout=SECONDS in the spec)")


def _gave_up(request: httpx.Request, message: str) -> httpx.Response:
    """A timeout answer the SDK does not retry."""
    return httpx.Response(
        504, request=request, headers={"x-should-retry": "false"},
        json={"type": "error", "error": {"type": "timeout_error", "message": message}})


def _expired(request: httpx.Request, deadline: Deadline) -> httpx.Response:
    return _gave_up(request, _deadline_text(deadline.seconds))


def _attempt_timeout(request: httpx.Request) -> float | None:
    """The SDK's per-attempt timeout, as httpx carries it on the request."""
    timeout = request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, int | float) else None


def _set_timeouts(request: httpx.Request, seconds: float, *, cap_only: bool) -> None:
    """Bound the attempt's connect/read/write/pool waits by `seconds` (`cap_only`: never
    raise one)."""
    timeout = request.extensions.get("timeout")
    if not isinstance(timeout, dict):
        request.extensions["timeout"] = dict.fromkeys(("connect", "read", "write", "pool"),
                                                      seconds)
        return
    request.extensions["timeout"] = {
        k: (seconds if v is None or not cap_only else min(float(v), seconds))
        for k, v in timeout.items()}


def _structured_rejection(request: httpx.Request, status: int, body: bytes) -> bool:
    """Whether an error answer refuses the structured mode the request asked for."""
    if status < 400 or status in OVERLOADED:
        return False
    try:
        mode = asked_mode(json.loads(request.content or b"{}"))
    except (ValueError, TypeError, AttributeError):
        return False
    return mode != "prompt" and rejects_mode(mode, body.decode("utf-8", "replace"))


def _error_answer(response: httpx.Response, body: bytes, request: httpx.Request,
                  deadline: Deadline | None) -> httpx.Response:
    """An error answer rebuilt from its read body; one refusing the structured mode
    asked for is marked not to be retried (it would only be refused again)."""
    headers = {k: v for k, v in response.headers.items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")}
    if _structured_rejection(request, response.status_code, body):
        headers["x-should-retry"] = "false"
    rebuilt = httpx.Response(response.status_code, headers=headers, content=body,
                             request=request)
    _cap_retry_after(rebuilt, None if deadline is None else deadline.left())
    return rebuilt


def _cap_retry_after(response: httpx.Response, left: float | None) -> None:
    for name in ("retry-after", "retry-after-ms"):
        raw = response.headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) / (1000 if name.endswith("ms") else 1)
        except ValueError:
            continue  # an HTTP date: the SDK parses it; rare enough to leave
        cap = RETRY_AFTER_CAP_S if left is None else min(RETRY_AFTER_CAP_S, max(left, 0.0))
        if left is not None and seconds >= left:
            response.headers["x-should-retry"] = "false"  # waiting would pass the deadline
        if seconds > cap:
            value = cap * 1000 if name.endswith("ms") else cap
            response.headers[name] = f"{value:.3f}"


class _TimedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, deadline: Deadline | None,
                 request: httpx.Request) -> None:
        self._inner, self._deadline, self._request = inner, deadline, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            _left(self._deadline, self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncTimedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, deadline: Deadline | None,
                 request: httpx.Request) -> None:
        self._inner, self._deadline, self._request = inner, deadline, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            _left(self._deadline, self._request)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


KEEP_ALIVE_AT_LEAST = 100  # what the SDKs keep by themselves (1 000 connections at most)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process: building one reads the CA bundle (tens of ms)."""
    return httpx.create_ssl_context()


def _pool(calls_in_flight: int) -> dict[str, Any]:
    """Connection pool settings for a transport of ours. httpx's own default keeps only
    20 connections alive, so a run with more calls in flight would open a new
    connection for most calls; the pool keeps one per call in flight."""
    return {"verify": _tls_context(),
            "limits": httpx.Limits(max_connections=max(1000, calls_in_flight),
                                   max_keepalive_connections=max(KEEP_ALIVE_AT_LEAST,
                                                                 calls_in_flight))}


class DeadlineTransport(httpx.BaseTransport):
    """Wraps a transport with the call's deadline (see the module docstring); a
    `patient` one (a server on this machine) does not retry a timed-out attempt."""

    def __init__(self, inner: httpx.BaseTransport | None = None, *,
                 calls_in_flight: int = 0, patient: bool = False) -> None:
        self._inner = inner or httpx.HTTPTransport(**_pool(calls_in_flight))
        self._patient = patient

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _deadline(request)
        if deadline is not None and deadline.left() <= 0:
            return _expired(request, deadline)
        attempt = _attempt_timeout(request)
        if deadline is not None:
            _set_timeouts(request, deadline.left(), cap_only=True)
        try:
            response = self._inner.handle_request(request)
        except httpx.TimeoutException:
            if deadline is not None and deadline.left() <= 0:
                return _expired(request, deadline)
            if self._patient and attempt is not None:
                return _gave_up(request, _timeout_text(attempt))
            raise
        if response.status_code >= 400:
            return _error_answer(response, response.read(), request, deadline)
        _cap_retry_after(response, None if deadline is None else deadline.left())
        response.stream = _TimedStream(response.stream, deadline, request)  # type: ignore[arg-type]
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncDeadlineTransport(httpx.AsyncBaseTransport):
    """The async twin of `DeadlineTransport`. A `patient` one keeps a timed-out
    attempt's connection open until the server answers, handing the wait to
    `on_orphan` (which holds the endpoint's slot until it ends)."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None, *,
                 calls_in_flight: int = 0,
                 on_status: Callable[[int], None] | None = None, patient: bool = False,
                 on_orphan: Callable[[asyncio.Future[Any]], None] | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport(**_pool(calls_in_flight))
        self._on_status = on_status  # told every answer's status (the door's throttle)
        self._patient = patient
        self._on_orphan = on_orphan

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _deadline(request)
        if deadline is not None and deadline.left() <= 0:
            return _expired(request, deadline)
        attempt = _attempt_timeout(request)
        if self._patient:
            answered = await self._patiently(request, deadline, attempt)
            if isinstance(answered, str):
                return _gave_up(request, answered)
            response = answered
        else:
            if deadline is not None:
                _set_timeouts(request, deadline.left(), cap_only=True)
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TimeoutException:
                if deadline is not None and deadline.left() <= 0:
                    return _expired(request, deadline)
                raise
        if self._on_status is not None:
            self._on_status(response.status_code)
        if response.status_code >= 400:
            return _error_answer(response, await response.aread(), request, deadline)
        _cap_retry_after(response, None if deadline is None else deadline.left())
        response.stream = _AsyncTimedStream(response.stream, deadline,  # type: ignore[arg-type]
                                            request)
        return response

    async def _patiently(self, request: httpx.Request, deadline: Deadline | None,
                         attempt: float | None) -> httpx.Response | str:
        """The server's answer, or why we stopped waiting for it (the request itself
        goes on in the background until the server answers)."""
        waits = [w for w in (attempt, None if deadline is None else deadline.left())
                 if w is not None]
        wait = min(waits) if waits else None
        _set_timeouts(request, ORPHAN_CAP_S, cap_only=False)
        sent = asyncio.ensure_future(self._inner.handle_async_request(request))
        done, _ = await asyncio.wait({sent}, timeout=wait)
        if done:
            return sent.result()
        drained = asyncio.ensure_future(_drain(sent))
        if self._on_orphan is not None:
            self._on_orphan(drained)
        if deadline is not None and deadline.left() <= 0.001:
            return _deadline_text(deadline.seconds)
        return _timeout_text(attempt or 0.0)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _drain(sent: asyncio.Future[httpx.Response]) -> None:
    """Wait out an abandoned request: read and drop the server's late answer."""
    try:
        response = await sent
        await response.aread()
        await response.aclose()
    except Exception:  # a late answer that fails has nothing left to tell
        return


def deadline_headers(seconds: float) -> dict[str, str]:
    """The header that gives one call its deadline, `seconds` from now."""
    return {DEADLINE_HEADER: f"{time.time() + seconds:.3f} {seconds:g}"}
