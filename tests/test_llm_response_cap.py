"""The response size cap: an answer is bounded once decoded, through both SDKs.

A server that streams forever or sends a small gzip body inflating to a gigabyte is
refused as soon as the decoded bytes pass the cap; the call is a recorded error,
not retried. `tests/reliability/test_response_cap.py` measures a whole run's memory.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from memeval.llm import LLMRequest
from memeval.llm.body_cap import CappedBody, ResponseTooLarge
from memeval.llm.config import door_config
from memeval.llm.endpoint import Endpoint
from memeval.testing import FakeMessagesServer, Fault
from tests._doors import open_door

MODEL = "claude-sonnet-4-6"


def _ask(text: str) -> LLMRequest:
    return LLMRequest(model=MODEL, max_tokens=50,
                      messages=({"role": "user", "content": text},))


def _door(server: FakeMessagesServer, transport: str, **settings: Any) -> Any:
    url = server.url if transport == "anthropic" else f"{server.url}/v1"
    return open_door(Endpoint(transport, url), api_key="k", max_retries=3, deadline=20,
                     **settings)


def _sent(server: FakeMessagesServer, transport: str) -> int:
    return len(server.message_requests() if transport == "anthropic"
               else server.chat_requests())


@pytest.mark.parametrize("transport", ["anthropic", "openai"])
@pytest.mark.parametrize("fault", ["endless", "gzip_bomb"])
def test_an_endless_or_inflating_answer_is_a_recorded_error_sent_once(transport: str,
                                                                      fault: str) -> None:
    with FakeMessagesServer() as server:
        server.inject(Fault(fault))  # type: ignore[arg-type]
        door = _door(server, transport)
        answer = door.complete(_ask("hello"))
        assert answer.record.error is not None
        assert "response size cap (8 MB once decoded)" in answer.record.error
        assert "--max-response-mb" in answer.record.error
        assert _sent(server, transport) == 1  # refusing again would fetch the same again
        after = door.complete(_ask("again"))
        assert after.record.error is None and after.text  # the door still works


@pytest.mark.parametrize("transport", ["anthropic", "openai"])
def test_the_cap_is_configurable_and_counts_decoded_bytes(transport: str) -> None:
    with FakeMessagesServer() as server:
        server.inject(Fault("gzip_bomb", size=3 * 2**20))
        small = _door(server, transport, max_response_bytes=2 * 2**20)
        refused = small.complete(_ask("a"))
        assert refused.record.error and "(2 MB once decoded)" in refused.record.error
        server.inject(Fault("gzip_bomb", size=3 * 2**20))
        roomy = _door(server, transport, max_response_bytes=4 * 2**20)
        passed = roomy.complete(_ask("b"))
        # 3 MB of spaces is under the cap: read, and then found not to be a message
        assert passed.record.error and "size cap" not in passed.record.error


def test_a_gzip_answer_within_the_cap_reads_as_usual() -> None:
    body = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
                       "content": [{"type": "text", "text": "fine"}],
                       "stop_reason": "end_turn", "usage": {"input_tokens": 1,
                                                            "output_tokens": 1}})
    reader = CappedBody(1024, "gzip")
    packed = gzip.compress(body.encode())
    for i in range(0, len(packed), 7):
        reader.feed(packed[i:i + 7])
    assert reader.finish() == body.encode()


def test_an_encoding_that_cannot_be_bounded_is_refused() -> None:
    with pytest.raises(ResponseTooLarge, match="content-encoding 'br'"):
        CappedBody(1024, "br")


def test_max_response_mb_comes_from_the_option_or_the_environment(monkeypatch) -> None:
    assert door_config(cache=False).max_response_bytes == 8 * 2**20
    assert door_config(cache=False, max_response_mb=1.5).max_response_bytes == 3 * 2**19
    monkeypatch.setenv("MEMEVAL_MAX_RESPONSE_MB", "2")
    assert door_config(cache=False).max_response_bytes == 2 * 2**20
