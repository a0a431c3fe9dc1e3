"""Deadlines below the SDK: no call may hang a run, whatever the server does.

The SDK's timeout bounds each read, not an attempt (a server that drips a byte every
few seconds never trips it), and it honours any `retry-after` (up to weeks). This
transport, under the SDK's HTTP client, gives every call a wall-clock deadline that
spans its attempts and retries: each attempt must deliver its whole body before the
deadline, and a `retry-after` is cut to fit what is left of it (and to
`RETRY_AFTER_CAP_S`). A call past its deadline fails with a timeout, which the
client records as that turn's error; the run goes on.

The deadline travels with the request in a header the client sets per call and this
transport removes before anything is sent.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

try:  # the HTTP library under the anthropic SDK: httpx2 in recent releases, else httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

DEADLINE_HEADER = "x-memeval-deadline"
CALL_DEADLINE_S = 80.0  # a whole call, retries included; a selector call takes seconds
RETRY_AFTER_CAP_S = 60.0  # no server gets to park a run longer than this per retry


def _deadline(request: httpx.Request) -> float | None:
    raw = request.headers.pop(DEADLINE_HEADER, None)
    try:
        return None if raw is None else float(raw)
    except ValueError:
        return None


def _left(deadline: float | None, request: httpx.Request) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.time()
    if left <= 0:
        raise httpx.ReadTimeout("memeval: the call's deadline passed", request=request)
    return left


def _expired(request: httpx.Request) -> httpx.Response:
    """The answer once the deadline has passed: an error the SDK does not retry."""
    return httpx.Response(
        504, request=request, headers={"x-should-retry": "false"},
        json={"type": "error", "error": {
            "type": "timeout_error",
            "message": f"memeval: the call's deadline ({CALL_DEADLINE_S:g} s, retries "
                       "included) passed; the server is too slow or stalling"}})


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
    def __init__(self, inner: httpx.SyncByteStream, deadline: float | None,
                 request: httpx.Request) -> None:
        self._inner, self._deadline, self._request = inner, deadline, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            _left(self._deadline, self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncTimedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, deadline: float | None,
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
    """Wraps a transport with the call's deadline (see the module docstring)."""

    def __init__(self, inner: httpx.BaseTransport | None = None, *,
                 calls_in_flight: int = 0) -> None:
        self._inner = inner or httpx.HTTPTransport(**_pool(calls_in_flight))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _deadline(request)
        if deadline is not None and deadline <= time.time():
            return _expired(request)
        response = self._inner.handle_request(request)
        _cap_retry_after(response, None if deadline is None else deadline - time.time())
        response.stream = _TimedStream(response.stream, deadline, request)  # type: ignore[arg-type]
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncDeadlineTransport(httpx.AsyncBaseTransport):
    """The async twin of `DeadlineTransport`."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None, *,
                 calls_in_flight: int = 0,
                 on_status: Callable[[int], None] | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport(**_pool(calls_in_flight))
        self._on_status = on_status  # told every answer's status (the door's throttle)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _deadline(request)
        if deadline is not None and deadline <= time.time():
            return _expired(request)
        response = await self._inner.handle_async_request(request)
        if self._on_status is not None:
            self._on_status(response.status_code)
        _cap_retry_after(response, None if deadline is None else deadline - time.time())
        response.stream = _AsyncTimedStream(response.stream, deadline,  # type: ignore[arg-type]
                                            request)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def deadline_headers(seconds: float | None = None) -> dict[str, str]:
    """The header that gives one call its deadline, `seconds` (default
    `CALL_DEADLINE_S`) from now."""
    return {DEADLINE_HEADER: f"{time.time() + (seconds or CALL_DEADLINE_S):.3f}"}
