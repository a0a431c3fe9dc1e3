"""The model door: cache, replay, retries, budget, cost, batches, secrecy — via the real SDK."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import threading
from pathlib import Path

import pytest

from memeval.llm import (
    Cassette,
    LLMClient,
    LLMRequest,
    PriceTableError,
    ResponseCache,
    load_prices,
)
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door

KEY = "test-key-not-secret"
SCHEMA = {"type": "object",
          "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
          "required": ["selected_memories"], "additionalProperties": False}
MANIFEST = ("- [feedback] testing.md (2026-11-30T12:00:00.000Z): run tests against a real db\n"
            "- [user] role.md (2026-11-29T12:00:00.000Z): user is a data scientist")
CLOSED_URL = "http://127.0.0.1:9"  # discard port: nothing listens, any call would fail


def request(query: str = "how do I run the tests?", model: str = "claude-sonnet-4-6",
            max_tokens: int = 256) -> LLMRequest:
    return LLMRequest(model=model, max_tokens=max_tokens, system="pick memories",
                      messages=({"role": "user", "content":
                                 f"Query: {query}\n\nAvailable memories:\n{MANIFEST}"},),
                      output_schema=SCHEMA, purpose="selector")


def client(server: FakeMessagesServer | None = None, **kwargs) -> LLMClient:
    return open_door(server.url if server else CLOSED_URL, api_key=KEY,
                     max_retries=kwargs.pop("max_retries", 2), **kwargs)


def fixed_usage(body):
    return {"content": [{"type": "text", "text": '{"selected_memories": []}'}],
            "usage": {"input_tokens": 1000, "output_tokens": 200,
                      "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 400}}


def test_request_body_carries_structured_output_config():
    body = request().to_params()
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "temperature" not in body
    with FakeMessagesServer() as server:
        client(server).complete(request())
    (logged,) = server.message_requests()
    assert logged.body == body


def test_key_depends_on_request_and_repeat():
    assert request().key(0) == request().key(0)
    assert request().key(0) != request().key(1)
    assert request().key(0) != request("other query").key(0)
    assert len(request().key()) == 64


def test_success_records_tokens_cost_latency_and_request_id():
    with FakeMessagesServer(fixed_usage) as server:
        door = client(server)
        response = door.complete(request())
    record = response.record
    assert response.ok and response.text == '{"selected_memories": []}'
    assert (record.input_tokens, record.output_tokens) == (1000, 200)
    assert (record.cache_read_input_tokens, record.cache_creation_input_tokens) == (3000, 400)
    # sonnet: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens
    expected = (1000 * 3 + 200 * 15 + 3000 * 0.30 + 400 * 3.75) / 1e6
    assert record.cost_usd == pytest.approx(expected)
    assert record.request_id.startswith("req_fake_") and record.latency_s > 0
    assert door.usage.calls == 1 and door.usage.cost_usd == pytest.approx(expected)


def test_cache_hit_on_rerun_makes_zero_calls(tmp_path):
    with FakeMessagesServer() as server:
        first = client(server, cache=tmp_path / "cache.sqlite").complete(request())
        calls = len(server.requests)
        door = client(server, cache=tmp_path / "cache.sqlite")  # a rerun, same endpoint
        again = door.complete(request())
        assert len(server.requests) == calls
    assert again.text == first.text and again.record.source == "cache"
    assert door.usage.calls == 0 and door.usage.cached == 1 and door.usage.cost_usd == 0


def test_repeats_are_cached_apart(tmp_path):
    with FakeMessagesServer() as server:
        door = client(server, cache=tmp_path / "c.sqlite")
        door.complete(request(), repeat=0)
        door.complete(request(), repeat=1)
        door.complete(request(), repeat=0)
    assert len(server.message_requests()) == 2
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 2


def test_errors_are_recorded_and_never_cached(tmp_path):
    with FakeMessagesServer() as server:
        server.inject(Fault.http(500))
        door = client(server, cache=tmp_path / "c.sqlite", max_retries=0)
        failed = door.complete(request())
        retried = door.complete(request())
    assert not failed.ok and "HTTP 500" in failed.error and failed.record.source == "none"
    assert retried.ok and retried.record.source == "api"
    assert len(server.message_requests()) == 2


def test_refusals_and_invalid_output_are_not_cached(tmp_path):
    def refuse(body):
        return {"content": [{"type": "text", "text": "I can't"}], "stop_reason": "refusal"}

    with FakeMessagesServer(refuse) as server:
        door = client(server, cache=tmp_path / "c.sqlite")
        refused = door.complete(request())
        door.complete(request())
    assert "refused" in refused.error and len(server.message_requests()) == 2
    with FakeMessagesServer(lambda body: "not json") as server:
        door = client(server, cache=tmp_path / "c.sqlite")
        bad = door.complete(request(), validate=lambda text: "not json" if text[0] != "{" else None)
        door.complete(request(), validate=lambda text: "not json")
    assert bad.error.startswith("invalid output") and len(server.message_requests()) == 2
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 0


def test_retry_then_success_on_529():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(529), Fault.http(529))
        response = client(server, max_retries=2).complete(request())
    assert response.ok and len(server.message_requests()) == 3


def _write_many(path: str, prefix: str) -> None:
    cache = ResponseCache(path)
    for i in range(40):
        cache.put(f"{prefix}{i}", "m", {"content": [], "i": i})


def test_cache_is_safe_for_concurrent_threads_and_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path)
    ctx = multiprocessing.get_context("fork")  # spawn would re-import the SDK: seconds
    procs = [ctx.Process(target=_write_many, args=(path, f"p{n}-")) for n in range(2)]
    threads = [threading.Thread(target=_write_many, args=(path, f"t{n}-")) for n in range(3)]
    for worker in [*procs, *threads]:
        worker.start()
    for worker in [*procs, *threads]:
        worker.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert len(ResponseCache(path)) == 200
    assert ResponseCache(path).get("p1-39") == {"content": [], "i": 39}


def test_record_then_replay_without_any_server(tmp_path):
    tape = tmp_path / "tape.jsonl"
    with FakeMessagesServer() as server:
        live = client(server, record=tape).complete(request())
        url = server.url
    door = open_door(url, api_key=KEY, replay=tape)
    replayed = door.complete(request())  # the server is gone: the answer is the tape's
    assert replayed.ok and replayed.text == live.text and replayed.record.source == "replay"
    assert door.usage.calls == 0 and door.usage.cached == 1


def test_a_cassette_never_replays_one_servers_answers_for_another(tmp_path):
    """Recorded from the loopback fake, replayed for the real API: a miss naming both."""
    tape = tmp_path / "tape.jsonl"
    with FakeMessagesServer() as server:
        client(server, record=tape).complete(request())
        url = server.url
    missed = open_door(api_key=KEY, replay=tape).complete(request())
    assert not missed.ok and missed.record.source == "none"
    assert url in missed.error and "https://api.anthropic.com" in missed.error


def test_replay_of_an_unknown_request_fails_clearly(tmp_path):
    tape = tmp_path / "tape.jsonl"
    with FakeMessagesServer() as server:
        client(server, record=tape).complete(request())
    missed = client(None, replay=tape).complete(request("new query"))
    assert not missed.ok
    assert "CassetteMiss" in missed.error and str(tape) in missed.error
    assert "re-record" in missed.error


def test_replay_of_a_missing_cassette_names_the_file(tmp_path):
    with pytest.raises(Exception, match="cassette not found"):
        Cassette(tmp_path / "nope.jsonl", "replay")


def test_no_key_or_auth_header_in_cassette_cache_or_log(tmp_path, monkeypatch):
    secret = "sk-ant-" + "test-key-not-secret-0123456789"  # built, so scanners see no key
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    with FakeMessagesServer() as server:
        door = open_door(server.url, cache=tmp_path / "c.sqlite",
                         record=tmp_path / "tape.jsonl",
                         log_path=tmp_path / "calls.jsonl", batches=True,
                         poll_interval=0.01, batch_window=0.0)
        door.complete(request())
        door.run_batch([(request("who is the user"), 0)])
    assert any(r.header("authorization") or r.header("x-api-key") for r in server.requests)
    for file in tmp_path.iterdir():
        data = file.read_bytes().lower()
        for needle in (secret.lower(), b"x-api-key", b"authorization", b"bearer "):
            needle = needle.encode() if isinstance(needle, str) else needle
            assert needle not in data, f"{needle!r} leaked into {file.name}"


def test_budget_stops_new_calls_and_says_so():
    with FakeMessagesServer() as server:
        door = client(server, max_cost=1e-9)
        response = door.complete(request())
    assert server.requests == []
    assert "BudgetExceeded" in response.error and "--max-cost" in response.error
    summary = door.summary()
    assert summary["budget_exhausted"] and summary["calls_refused_by_budget"] == 1


def test_budget_allows_calls_until_spend_would_pass_it():
    # each call's worst case is about 256 output tokens at $15/M plus input: ~ $0.0045
    with FakeMessagesServer(fixed_usage) as server:
        door = client(server, max_cost=0.02)
        results = [door.complete(request(), repeat=n) for n in range(5)]
    spent = sum(r.record.cost_usd or 0 for r in results)
    assert [r.ok for r in results].count(True) == 2  # each real call costs $0.0069
    assert spent <= 0.02 and door.summary()["budget_exhausted"]


def test_unknown_model_has_no_cost_and_blocks_a_budget():
    with FakeMessagesServer() as server:
        free = client(server).complete(request(model="my-local-model"))
        blocked = client(server, max_cost=1.0).complete(request(model="my-local-model"))
    assert free.ok and free.record.cost_usd is None
    assert "no price" in blocked.error


def test_price_table_prefixes_override_and_errors(tmp_path):
    table = load_prices()
    assert table.price_for("claude-sonnet-4-5-20250929") == table.price_for("claude-sonnet-4-5")
    assert table.price_for("claude-opus-4-1-x").input == 15.0
    assert table.cost("claude-haiku-4-5", input_tokens=10**6, batch=True) == pytest.approx(0.5)
    custom = tmp_path / "prices.json"
    custom.write_text(json.dumps({"models": {"m": {"input": 1, "output": 2, "cache_write": 0,
                                                   "cache_read": 0}}}))
    assert load_prices(custom).cost("m", input_tokens=10**6, output_tokens=10**6) == 3.0
    custom.write_text('{"models": {"m": {"input": 1}}}')
    with pytest.raises(PriceTableError, match=r"prices.json: models.m: needs numeric"):
        load_prices(custom)
    with pytest.raises(PriceTableError, match="cannot read"):
        load_prices(tmp_path / "missing.json")


def test_a_users_price_file_extends_the_bundled_table(tmp_path):
    """One local model priced without copying every Claude price (issue 17)."""
    custom = tmp_path / "local.json"
    custom.write_text(json.dumps({"models": {"qwen3:8b": {"input": 0, "output": 0}}}))
    table = load_prices(custom)
    assert table.cost("qwen3:8b", input_tokens=10**6) == 0.0  # free, not unpriced
    assert table.price_for("claude-sonnet-4-6") == load_prices().price_for("claude-sonnet-4-6")
    assert table.batch_discount == load_prices().batch_discount and str(custom) in table.source


def test_async_calls_respect_the_concurrency_limit():
    active, peak, lock = [0], [0], threading.Lock()

    def slow(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        threading.Event().wait(0.05)
        with lock:
            active[0] -= 1
        return '{"selected_memories": []}'

    with FakeMessagesServer(slow) as server:
        door = client(server, max_concurrency=2)

        async def many():
            return await asyncio.gather(*(door.acomplete(request(), repeat=n) for n in range(6)))

        responses = asyncio.run(many())
    assert all(r.ok for r in responses) and peak[0] == 2


@pytest.mark.parametrize("asynchronous", [True, False])
def test_the_door_keeps_a_connection_alive_per_call_in_flight(asynchronous):
    """httpx alone keeps 20 connections alive: with more calls in flight, most calls
    would open a new connection. The door's pool keeps one per call in flight."""
    in_flight = 40

    def slow(body):
        threading.Event().wait(0.05)
        return '{"selected_memories": []}'

    with FakeMessagesServer(slow) as server:
        door = client(server, max_concurrency=in_flight)
        calls = [(request(), n) for n in range(3 * in_flight)]
        if asynchronous:
            async def waves():
                return await asyncio.gather(*(door.acomplete(r, repeat=n) for r, n in calls))

            responses = asyncio.run(waves())
        else:
            responses = door.run_batch(calls)
        peers = {r.peer for r in server.message_requests()}
    assert all(r.ok for r in responses)
    assert len(server.message_requests()) == 3 * in_flight
    assert in_flight // 2 <= len(peers) <= in_flight


def test_batch_mode_end_to_end(tmp_path):
    items = [(request(), 0), (request("who is the user"), 0), (request(), 0)]
    with FakeMessagesServer(batch_polls=3) as server:
        door = client(server, batches=True, poll_interval=0.01, cache=tmp_path / "c.sqlite")
        answers = door.run_batch(items)
        port = int(server.url.rsplit(":", 1)[1])
    paths = [(r.method, r.path.split("/")[-1]) for r in server.requests]
    assert paths[0] == ("POST", "batches") and paths[-1] == ("GET", "results")
    # 3 polls, then the SDK retrieves once more inside results(), then the JSONL
    assert sum(1 for p in paths if p[0] == "GET") == 5
    assert len(server.requests[0].body["requests"]) == 2  # the duplicate was asked once
    assert [json.loads(a.text)["selected_memories"] for a in answers] == [
        ["testing.md"], ["role.md"], ["testing.md"]]
    assert {a.record.source for a in answers} == {"batch"}
    full = load_prices().cost("claude-sonnet-4-6", input_tokens=answers[0].record.input_tokens,
                              output_tokens=answers[0].record.output_tokens)
    assert answers[0].record.cost_usd == pytest.approx(full / 2)
    with FakeMessagesServer(batch_polls=3, port=port) as same:  # the same endpoint
        again = client(same, batches=True, cache=tmp_path / "c.sqlite").run_batch(items)
    assert same.requests == [] and {a.record.source for a in again} == {"cache"}


def test_batch_failure_is_recorded_per_request():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(400))
        answers = client(server, batches=True, max_retries=0).run_batch([(request(), 0)])
    assert "batch failed" in answers[0].error and "HTTP 400" in answers[0].error


def test_run_batch_without_batches_sends_concurrently():
    with FakeMessagesServer() as server:
        answers = client(server).run_batch([(request(), 0), (request(), 1)])
    assert all(a.record.source == "api" for a in answers)
    assert len(server.message_requests()) == 2


def test_count_tokens_matches_server():
    with FakeMessagesServer() as server:
        door = client(server)
        counted = door.count_tokens(request())
        sent = door.complete(request())
    assert counted == sent.record.input_tokens


def test_log_file_has_one_record_per_call(tmp_path):
    log = tmp_path / "calls.jsonl"
    with FakeMessagesServer() as server:
        door = client(server, log_path=log)
        door.complete(request())
        door.complete(request(model="unknown"), repeat=1)
    lines = [json.loads(line) for line in Path(log).read_text().splitlines()]
    assert [line["model"] for line in lines] == ["claude-sonnet-4-6", "unknown"]
    assert lines[0]["source"] == "api" and lines[0]["error"] is None


def test_single_calls_are_gathered_into_one_batch_when_batching():
    from concurrent.futures import ThreadPoolExecutor

    queries = ["how do I run the tests?", "who is the user", "what's the weather"]
    with FakeMessagesServer() as server:
        # max 3 per batch and a long window: the batch goes as soon as all three queued
        door = client(server, batches=True, poll_interval=0.01, batch_window=60,
                      batch_max=3)
        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(lambda q: door.complete(request(q)), queries))

        async def one_async():
            return await door.acomplete(request("a scientist user"))

        door._batcher.window = 0.0  # alone: send right away
        lone = asyncio.run(one_async())
    creates = [r for r in server.requests if r.path == "/v1/messages/batches"]
    assert [len(c.body["requests"]) for c in creates] == [3, 1]
    assert not server.message_requests()
    assert [json.loads(a.text)["selected_memories"] for a in answers] == [
        ["testing.md"], ["role.md"], []]
    assert lone.record.source == "batch" and json.loads(lone.text)["selected_memories"] == [
        "role.md"]


def test_client_is_a_context_manager_and_reopens_after_close():
    with FakeMessagesServer() as server, client(server) as door:
        assert door.complete(request()).ok
        door.close()
        assert door.complete(request(), repeat=1).ok
    assert len(server.message_requests()) == 2


def test_the_cache_never_serves_one_endpoints_answers_as_anothers(tmp_path):
    """A fake server's answers must not come back for the real endpoint (issue 17)."""
    from memeval.llm import LLMRequest
    from memeval.testing import FakeMessagesServer

    request = LLMRequest(model="claude-sonnet-4-6", max_tokens=50,
                         messages=({"role": "user", "content": "hello"},))
    cache = tmp_path / "shared.sqlite"
    with FakeMessagesServer() as fake, FakeMessagesServer() as other:
        first = open_door(fake.url, api_key="k", cache=cache).complete(request)
        assert first.ok and first.record.source != "cache"
        again = open_door(fake.url, api_key="k", cache=cache).complete(request)
        assert again.record.source == "cache"  # same endpoint: served from the cache
        elsewhere = open_door(other.url, api_key="k", cache=cache).complete(request)
        assert elsewhere.record.source != "cache" and len(other.message_requests()) == 1


def test_a_corrupt_cache_is_one_error_naming_the_file_and_the_fix(tmp_path):
    from memeval.llm.cache import ResponseCache
    from memeval.llm.errors import LLMError

    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", "m", {"content": []})
    data = bytearray(path.read_bytes())
    data[200:] = b"\xde\xad\xbe\xef" * ((len(data) - 200) // 4 + 1)  # a valid header, garbage
    path.write_bytes(bytes(data[:max(len(data), 8192)]))
    with pytest.raises(LLMError, match=r"c\.sqlite: the response cache is corrupt.*--no-cache"):
        ResponseCache(path)
