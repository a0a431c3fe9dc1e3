"""FakeMessagesServer speaks enough of the Messages API for the unchanged SDK."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anthropic
import pytest

from memeval.testing import FakeMessagesServer, Fault
from memeval.testing.keyword_model import judge_memories, select_memories

KEY = "test-key-not-secret"
SCHEMA = {"type": "object",
          "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
          "required": ["selected_memories"], "additionalProperties": False}
MANIFEST = ("- [feedback] testing.md (2026-11-30T12:00:00.000Z): run tests against a real db\n"
            "- [user] role.md (2026-11-29T12:00:00.000Z): user is a data scientist\n"
            "- deploy.md (2026-11-28T12:00:00.000Z): deploy steps for the staging database")


def sdk(server: FakeMessagesServer, retries: int = 2) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=retries)


def select_body(query: str) -> dict:
    return {"model": "claude-sonnet-4-6", "max_tokens": 256,
            "messages": [{"role": "user",
                          "content": f"Query: {query}\n\nAvailable memories:\n{MANIFEST}"}],
            "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}}


def test_sdk_gets_a_structured_answer_with_usage_and_request_id():
    with FakeMessagesServer() as server:
        message = sdk(server).messages.create(**select_body("how do I run the tests?"))
    assert json.loads(message.content[0].text) == {"selected_memories": ["testing.md"]}
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0
    assert message._request_id.startswith("req_fake_")


def test_request_log_keeps_body_and_redacts_credentials():
    with FakeMessagesServer() as server:
        sdk(server).messages.create(**select_body("run the tests"))
    (logged,) = server.message_requests()
    assert logged.body["output_config"]["format"]["schema"] == SCHEMA
    assert KEY not in json.dumps(logged.headers)
    assert (logged.header("authorization") or logged.header("x-api-key")) == "<redacted>"


def test_missing_credentials_get_401():
    with FakeMessagesServer() as server:
        req = urllib.request.Request(f"{server.url}/v1/messages", method="POST",
                                     data=json.dumps(select_body("x y")).encode(),
                                     headers={"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
    assert info.value.code == 401
    assert json.loads(info.value.read())["error"]["type"] == "authentication_error"


@pytest.mark.parametrize("fault", [Fault.http(529), Fault.http(429), Fault.http(500),
                                   Fault("drop"), Fault("truncated")])
def test_sdk_retries_through_injected_faults(fault):
    with FakeMessagesServer() as server:
        server.inject(fault)
        message = sdk(server).messages.create(**select_body("run the tests"))
    assert json.loads(message.content[0].text)["selected_memories"] == ["testing.md"]
    assert len(server.message_requests()) == 2


def test_status_fault_surfaces_as_sdk_error_when_retries_run_out():
    with FakeMessagesServer() as server:
        server.inject(Fault.http(529), Fault.http(529))
        with pytest.raises(anthropic.APIStatusError) as info:
            sdk(server, retries=1).messages.create(**select_body("run the tests"))
    assert info.value.status_code == 529


def test_malformed_body_is_not_a_message():
    with FakeMessagesServer() as server:
        server.inject(Fault("malformed"))
        with pytest.raises(Exception) as info:
            sdk(server, retries=0).messages.create(**select_body("run the tests"))
    assert "JSON" in type(info.value).__name__ or "json" in str(info.value).lower() \
        or "Expecting" in str(info.value)


def test_pluggable_behaviour_and_full_message_override():
    def behaviour(body):
        return {"content": [{"type": "text", "text": "no"}], "stop_reason": "refusal"}

    with FakeMessagesServer(behaviour) as server:
        message = sdk(server).messages.create(**select_body("anything at all"))
    assert message.stop_reason == "refusal" and message.content[0].text == "no"


def test_prompt_cache_accounting_writes_then_reads_the_prefix():
    system = [{"type": "text", "text": "x" * 400, "cache_control": {"type": "ephemeral"}}]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 10, "system": system,
            "messages": [{"role": "user", "content": "abcd" * 5}]}
    with FakeMessagesServer() as server:
        first = sdk(server).messages.create(**body).usage
        second = sdk(server).messages.create(**body).usage
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (100, 0)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, 100)
    assert first.input_tokens == second.input_tokens == 5


def test_short_prefixes_are_not_cached_below_the_minimum():
    system = [{"type": "text", "text": "x" * 40, "cache_control": {"type": "ephemeral"}}]
    body = {"model": "m", "max_tokens": 10, "system": system,
            "messages": [{"role": "user", "content": "hi"}]}
    with FakeMessagesServer(min_cache_tokens=1024) as server:
        usage = sdk(server).messages.create(**body).usage
    assert usage.cache_creation_input_tokens == 0 and usage.input_tokens == 11


def test_count_tokens():
    body = select_body("run the tests")
    body.pop("max_tokens")
    with FakeMessagesServer() as server:
        counted = sdk(server).messages.count_tokens(**body)
        created = sdk(server).messages.create(**select_body("run the tests"))
    assert counted.input_tokens == created.usage.input_tokens


def test_batches_create_poll_and_results():
    with FakeMessagesServer(batch_polls=2) as server:
        client = sdk(server)
        batch = client.messages.batches.create(requests=[
            {"custom_id": "a", "params": select_body("run the tests")},
            {"custom_id": "b", "params": select_body("who is the user, a scientist?")}])
        assert batch.processing_status == "in_progress"
        assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
        assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded"
    assert json.loads(results["a"].message.content[0].text) == {
        "selected_memories": ["testing.md"]}
    assert json.loads(results["b"].message.content[0].text) == {
        "selected_memories": ["role.md"]}


def test_keyword_model_selects_by_overlap_most_shared_first():
    # deploy.md shares deploy, staging, database; testing.md only test: below 60% of the best
    assert select_memories(select_body("deploy the database tests to staging")) == ["deploy.md"]
    # one shared word each (test; staging): both kept, ties in manifest order
    assert select_memories(select_body("staging tests")) == ["testing.md", "deploy.md"]
    assert select_memories(select_body("real database tests")) == ["testing.md"]


def test_keyword_model_returns_empty_when_nothing_overlaps():
    assert select_memories(select_body("what's the weather like")) == []


def test_keyword_model_judges_memories_by_shared_words():
    text = ('<query>\nhow do I run the database tests\n</query>\n'
            '<memory key="testing.md">\nrun tests against a real database\n</memory>\n'
            '<memory key="role.md">\nuser is a data scientist\n</memory>')
    body = {"messages": [{"role": "user", "content": text}],
            "output_config": {"format": {"type": "json_schema", "schema": {
                "type": "object", "properties": {"verdicts": {}}}}}}
    verdicts = {v["key"]: v["verdict"] for v in judge_memories(body)["verdicts"]}
    assert verdicts == {"testing.md": "relevant", "role.md": "irrelevant"}


def test_latency_fault_still_answers():
    with FakeMessagesServer() as server:
        server.inject(Fault("latency", delay=0.05))
        message = sdk(server, retries=0).messages.create(**select_body("run the tests"))
    assert json.loads(message.content[0].text)["selected_memories"] == ["testing.md"]
    assert len(server.message_requests()) == 1


def test_unknown_route_and_bad_request_get_api_errors():
    with FakeMessagesServer() as server:
        with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
            sdk(server).post("/v1/messages", body={"model": "m", "messages": []},
                             cast_to=object)
        with pytest.raises(anthropic.NotFoundError):
            sdk(server).messages.batches.retrieve("msgbatch_missing")


def test_a_client_that_gives_up_leaves_no_traceback_behind(capfd):
    """The answer fails after the client reset the connection, often once the test
    that made it has ended: the stdlib would print a traceback into a later test."""
    import socket
    import struct
    import time

    body = json.dumps({"model": "m", "max_tokens": 5,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    with FakeMessagesServer(latency=0.2, require_auth=False) as fake:
        client = socket.create_connection(("127.0.0.1", fake.port))
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: "
                       b"application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # a reset, not a polite close: the server's write then fails
        deadline = time.monotonic() + 5
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # past the latency: the answer has been tried and failed
    assert fake.requests, "the request never reached the server"
    assert "Traceback" not in capfd.readouterr().err
