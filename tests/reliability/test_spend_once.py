"""Money spent once: `--max-cost` holds across a `kill -9` and a resume (issue 37, item 9).

The server bills every answer it delivers at the bundled price table's rates (its own
tally, not the run's account of itself). The first `memeval run --max-cost B` is
SIGKILLed once the server has billed 60 % of B; the same command then resumes. Before
the fix the resume started from $0 and billed up to B again (a $1 budget was billed
$1.60); now the two attempts together stay within B.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from memeval.llm.prices import load_prices
from memeval.llm.spend import SPEND_FILE
from memeval.testing import FakeMessagesServer
from tests.reliability._scenario import write_suite

KEY = "sk-ant-" + "test-spend-000000000"  # built, so scanners see no key
MODEL = "claude-sonnet-4-6"
RUN_LIMIT_S = 180.0


class BillingServer(FakeMessagesServer):
    """Bills each delivered answer; SIGKILLs `victim` before the answer that would
    follow the moment billing reached `kill_at` USD."""

    def __init__(self) -> None:
        super().__init__()
        self.billed = 0.0
        self.kill_at: float | None = None
        self.victim: subprocess.Popen[str] | None = None
        self._bill_lock = threading.Lock()
        self._prices = load_prices(None)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._bill_lock:
            if self.kill_at is not None and self.billed >= self.kill_at and self.victim:
                os.kill(self.victim.pid, signal.SIGKILL)
                self.victim.wait()
                self.kill_at = None
                raise ConnectionAbortedError("run killed before this answer")
        message = super().answer(body)
        usage = {k: int(v or 0) for k, v in message["usage"].items()}
        with self._bill_lock:
            self.billed += self._prices.cost(str(body.get("model")), **usage) or 0.0
        return message


def _run(tmp_path: Path, url: str, max_cost: float | None) -> subprocess.Popen[str]:
    args = [sys.executable, "-c", "from memeval.cli import main; main()", "run",
            "--scenarios", str(tmp_path / "scenarios" / "*.yaml"), "--out",
            str(tmp_path / "run"), "--no-cache", "--quiet", "--concurrency", "1",
            "--repeats", "4", "-s", "claude"]
    if max_cost is not None:
        args += ["--max-cost", str(max_cost)]
    env = {**os.environ, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY,
           "MEMEVAL_MAX_CONCURRENCY": "1", "MEMEVAL_WORLDS": str(tmp_path / "worlds")}
    for name in ("MEMEVAL_RECORD", "MEMEVAL_REPLAY", "MEMEVAL_LLM_LOG", "MEMEVAL_MAX_COST"):
        env.pop(name, None)
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_max_cost_counts_what_a_killed_attempt_spent(tmp_path: Path) -> None:
    write_suite(tmp_path / "scenarios", count=2)
    with BillingServer() as whole:  # what the run costs when nothing stops it
        (tmp_path / "whole").mkdir()
        write_suite(tmp_path / "whole" / "scenarios", count=2)
        child = _run(tmp_path / "whole", whole.url, None)
        child.communicate(timeout=RUN_LIMIT_S)
        assert child.returncode == 0
        full_cost = whole.billed
    budget = round(full_cost / 2, 6)

    with BillingServer() as server:
        server.kill_at = 0.6 * budget
        server.victim = first = _run(tmp_path, server.url, budget)
        first.communicate(timeout=RUN_LIMIT_S)
        assert first.returncode == -signal.SIGKILL, "the first attempt was not killed"
        billed_first = server.billed
        second = _run(tmp_path, server.url, budget)
        _, err = second.communicate(timeout=RUN_LIMIT_S)
        billed = server.billed
    print(f"full run ${full_cost:.5f}; budget ${budget:.5f}; first attempt billed "
          f"${billed_first:.5f}; both billed ${billed:.5f}")
    assert billed_first >= 0.6 * budget
    assert billed <= budget, f"billed ${billed:.5f} past --max-cost ${budget:.5f}: {err[-800:]}"
    assert (tmp_path / "run" / SPEND_FILE).exists()
    assert "by earlier attempts of this run folder" in (tmp_path / "run" /
                                                        "results.jsonl").read_text()
