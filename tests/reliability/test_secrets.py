"""Secrets: the API key and auth headers never land in a run's artifacts, logs or errors.

A whole run is made with a fake key through the Claude selector and the Claude judge,
recording a cassette, filling the response cache, writing the LLM call log and the
report; then every byte written is searched. Error paths get the same search, with a
server that echoes the key back in its error message (some proxies do).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.log import RESULTS_FILE, read_results
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import ClaudeSelector
from memeval.testing import FakeMessagesServer
from memeval.testing.fake_server import LoopbackHTTPServer
from tests._doors import open_door
from tests.reliability._scenario import write_suite

KEY = "sk-ant-test-" + secrets.token_hex(16)
# What must never be written: the key, and the names of the headers that carry it.
NEEDLES = (KEY.encode(), b"x-api-key", b"X-Api-Key", b"authorization", b"Authorization",
           b"Bearer ")


def leaks(root: Path) -> dict[str, list[str]]:
    """Every file under `root` holding a needle, with the needles found."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [n.decode() for n in NEEDLES if n in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def test_a_whole_run_with_a_key_writes_it_nowhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    write_suite(tmp_path / "scenarios", 1)
    work = tmp_path / "artifacts"
    work.mkdir()
    with FakeMessagesServer(require_auth=True) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("MEMEVAL_LLM_LOG", str(work / "calls.jsonl"))
        monkeypatch.setenv("ANTHROPIC_LOG", "debug")  # the SDK's own request logging
        caplog.set_level(logging.DEBUG)
        result = CliRunner().invoke(cli, [
            "run", "--quiet", "--scenarios", str(tmp_path / "scenarios" / "*.yaml"),
            "--out", str(work / "run"), "-s", "claude", "-s", "claude?stateful=1",
            "-j", "gold", "-j", "claude", "--cache", str(work / "cache.sqlite"),
            "--record-cassette", str(work / "tape.jsonl")])
        sent = server.message_requests()
    assert result.exit_code == 0, result.output
    rows = read_results(work / "run" / RESULTS_FILE)
    assert rows and not [r.errors for r in rows if r.errors], "every call authenticated"
    assert sent, "the key really went over the wire (the server requires it)"
    written = {p.name for p in work.rglob("*") if p.is_file()}
    assert {"calls.jsonl", "tape.jsonl", "cache.sqlite", RESULTS_FILE, "summary.json",
            "config.json", "index.html"} <= written
    assert leaks(work) == {}
    assert KEY not in result.output
    logged = [r.getMessage() for r in caplog.records]
    assert logged, "the SDK logged its requests"
    assert not [m for m in logged if KEY in m]


# ------------------------------------------------------------------ error paths
class EchoingHandler(BaseHTTPRequestHandler):
    """Refuses every call, quoting the key it was sent in the error message."""

    def log_message(self, *args: object) -> None:
        pass

    def credentials(self) -> str | None:
        return self.headers.get("x-api-key") or self.headers.get("authorization")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"type": "error", "error": {
            "type": "authentication_error",
            "message": f"invalid credentials {self.credentials()}"}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echoing() -> Iterator[str]:
    server = LoopbackHTTPServer(("127.0.0.1", 0), EchoingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def request(tmp_path: Path) -> SelectionRequest:
    from memeval.memdir import MemoryHeader

    header = MemoryHeader(filename="a.md", file_path=str(tmp_path / "a.md"), mtime_ms=0.0,
                          description="about a", type=None)
    return SelectionRequest(query="what about a?", manifest="- a.md (1970-01-01T00:00:00.000Z)",
                            candidates=(header,), memory_dir=tmp_path)


@pytest.mark.parametrize("where", ["echoing server", "nothing listening"])
def test_error_messages_and_the_call_log_never_carry_the_key(
        tmp_path: Path, echoing: str, where: str) -> None:
    url = echoing if where == "echoing server" else "http://127.0.0.1:9"
    log = tmp_path / "calls.jsonl"
    door = open_door(url, api_key=KEY, max_retries=0, timeout=2.0, log_path=log)
    result = ClaudeSelector(client=door).select(request(tmp_path))
    assert result.error is not None
    assert KEY not in result.error
    if where == "echoing server":
        assert "HTTP 401" in result.error and "<redacted>" in result.error
    assert KEY not in log.read_text()
    assert all(KEY not in (r.error or "") for r in door.records)
