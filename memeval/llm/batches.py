"""Message Batches mode: send calls as one batch, poll until it ends, read the results.

Two ways in. `CallLedger.run_batch` sends a list of requests as one batch. With
`use_batches` on, single `complete` / `acomplete` calls are also batched: an
`AutoBatcher` gathers the calls that arrive within `batch_window` seconds (from
concurrent sessions, say) into one batch and wakes each caller with its answer,
so a runner needs no change to use batches.

Cache and cassette answers are taken first; only the rest are sent, each under its
request key as `custom_id` (64 hex digits fit the API's limit); identical requests
are asked once. A batch's id is written to the run's journal (`batch_journal`) before
it is polled, so a run that dies while waiting collects it on resume instead of
paying for it again. Each answer's latency is its share of the batch's wall time, so
summed latencies equal the wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from memeval.llm.errors import describe_exception
from memeval.llm.ledger import CallLedger, Validator
from memeval.llm.records import LLMResponse
from memeval.llm.request import LLMRequest

BatchItem = tuple[LLMRequest, int, Validator | None]  # request, repeat, validator


def run_message_batch(client: CallLedger, items: Sequence[BatchItem]) -> list[LLMResponse]:
    """Answer `items` in order, sending whatever cache and cassette cannot answer."""
    answers: dict[int, LLMResponse] = {}
    pending: dict[str, tuple[LLMRequest, float, Validator | None]] = {}
    waiting: dict[str, list[int]] = {}  # key -> positions in items
    for position, (request, repeat, validate) in enumerate(items):
        key = request.key(repeat)
        if key in waiting:  # the same request twice in one batch: ask once
            waiting[key].append(position)
            continue
        found = client.lookup(request, key, validate)
        if found is not None:
            answers[position] = found
            continue
        estimate, refused = client.admit(request, key, batch=True)
        if refused is not None:
            answers[position] = refused
            continue
        pending[key] = (request, estimate, validate)
        waiting[key] = [position]
    if pending:
        for key, response in _send(client, pending).items():
            for position in waiting[key]:
                answers[position] = response
    return [answers[i] for i in range(len(items))]


def _send(client: CallLedger, pending: dict[str, tuple[LLMRequest, float, Validator | None]]
          ) -> dict[str, LLMResponse]:
    """Answer `pending`: from batches an earlier attempt created (the journal's open
    ones holding any of these requests, polled rather than sent again), the rest from a
    new batch, recorded in the journal before it is polled."""
    sdk = client.sync_client
    started = time.perf_counter()
    journal, stash = client.batch_journal, client.batch_stash
    try:
        if journal is not None:
            for old in journal.open_batches(client.target.label(), set(pending) - set(stash)):
                stash.update(_results(client, sdk, old.batch_id))
                journal.read(old.batch_id)
        results = {key: stash.pop(key) for key in list(pending) if key in stash}
        fresh = [key for key in pending if key not in results]
        if fresh:
            batch = sdk.messages.batches.create(requests=[
                {"custom_id": key, "params": pending[key][0].to_params()} for key in fresh])
            if journal is not None:  # before polling: a crash from here on resumes it
                journal.created(batch.id, client.target.label(), fresh)
            results.update(_results(client, sdk, batch.id, batch))
            if journal is not None:
                journal.read(batch.id)
    except Exception as exc:  # the whole batch failed: every request records why
        error = f"batch failed: {describe_exception(exc)}"
        out = {}
        for key, (request, estimate, _) in pending.items():
            client.budget.settle(estimate, 0.0)
            out[key] = client.fail(request, key, error, source="batch")
        return out
    share = (time.perf_counter() - started) / len(pending)
    out = {}
    for key, (request, estimate, validate) in pending.items():
        result = results.get(key)
        if result is not None and result.type == "succeeded":
            body = result.message.model_dump(mode="json", exclude_none=True)
            response = client.finish(request, key, body, "batch", share, validate)
            client.budget.settle(estimate, response.record.cost_usd or 0.0)
        else:
            client.budget.settle(estimate, 0.0)
            why = "missing from results" if result is None else result.type
            detail = getattr(getattr(result, "error", None), "error", None)
            message = getattr(detail, "message", "")
            response = client.fail(request, key, f"batch request {why}"
                                    + (f": {message}" if message else ""),
                                    latency=share, source="batch")
        out[key] = response
    return out


def _results(client: CallLedger, sdk: Any, batch_id: str, batch: Any = None) -> dict[str, Any]:
    """Poll batch `batch_id` until it ends, then its results by request key."""
    batch = batch or sdk.messages.batches.retrieve(batch_id)
    deadline = time.monotonic() + client.batch_wait
    while batch.processing_status != "ended":
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id} still {batch.processing_status} after "
                               f"{client.batch_wait:.0f}s; rerun the same command to "
                               "collect it (it is not sent again), or raise batch_wait")
        time.sleep(client.poll_interval)
        batch = sdk.messages.batches.retrieve(batch_id)
    return {line.custom_id: line.result for line in sdk.messages.batches.results(batch_id)}


class AutoBatcher:
    """Collects single calls for `window` seconds (or `max_size` calls) into one batch.

    Args:
        client: the door whose batches these are.
        window: seconds to wait after the first queued call for others to join.
        max_size: send at once when this many calls are queued.
    """

    def __init__(self, client: CallLedger, window: float, max_size: int) -> None:
        self.client = client
        self.window = window
        self.max_size = max_size
        self._queue: list[tuple[BatchItem, Future[LLMResponse]]] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, request: LLMRequest, repeat: int,
               validate: Validator | None) -> Future[LLMResponse]:
        future: Future[LLMResponse] = Future()
        with self._cond:
            self._queue.append(((request, repeat, validate), future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="memeval-batcher",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return future

    def _take(self) -> list[tuple[BatchItem, Future[LLMResponse]]]:
        with self._cond:
            if not self._queue:
                return []
            deadline = time.monotonic() + self.window
            while len(self._queue) < self.max_size:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            taken, self._queue = self._queue[: self.max_size], self._queue[self.max_size:]
            return taken

    def _run(self) -> None:
        while True:
            taken = self._take()
            if not taken:
                return  # idle: the next submit starts a new thread
            try:
                answers = run_message_batch(self.client, [item for item, _ in taken])
            except BaseException as exc:  # never leave a caller waiting forever
                for _, future in taken:
                    future.set_exception(exc)
                continue
            for (_, future), answer in zip(taken, answers, strict=True):
                future.set_result(answer)
