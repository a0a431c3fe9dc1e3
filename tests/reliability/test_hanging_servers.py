"""Servers that would hang a run: each call ends by its deadline, as a recorded error.

A 429 asking to retry in an hour, a body dripped a byte at a time, and a body that
never ends. The SDK's own timeout bounds each read, not the call; the deadline
transport bounds the whole call, retries included.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from memeval.llm import LLMRequest
from memeval.testing.fake_server import LoopbackHTTPServer
from tests._doors import open_door

DEADLINE_S = 3.0


class _Hanging(BaseHTTPRequestHandler):
    mode = "retry-after"

    def log_message(self, *_: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.mode == "retry-after":
            self.send_response(429)
            self.send_header("retry-after", "3600")
            self.send_header("content-type", "application/json")
            body = b'{"type":"error","error":{"type":"rate_limit_error","message":"later"}}'
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(10**9))
        self.end_headers()
        try:
            while True:
                self.wfile.write(b" " if self.mode == "drip" else b" " * 65536)
                self.wfile.flush()
                time.sleep(0.5 if self.mode == "drip" else 0.001)
        except OSError:
            return  # the client gave up


@pytest.mark.parametrize("mode", ["retry-after", "drip", "endless"])
def test_a_hanging_server_costs_one_deadline_per_call(mode: str) -> None:
    handler = type("Handler", (_Hanging,), {"mode": mode})
    server = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        door = open_door(f"http://127.0.0.1:{server.server_port}", api_key="k",
                         max_retries=4, timeout=60, deadline=DEADLINE_S)
        request = LLMRequest(model="claude-sonnet-4-6", max_tokens=20,
                             messages=({"role": "user", "content": "hi"},))
        started = time.monotonic()
        answers = [door.complete(request, repeat=r) for r in range(2)]  # two turns
        took = time.monotonic() - started
    finally:
        server.shutdown()
    assert all(not a.ok and a.error for a in answers), [a.error for a in answers]
    assert took < 2 * DEADLINE_S + 4, f"{mode}: two calls took {took:.1f} s"
