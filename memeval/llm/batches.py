"""Message Batches mode: send a run's calls as one batch, poll until it ends, read results.

Cache and cassette answers are taken first; only the rest are sent, each under its
request key as `custom_id` (64 hex digits fit the API's limit). Each answer's
latency is its share of the batch's wall time, so summed latencies equal the wait.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memeval.llm.records import LLMResponse
from memeval.llm.request import LLMRequest

if TYPE_CHECKING:
    from memeval.llm.client import LLMClient, Validator


def run_message_batch(client: LLMClient, items: Sequence[tuple[LLMRequest, int]],
                      validate: Validator | None) -> list[LLMResponse]:
    """See `LLMClient.run_batch`."""
    from memeval.llm.client import describe_exception

    answers: dict[int, LLMResponse] = {}
    pending: dict[str, tuple[LLMRequest, float]] = {}  # key -> request, reserved estimate
    waiting: dict[str, list[int]] = {}  # key -> positions in items
    for position, (request, repeat) in enumerate(items):
        key = request.key(repeat)
        if key in waiting:  # the same request twice in one batch: ask once
            waiting[key].append(position)
            continue
        found = client._lookup(request, key, validate)
        if found is not None:
            answers[position] = found
            continue
        estimate, refused = client._admit(request, key, batch=True)
        if refused is not None:
            answers[position] = refused
            continue
        pending[key] = (request, estimate)
        waiting[key] = [position]
    if pending:
        for key, response in _send(client, pending, validate, describe_exception).items():
            for position in waiting[key]:
                answers[position] = response
    return [answers[i] for i in range(len(items))]


def _send(client: LLMClient, pending: dict[str, tuple[LLMRequest, float]],
          validate: Validator | None, describe: Any) -> dict[str, LLMResponse]:
    sdk = client.sync_client
    started = time.perf_counter()
    try:
        batch = sdk.messages.batches.create(requests=[
            {"custom_id": key, "params": request.to_params()}
            for key, (request, _) in pending.items()])
        deadline = time.monotonic() + client.batch_wait
        while batch.processing_status != "ended":
            if time.monotonic() > deadline:
                raise TimeoutError(f"batch {batch.id} still {batch.processing_status} after "
                                   f"{client.batch_wait:.0f}s; fetch it later or raise "
                                   "batch_wait")
            time.sleep(client.poll_interval)
            batch = sdk.messages.batches.retrieve(batch.id)
        results = {line.custom_id: line.result for line in sdk.messages.batches.results(batch.id)}
    except Exception as exc:  # the whole batch failed: every request records why
        error = f"batch failed: {describe(exc)}"
        out = {}
        for key, (request, estimate) in pending.items():
            client.budget.settle(estimate, 0.0)
            out[key] = client._fail(request, key, error, source="batch")
        return out
    share = (time.perf_counter() - started) / len(pending)
    out = {}
    for key, (request, estimate) in pending.items():
        result = results.get(key)
        if result is not None and result.type == "succeeded":
            body = result.message.model_dump(mode="json", exclude_none=True)
            response = client._finish(request, key, body, "batch", share, validate)
            client.budget.settle(estimate, response.record.cost_usd or 0.0)
        else:
            client.budget.settle(estimate, 0.0)
            why = "missing from results" if result is None else result.type
            detail = getattr(getattr(result, "error", None), "error", None)
            message = getattr(detail, "message", "")
            response = client._fail(request, key, f"batch request {why}"
                                    + (f": {message}" if message else ""),
                                    latency=share, source="batch")
        out[key] = response
    return out
