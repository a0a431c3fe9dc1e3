"""Calls in flight to one endpoint, adapted to what the server can take.

A rate-limited or overloaded server answers 429 or 529; the SDK retries after a
pause, but if every call in flight keeps coming back, the run spends its time in
back-off. `AdaptiveSlots` admits at most `limit` calls at once: the limit halves
when the server says it is overloaded (at most once per `cooldown`, so one burst of
refusals counts once) and grows back by one per `limit` successful answers, never
above the configured cap (additive increase, multiplicative decrease, as TCP does).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

OVERLOADED = frozenset({429, 529})
COOLDOWN_S = 1.0


@dataclass
class ThrottleLog:
    """What the server's pushback did, kept by the door across event loops."""

    overloaded_answers: int = 0  # 429/529 answers seen, retried ones included
    lowest_in_flight: int | None = None  # the smallest limit it came down to, if it did


class AdaptiveSlots:
    """An async limit on calls in flight, for one endpoint on one event loop.

    Args:
        cap: the most calls in flight (the door's `max_concurrency`).
        log: where overloads and cuts are tallied.
        cooldown: seconds after a cut before another overload can cut again.
    """

    def __init__(self, cap: int, log: ThrottleLog | None = None, *,
                 cooldown: float = COOLDOWN_S) -> None:
        self.cap = max(1, cap)
        self.limit = float(self.cap)
        self.log = log or ThrottleLog()
        self.in_flight = 0
        self.orphans = 0  # abandoned requests still holding a slot
        self._holding: set[asyncio.Future[None]] = set()
        self._cooldown = cooldown
        self._cut_at = -cooldown
        self._changed = asyncio.Condition()

    def observe(self, status: int) -> None:
        """Learn from one HTTP answer (every attempt, retries included)."""
        if status in OVERLOADED:
            self.log.overloaded_answers += 1
            now = time.monotonic()
            if now - self._cut_at >= self._cooldown:
                self._cut_at = now
                self.limit = max(1.0, self.limit / 2)
                self.log.lowest_in_flight = min(self.log.lowest_in_flight or self.cap,
                                                int(self.limit))
        elif 200 <= status < 300:
            self.limit = min(float(self.cap), self.limit + 1 / self.limit)

    async def __aenter__(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < int(self.limit))
            self.in_flight += 1

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        self.in_flight -= 1  # before the lock: a cancel while waiting for it loses no slot
        await self._notify()

    def hold(self, orphan: asyncio.Future[Any]) -> None:
        """Keep a slot taken until `orphan` ends: a request the run gave up on that the
        server may still be computing (see `memeval.llm.deadline`)."""
        self.in_flight += 1
        self.orphans += 1

        async def release() -> None:
            try:
                await asyncio.wait({orphan})
            finally:
                self.in_flight -= 1
                self.orphans -= 1
                await self._notify()

        task = asyncio.ensure_future(release())
        self._holding.add(task)
        task.add_done_callback(self._holding.discard)

    async def orphans_done(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the held requests to end."""
        if self._holding:
            await asyncio.wait(set(self._holding), timeout=timeout)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()
