"""Point memeval's model door at a FakeMessagesServer for the length of a benchmark."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from memeval.testing import FakeMessagesServer


@contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (or, for None, unset) environment variables, restoring them afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _pointing_at(url: str) -> dict[str, str | None]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "offline-bench",
            "ANTHROPIC_AUTH_TOKEN": None, "MEMEVAL_REPLAY": None, "MEMEVAL_RECORD": None,
            "MEMEVAL_BATCHES": None, "MEMEVAL_MAX_COST": None}


@contextmanager
def fake_api(**server_args: Any) -> Iterator[FakeMessagesServer]:
    """A loopback Messages API in this process that `memeval run -s claude` talks to.

    Its request log and cache accounting are at hand, but its work shares this
    process's interpreter lock: use `fake_api_process` when timing.
    """
    with FakeMessagesServer(**server_args) as server, environment(_pointing_at(server.url)):
        yield server


# Two settings of the loopback server stand between it and a remote API's behaviour,
# so the benchmark's copy changes them (no-ops once memeval.testing does so itself):
# - its handler writes headers and body in separate packets; with Nagle's algorithm
#   on, the client's delayed ACK stalls every answer by ~40 ms;
# - socketserver's listen backlog of 5 drops the SYNs of a burst of new connections,
#   and the kernel retries them only after a second.
_SERVE = """
import sys, threading
from memeval.testing import fake_server
fake_server._Handler.disable_nagle_algorithm = True
fake_server.ThreadingHTTPServer.request_queue_size = 1024
server = fake_server.FakeMessagesServer(latency=float(sys.argv[1])).start()
print("FakeMessagesServer listening on", server.url, flush=True)
threading.Event().wait()
"""


@contextmanager
def fake_api_process(latency: float) -> Iterator[str]:
    """The loopback API in its own process, as a remote API would be: its CPU time
    does not compete with the harness being timed."""
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, str(latency)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"fake API did not start: {line!r}")
        url = line.split("listening on ", 1)[1].split()[0]
        with environment(_pointing_at(url)):
            yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


_LAST_CALLS: list[int] = [0]  # what the last `no_summary` run's door sent


def no_summary(_run_dir: Any, extra: Mapping[str, Any], **_: Any) -> dict[str, Any]:
    """A finish that writes nothing and keeps the run's model call count."""
    _LAST_CALLS[0] = int((extra.get("llm") or {}).get("calls", 0))
    return {}


def model_calls() -> int:
    """Requests the last run's model door actually sent (cache hits are not calls)."""
    return _LAST_CALLS[0]
