"""The door backs off when the server says it is overloaded, and grows back."""

from __future__ import annotations

import asyncio
import threading

from memeval.llm.throttle import AdaptiveSlots
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door
from tests.test_llm_client import KEY, request


def test_overloads_halve_the_limit_once_per_burst_and_successes_grow_it_back():
    slots = AdaptiveSlots(16, cooldown=60.0)
    for _ in range(10):  # one burst of refusals: every call in flight came back 429
        slots.observe(429)
    assert slots.limit == 8 and slots.log.overloaded_answers == 10
    assert slots.log.lowest_in_flight == 8
    for _ in range(8):  # a round of successes at the new limit adds one
        slots.observe(200)
    assert 8.9 < slots.limit < 9.1
    for _ in range(1000):
        slots.observe(200)
    assert slots.limit == 16  # never above the cap
    slots.observe(500)  # a server error is not a sign of overload
    assert slots.limit == 16 and slots.log.lowest_in_flight == 8


def test_no_more_calls_than_the_limit_are_in_flight():
    slots = AdaptiveSlots(4, cooldown=0.0)
    slots.observe(529)  # limit 2
    peak, active = [0], [0]

    async def call() -> None:
        async with slots:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            await asyncio.sleep(0.01)
            active[0] -= 1

    async def many() -> None:
        await asyncio.gather(*(call() for _ in range(10)))

    asyncio.run(many())
    assert peak[0] == 2 and slots.in_flight == 0


def test_a_rate_limited_server_gets_fewer_calls_at_once_and_the_run_says_so():
    active, peak, lock = [0], [], threading.Lock()

    def slow(body):
        with lock:
            active[0] += 1
            peak.append(active[0])
        threading.Event().wait(0.05)
        with lock:
            active[0] -= 1
        return '{"selected_memories": []}'

    with FakeMessagesServer(slow) as server:
        server.inject(*[Fault.http(429)] * 8)  # the first eight attempts are refused
        door = open_door(server.url, api_key=KEY, max_retries=4, max_concurrency=8)

        async def many():
            return await asyncio.gather(*(door.acomplete(request(), repeat=n) for n in range(40)))

        responses = asyncio.run(many())
    assert all(r.ok for r in responses)  # retried through the refusals
    throttled = door.summary()
    assert throttled["overloaded_answers"] == 8
    assert throttled["lowest_in_flight"] == 4
    assert max(peak) <= 8
