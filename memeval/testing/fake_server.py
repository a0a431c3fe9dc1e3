"""FakeMessagesServer: a loopback model server the real `anthropic` and `openai` SDKs talk to.

It serves `POST /v1/messages`, `POST /v1/messages/count_tokens` and the Message
Batches endpoints (create, retrieve, JSONL results) on 127.0.0.1, and the Chat
Completions API (`POST /v1/chat/completions`, also under `/chat/completions`) as
OpenAI-compatible servers do: the same model and faults behind both. Structured
output is answered however it was asked: the API's own (`output_config`,
`response_format`), a forced tool, or a shape described in the system prompt (then
the answer comes wrapped in chatter and a code fence, as small local models do). What the "model"
says is a function of the request body (default: the keyword model); faults can be
queued to test retries and error handling.

Token accounting (deterministic, not the real tokenizer): every content block (the
system prompt counts as blocks first, then each message's blocks in order) costs
ceil(characters / 4) tokens. Prompt caching follows the API's shape: each block
with `cache_control` ends a cacheable prefix; the longest prefix seen before (same
model) is billed as `cache_read_input_tokens`, the rest up to the last breakpoint as
`cache_creation_input_tokens`, the remainder as `input_tokens`. Prefixes shorter
than `min_cache_tokens` are not cached, as the API ignores short prefixes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import select
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from memeval.llm.endpoint import FAKE_SERVER_HEADER
from memeval.testing.keyword_model import keyword_model, schema_source

CHARS_PER_TOKEN = 4  # the fake tokenizer
SECRET_HEADERS = frozenset({"x-api-key", "authorization"})

FaultKind = Literal["status", "drop", "malformed", "truncated", "latency", "empty"]
Reply = str | dict[str, Any]
Behaviour = Callable[[dict[str, Any]], Reply]

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


@dataclass(frozen=True)
class Fault:
    """One misbehaviour for the next request to a faultable endpoint.

    Args:
        kind: `status` (an error reply), `drop` (close the socket, no reply),
            `malformed` (200 with a body that is not JSON), `truncated` (200 whose
            JSON stops halfway), `latency` (answer normally after `delay`), `empty` (200
            with `{}`, as some proxies answer an upstream failure).
        status: HTTP status for `status` faults (429, 529, 500, ...).
        retry_after: seconds sent as `retry-after` (small keeps SDK retries fast).
        delay: seconds to wait before answering.
    """

    kind: FaultKind
    status: int = 529
    retry_after: float | None = 0.01
    delay: float = 0.0

    @classmethod
    def http(cls, status: int, retry_after: float | None = 0.01) -> Fault:
        return cls("status", status=status, retry_after=retry_after)


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server saw it; secret header values are replaced by `<redacted>`."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    auth_sha256: str | None = None  # of the key header's value: which key came, not the key
    peer: str = ""  # the client's address and port: which connection the request came on

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """System then message content as a flat list of blocks (strings become text blocks)."""
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif isinstance(system, list):
        out.extend(b for b in system if isinstance(b, dict))
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            out.append({"type": "text", "text": content, "_role": message.get("role")})
        elif isinstance(content, list):
            out.extend({**b, "_role": message.get("role")} for b in content if isinstance(b, dict))
    return out


def _block_tokens(block: dict[str, Any]) -> int:
    if block.get("type") == "text":
        return count_tokens(str(block.get("text", "")))
    clean = {k: v for k, v in block.items() if k not in ("cache_control", "_role")}
    return count_tokens(json.dumps(clean, sort_keys=True))


class _PromptCache:
    """Which prefixes have been written, per model; thread-safe."""

    def __init__(self, min_tokens: int) -> None:
        self.min_tokens = min_tokens
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def account(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = _blocks(body)
        sizes = [_block_tokens(b) for b in blocks]
        total = sum(sizes)
        breakpoints = [i for i, b in enumerate(blocks) if b.get("cache_control")]
        if not breakpoints:
            return {"input_tokens": total, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0}
        digest = hashlib.sha256(str(body.get("model")).encode())
        hashes: dict[int, str] = {}
        for i, block in enumerate(blocks):
            clean = {k: v for k, v in block.items() if k != "cache_control"}
            digest.update(json.dumps(clean, sort_keys=True).encode())
            if i in breakpoints:
                hashes[i] = digest.copy().hexdigest()
        last = breakpoints[-1]
        cacheable = sum(sizes[: last + 1])
        if cacheable < self.min_tokens:
            return {"input_tokens": total, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0}
        with self._lock:
            hit = max((i for i in breakpoints if hashes[i] in self._seen), default=None)
            self._seen.update(hashes.values())
        read = sum(sizes[: hit + 1]) if hit is not None else 0
        return {"input_tokens": total - cacheable, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": cacheable - read}


class FakeMessagesServer:
    """A threaded HTTP server on 127.0.0.1 speaking enough of the Messages API.

    Args:
        behaviour: request body -> reply. A string is the answer text; a dict is
            merged over a default message body (set `content`, `stop_reason`,
            `usage`...). Default: the keyword model.
        latency: seconds added before every answer.
        batch_polls: how many `retrieve` calls report `in_progress` before `ended`.
        min_cache_tokens: shortest prefix the fake prompt cache stores.
        require_auth: answer 401 when neither `x-api-key` nor `authorization` is sent.
        port: port on 127.0.0.1; 0 picks a free one.
        honour_response_format: False acts like servers that silently drop Chat
            Completions' `response_format` (the model then sees no schema).
        slots: answer at most this many model requests at once, queueing the rest, as
            llama.cpp's servers do, and state it at `GET /props` (`total_slots`);
            None answers every request at once and serves no `/props`.
        cancels_on_disconnect: False acts like llama-cpp-python, which goes on
            computing (and holding its slot) for a client that left; True stops, as
            llama-server does.
        reject_json_schema: answer Chat Completions' `response_format: json_schema`
            with llama-cpp-python's HTTP 500 ("Input should be 'text' or 'json_object'"),
            and the Messages API's `output_config` with a 400, as servers without
            structured output do.
        drop_tools: ignore `tools` and `tool_choice` and answer prose, as llama-server
            does without a chat template that supports tools (its `/props` then says
            `supports_tool_calls: false`).
        cut_tool_calls_as: the `finish_reason` of a tool call cut at `max_tokens`
            (`length`; llama-cpp-python says `tool_calls`).

    Use as a context manager; `.url` is the base URL for the SDK, `.requests` the log;
    `.peak_held` is the most model requests it ever held at once (queued or computing,
    abandoned ones included).
    """

    def __init__(self, behaviour: Behaviour | None = None, *, latency: float = 0.0,
                 batch_polls: int = 1, min_cache_tokens: int = 0,
                 require_auth: bool = True, port: int = 0,
                 honour_response_format: bool = True, slots: int | None = None,
                 cancels_on_disconnect: bool = True, reject_json_schema: bool = False,
                 drop_tools: bool = False, cut_tool_calls_as: str = "length") -> None:
        self.port = port
        self.honour_response_format = honour_response_format
        self.slots = slots
        self.cancels_on_disconnect = cancels_on_disconnect
        self.reject_json_schema = reject_json_schema
        self.drop_tools = drop_tools
        self.cut_tool_calls_as = cut_tool_calls_as
        self.held = 0
        self.peak_held = 0
        self.abandoned = 0  # requests whose client left before the answer
        self._slot = threading.BoundedSemaphore(slots) if slots else None
        self.behaviour: Behaviour = behaviour or keyword_model
        self.latency = latency
        self.batch_polls = batch_polls
        self.require_auth = require_auth
        self.prompt_cache = _PromptCache(min_cache_tokens)
        self.requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._batches: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> FakeMessagesServer:
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = LoopbackHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._httpd.server_address[1]  # kept, so `url` still names it once stopped
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL (still this server's after it stopped, for replay tests)."""
        if not self.port:
            raise RuntimeError("FakeMessagesServer was never started; use it as a context "
                               "manager")
        return f"http://127.0.0.1:{self.port}"

    # -- control ------------------------------------------------------------------------
    def inject(self, *faults: Fault) -> None:
        """Queue faults; each applies to one later messages / batch-create request."""
        with self._lock:
            self._faults.extend(faults)

    def message_requests(self) -> list[RecordedRequest]:
        """Logged `POST /v1/messages` requests (not count_tokens or batches)."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def chat_requests(self) -> list[RecordedRequest]:
        """Logged Chat Completions requests."""
        return [r for r in self.requests if r.method == "POST" and r.path in CHAT_PATHS]

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Count a model request from its arrival until its answer is written."""
        with self._lock:
            self.held += 1
            self.peak_held = max(self.peak_held, self.held)
        try:
            with self._slot or nullcontext():
                yield
        finally:
            with self._lock:
                self.held -= 1

    def props(self) -> dict[str, Any]:
        """What llama-server states at `GET /props` (the parts memeval reads)."""
        return {"total_slots": self.slots,
                "chat_template_caps": {"supports_tool_calls": not self.drop_tools}}

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_fake_{next(self._ids):06d}"

    # -- the model ------------------------------------------------------------------------
    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The message body replying to one request body (also used for batch entries)."""
        reply = self.behaviour(body)
        usage = self.prompt_cache.account(body)
        message: dict[str, Any] = {
            "id": self._new_id("msg"), "type": "message", "role": "assistant",
            "model": body.get("model"), "content": [], "stop_reason": "end_turn",
            "stop_sequence": None}
        if isinstance(reply, str):
            message["content"], message["stop_reason"] = _shaped(body, reply)
        else:
            message.update(reply)
        text = "".join(b.get("text", "") or json.dumps(b.get("input", ""))
                       for b in message["content"] if isinstance(b, dict))
        usage["output_tokens"] = count_tokens(text)
        message["usage"] = {**usage, **(message.get("usage") or {})}
        return message

    def chat_answer(self, chat: dict[str, Any]) -> dict[str, Any]:
        """A Chat Completions response body: the same model, through the Messages shape."""
        dropped = self.drop_tools and bool(chat.get("tools"))
        if dropped:  # the model never hears of the tool, and chats
            chat = {k: v for k, v in chat.items() if k not in ("tools", "tool_choice")}
        message = self.answer(_as_messages_body(chat, self.honour_response_format))
        if dropped:
            said = "".join(b.get("text", "") for b in message["content"])
            message["content"] = [{"type": "text",
                                   "text": f"Happy to help! Looking at these, I'd say {said}"}]
            message["stop_reason"] = "end_turn"
        text = "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
        calls = [{"id": b.get("id", "call_fake"), "type": "function",
                  "function": {"name": b["name"], "arguments": b["input"]  # a cut call
                               if isinstance(b["input"], str) else json.dumps(b["input"])}}
                 for b in message["content"] if b.get("type") == "tool_use"]
        usage = message["usage"]
        cached = int(usage.get("cache_read_input_tokens") or 0)
        prompt = cached + sum(int(usage.get(k) or 0) for k in
                              ("input_tokens", "cache_creation_input_tokens"))
        finish = {"tool_use": "tool_calls", "max_tokens": "length"}.get(
            message["stop_reason"], "stop")
        if calls and finish == "length":
            finish = self.cut_tool_calls_as
        reply: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            reply["tool_calls"] = calls
        return {"id": self._new_id("chatcmpl"), "object": "chat.completion",
                "created": int(time.time()), "model": chat.get("model"),
                "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": usage["output_tokens"],
                          "total_tokens": prompt + usage["output_tokens"],
                          "prompt_tokens_details": {"cached_tokens": cached}}}

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = self._new_id("msgbatch")
        results = []
        for entry in body.get("requests") or []:
            results.append({"custom_id": entry["custom_id"],
                            "result": {"type": "succeeded",
                                       "message": self.answer(entry["params"])}})
        now = datetime.now(UTC)
        batch = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                 "created_at": now.isoformat(), "expires_at": (now + timedelta(days=1)).isoformat(),
                 "request_counts": {"processing": len(results), "succeeded": 0, "errored": 0,
                                    "canceled": 0, "expired": 0},
                 "results_url": None, "ended_at": None, "archived_at": None,
                 "cancel_initiated_at": None}
        with self._lock:
            self._batches[batch_id] = {"batch": batch, "results": results,
                                       "polls_left": self.batch_polls}
        return batch

    def retrieve_batch(self, batch_id: str) -> dict[str, Any] | None:
        with self._lock:
            state = self._batches.get(batch_id)
            if state is None:
                return None
            state["polls_left"] -= 1
            batch = state["batch"]
            if state["polls_left"] <= 0 and batch["processing_status"] != "ended":
                n = len(state["results"])
                batch.update(processing_status="ended", ended_at=datetime.now(UTC).isoformat(),
                             results_url=f"{self.url}/v1/messages/batches/{batch_id}/results",
                             request_counts={"processing": 0, "succeeded": n, "errored": 0,
                                             "canceled": 0, "expired": 0})
            return dict(batch)

    def batch_results(self, batch_id: str) -> list[dict[str, Any]] | None:
        with self._lock:
            state = self._batches.get(batch_id)
            if state is None or state["batch"]["processing_status"] != "ended":
                return None
            return list(state["results"])


def _shaped(body: dict[str, Any], reply: str) -> tuple[list[dict[str, Any]], str]:
    """The reply as the request asked: a tool call, chatter around JSON, or plain text."""
    source, _ = schema_source(body)
    if source == "tool":
        tool = next(t for t in body["tools"] if isinstance(t.get("input_schema"), dict))
        try:
            return [{"type": "tool_use", "id": "toolu_fake", "name": tool.get("name", ""),
                     "input": json.loads(reply)}], "tool_use"
        except json.JSONDecodeError:
            pass
    if source == "prompt":
        reply = f"Sure, here is my answer.\n```json\n{reply}\n```\nLet me know if you need more."
    return [{"type": "text", "text": reply}], "end_turn"


def _as_messages_body(chat: dict[str, Any], honour_response_format: bool) -> dict[str, Any]:
    """A Chat Completions request read as the Messages request the keyword model knows."""
    system = [str(m.get("content") or "") for m in chat.get("messages") or []
              if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    body: dict[str, Any] = {
        "model": chat.get("model"), "system": "\n\n".join(system) or None,
        "messages": [{"role": m.get("role"), "content": str(m.get("content") or "")}
                     for m in chat.get("messages") or []
                     if isinstance(m, dict) and m.get("role") in ("user", "assistant")]}
    fmt = chat.get("response_format") or {}
    if honour_response_format and fmt.get("type") == "json_schema":
        body["output_config"] = {"format": {
            "type": "json_schema", "schema": (fmt.get("json_schema") or {}).get("schema")}}
    tools = [t.get("function") or {} for t in chat.get("tools") or [] if isinstance(t, dict)]
    if tools:
        body["tools"] = [{"name": f.get("name", ""), "input_schema": f.get("parameters") or {}}
                         for f in tools]
    return {k: v for k, v in body.items() if v is not None}


CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_BATCH = re.compile(r"^/v1/messages/batches/(?P<id>[^/]+)$")
_RESULTS = re.compile(r"^/v1/messages/batches/(?P<id>[^/]+)/results$")


class LoopbackHTTPServer(ThreadingHTTPServer):
    """The stdlib's threaded server, fit for tests that make clients give up."""

    # The stdlib's backlog of 5 drops connections when a run opens many at once, and
    # each drop costs the client a retry after about a second.
    request_queue_size = 256
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout, a cancelled run) is what these tests are
        # about, not a server fault. The stdlib would print a traceback to whatever
        # `sys.stderr` is when the answer finally fails: often a later test's capture.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeMessagesServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's pooled client expects
    # Headers and body go out as two writes; with Nagle on, the client's delayed ACK
    # holds the body back ~40 ms on every keep-alive request.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing -------------------------------------------------------------------------
    def _log(self, body: Any) -> None:
        headers = {k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v)
                   for k, v in self.headers.items()}
        key = self.headers.get("x-api-key") or self.headers.get("authorization")
        digest = hashlib.sha256(key.encode()).hexdigest() if key else None
        with self.fake._lock:
            self.fake.requests.append(RecordedRequest(
                self.command, self.path.split("?")[0], headers, body, digest,
                peer=f"{self.client_address[0]}:{self.client_address[1]}"))

    def _send(self, status: int, payload: bytes, *, content_type: str = "application/json",
              headers: dict[str, str] | None = None, declared_length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(declared_length or len(payload)))
        self.send_header("request-id", self.fake._new_id("req"))
        self.send_header(FAKE_SERVER_HEADER, "keyword-model")  # kept out of the user's cache
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(value).encode(), headers=headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind = _ERROR_TYPES.get(status, "api_error")
        self._json(status, {"type": "error", "error": {"type": kind, "message": message}},
                   headers)

    def _authorized(self) -> bool:
        if not self.fake.require_auth:
            return True
        return bool(self.headers.get("x-api-key") or self.headers.get("authorization"))

    def _apply_fault(self) -> bool:
        """Act out a queued fault; True when the request is fully handled by it."""
        fault = self.fake._next_fault()
        if fault is None:
            return False
        if fault.delay:
            time.sleep(fault.delay)
        if fault.kind == "latency":
            return False
        if fault.kind == "status":
            headers = {} if fault.retry_after is None else {"retry-after": str(fault.retry_after)}
            self._error(fault.status, f"injected HTTP {fault.status}", headers)
        elif fault.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif fault.kind == "empty":
            self._send(200, b"{}")
        elif fault.kind == "malformed":
            self._send(200, b'{"id": "msg_broken", "content": [ this is not json')
        elif fault.kind == "truncated":
            whole = json.dumps({"id": "msg_cut", "type": "message", "content": []}).encode()
            self._send(200, whole[: len(whole) // 2], declared_length=len(whole))
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        return True

    def _compute(self) -> bool:
        """Take `latency` to answer, as a model does; False when the client left and this
        server stops for that (`cancels_on_disconnect`)."""
        ends, noticed = time.monotonic() + self.fake.latency, False
        while (left := ends - time.monotonic()) > 0:
            time.sleep(min(0.02, left))
            if not noticed and self._client_left():
                noticed = True  # a server that does not cancel computes on for nobody
                with self.fake._lock:
                    self.fake.abandoned += 1
                if self.fake.cancels_on_disconnect:
                    self.close_connection = True
                    return False
        return True

    def _client_left(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return raw.decode("utf-8", "replace")

    # -- routes ---------------------------------------------------------------------------
    def do_POST(self) -> None:
        body = self._body()
        self._log(body)
        if not self._authorized():
            return self._error(401, "missing x-api-key header")
        if not isinstance(body, dict):
            return self._error(400, "request body must be a JSON object")
        path = self.path.split("?")[0]
        if path == "/v1/messages":
            missing = [k for k in ("model", "max_tokens", "messages") if k not in body]
            if missing:
                return self._error(400, f"{missing[0]}: Field required")
            if self.fake.reject_json_schema and "output_config" in body:
                return self._error(400, "output_config: Extra inputs are not permitted")
            with self.fake.holding():
                if not self._compute() or self._apply_fault():
                    return None
                return self._json(200, self.fake.answer(body))
        if path in CHAT_PATHS:
            if not isinstance(body.get("messages"), list) or "model" not in body:
                return self._error(400, "model and messages are required")
            if self.fake.reject_json_schema and \
                    (body.get("response_format") or {}).get("type") == "json_schema":
                return self._json(500, {"error": {
                    "message": "1 validation error for CreateChatCompletionRequest\n"
                               "response_format.type\n  Input should be 'text' or "
                               "'json_object'", "type": "internal_server_error"}})
            with self.fake.holding():
                if not self._compute() or self._apply_fault():
                    return None
                return self._json(200, self.fake.chat_answer(body))
        if self.fake.latency:
            time.sleep(self.fake.latency)
        if path == "/v1/messages/count_tokens":
            total = sum(_block_tokens(b) for b in _blocks(body))  # counting caches nothing
            return self._json(200, {"input_tokens": total})
        if path == "/v1/messages/batches":
            if self._apply_fault():
                return None
            return self._json(200, self.fake.create_batch(body))
        return self._error(404, f"no route POST {path}")

    def do_GET(self) -> None:
        self._log(None)
        path = self.path.split("?")[0]
        if path == "/props" and self.fake.slots is not None:  # llama.cpp asks for no key
            return self._json(200, self.fake.props())
        if not self._authorized():
            return self._error(401, "missing x-api-key header")
        if self.fake.latency:
            time.sleep(self.fake.latency)
        match = _RESULTS.match(path)
        if match:
            results = self.fake.batch_results(match.group("id"))
            if results is None:
                return self._error(404, f"no finished batch {match.group('id')}")
            lines = "".join(json.dumps(r) + "\n" for r in results).encode()
            return self._send(200, lines, content_type="application/binary")
        match = _BATCH.match(path)
        if match:
            batch = self.fake.retrieve_batch(match.group("id"))
            if batch is None:
                return self._error(404, f"no batch {match.group('id')}")
            return self._json(200, batch)
        return self._error(404, f"no route GET {path}")
