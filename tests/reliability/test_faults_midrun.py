"""Faults mid-run: API failures, a `kill -9`, and two runs on one folder lose nothing.

The model is the real SDK talking to FakeMessagesServer; faults are queued on the
server (one per request, in a seeded random order), kills are real SIGKILLs of a
`memeval run` child process.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import memeval.llm.config
from memeval.llm import CallTiming, DoorConfig
from memeval.llm.request import canonical_json
from memeval.log import INCOMPLETE_MARKER, RESULTS_FILE, SUMMARY_FILE, read_results
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.testing import FakeMessagesServer, Fault
from memeval.testing.keyword_model import keyword_model
from tests.reliability._scenario import comparable_rows, write_suite

KEY = "sk-ant-" + "test-faults-0000"  # built, so scanners see no key
FAULT_RATE = 0.3
MAX_RETRIES = 3
TIMEOUT_S = 0.5  # the client's per-attempt timeout; a `latency` fault of 1 s outlasts it
SCENARIOS = 2  # for the child runs
FAULT_SCENARIOS = 4
TURNS = 5
REPEATS = 3
RUN_LIMIT_S = 120.0  # a child run that takes longer than this is hung


def fault_plan(rng: random.Random, n: int) -> tuple[list[Fault], Counter[str]]:
    """`n` per-request slots, FAULT_RATE of them faults of every kind, the rest clean
    (a zero-delay `latency` fault passes the request through untouched)."""
    kinds = [Fault.http(429), Fault.http(529), Fault.http(500), Fault("latency", delay=1.0),
             Fault("drop"), Fault("truncated"), Fault("malformed")]
    names = ["429", "529", "500", "timeout", "drop", "truncated", "malformed"]
    plan: list[Fault] = []
    counts: Counter[str] = Counter()
    for _ in range(n):
        if rng.random() < FAULT_RATE:
            i = rng.randrange(len(kinds))
            plan.append(kinds[i])
            counts[names[i]] += 1
        else:
            plan.append(Fault("latency", delay=0.0))
    return plan, counts


def test_thirty_percent_faults_every_turn_has_a_result_or_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(tmp_path / "scenarios", FAULT_SCENARIOS)
    plan, injected = fault_plan(random.Random(12), 400)
    with FakeMessagesServer() as server:
        server.inject(*plan)
        settings = DoorConfig(cache=tmp_path / "cache.sqlite", max_concurrency=4,
                              log_path=tmp_path / "calls.jsonl",
                              timing=CallTiming(timeout=TIMEOUT_S, max_retries=MAX_RETRIES))
        monkeypatch.setattr(memeval.llm.config, "door_config", lambda **_: settings)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        config = RunConfig(scenarios=(str(tmp_path / "scenarios" / "*.yaml"),),
                           selectors=("claude",), judges=("gold",), repeats=REPEATS,
                           concurrency=4)
        outcome = evaluate(config, tmp_path / "run", progress=False)
        requests = len(server.message_requests())
        left = len(server._faults)

    rows = read_results(tmp_path / "run")
    assert len(rows) == FAULT_SCENARIOS * TURNS * REPEATS, "a turn was lost"
    assert not (tmp_path / "run" / INCOMPLETE_MARKER).exists()
    errored = [r for r in rows if r.selector_error]
    for row in rows:
        search = row.record.dirs[0]
        assert search.called, "every turn here asks the selector"
        if row.selector_error:
            assert search.error and "claude selector" in search.error
        else:
            assert search.error is None and isinstance(search.valid, tuple)
    records = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    calls = sum(1 for r in records if r["source"] != "cache")  # s0 and s1 ask alike
    consumed = len(plan) - left
    assert requests == consumed, "every request met its planned slot"
    # Bounded retries: no call made more than 1 + MAX_RETRIES attempts.
    assert requests <= calls * (1 + MAX_RETRIES)
    assert requests > calls, "faults were injected and retried"
    summary = json.loads((tmp_path / "run" / SUMMARY_FILE).read_text())
    assert summary["counts"]["claude"]["errors"] == len(errored)
    assert summary["llm"]["errors"] == sum(1 for r in records if r["error"])
    assert outcome.rows == len(rows)
    faults = [f for f in plan[:consumed] if f.kind != "latency" or f.delay]
    assert len(faults) >= 0.15 * consumed, "the plan must really fault"
    reasons = sorted({r.selector_error.split(": ", 2)[-1][:90] for r in errored})
    print(f"\nfaults {len(faults)} of {consumed} requests; model calls {calls}; "
          f"errored turns {len(errored)} of {len(rows)}; "
          f"planned kinds {dict(injected)}; errors: {reasons}")


# ------------------------------------------------------------- kill -9 and resume
class KillingServer:
    """The keyword model, counting the answers it delivered by request body; on the
    `kill_at`-th request it SIGKILLs the run before answering, so no answer it gave
    was lost in flight (the run uses one connection at a time)."""

    def __init__(self, kill_at: int | None = None) -> None:
        self.kill_at = kill_at
        self.seen = 0
        self.answered: Counter[str] = Counter()
        self.child: subprocess.Popen[str] | None = None
        self.lock = threading.Lock()
        self.server = FakeMessagesServer(self.behaviour)

    def behaviour(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.seen += 1
            if self.kill_at is not None and self.seen == self.kill_at and self.child:
                os.kill(self.child.pid, signal.SIGKILL)
                self.child.wait()
                raise ConnectionAbortedError("run killed before this answer")
            self.answered[canonical_json(body)] += 1
        return keyword_model(body)


def memeval_run(out: Path, scenarios: Path, cache: Path, url: str, *selectors: str,
                extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    args = [sys.executable, "-c", "from memeval.cli import main; main()", "run",
            "--scenarios", str(scenarios / "*.yaml"), "--out", str(out), "--concurrency", "1",
            "--repeats", "2", "--quiet", "--cache", str(cache)]
    for spec in selectors:
        args += ["-s", spec]
    # A killed run cannot remove its worlds (the next run sweeps them): keep them beside
    # the run, not in /dev/shm, where a test's last kill would leave them.
    env = {**os.environ, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY,
           "MEMEVAL_MAX_CONCURRENCY": "1", "MEMEVAL_WORLDS": str(out.parent / "worlds"),
           **(extra_env or {})}
    env.pop("MEMEVAL_RECORD", None)
    env.pop("MEMEVAL_REPLAY", None)
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(child: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = child.communicate(timeout=RUN_LIMIT_S)
    return child.returncode, out, err


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted run: its rows and the model answers it paid for."""
    root = tmp_path_factory.mktemp("reference")
    scenarios = root / "scenarios"
    write_suite(scenarios, SCENARIOS)
    killing = KillingServer()
    with killing.server as server:
        code, _, err = finish(memeval_run(root / "run", scenarios, root / "cache.sqlite",
                                            server.url, "claude"))
    assert code == 0, err
    return {"rows": comparable_rows(root / "run" / RESULTS_FILE), "scenarios": scenarios,
            "answered": killing.answered}


def test_kill_9_mid_run_then_rerun_equals_an_uninterrupted_run_and_pays_once(
        tmp_path: Path, reference: dict[str, Any]) -> None:
    total = sum(reference["answered"].values())
    units = total // TURNS  # one selector call per turn, one session after another
    rng = random.Random(os.getpid())
    # Inside a unit, after 1..TURNS-1 of its answers: those answers are not yet in
    # results.jsonl, so only the cache keeps the rerun from paying for them again.
    kill_at = rng.randrange(units) * TURNS + rng.randint(1, TURNS - 1) + 1
    killing = KillingServer(kill_at)
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with killing.server as server:
        killing.child = memeval_run(out, reference["scenarios"], cache, server.url,
                                    "claude")
        code, _, err = finish(killing.child)
        assert code == -signal.SIGKILL, f"the run was not killed (exit {code}): {err[-500:]}"
        assert (out / INCOMPLETE_MARKER).exists(), "a killed run must not look finished"
        assert not (out / SUMMARY_FILE).exists()
        worlds = out.parent / "worlds"
        assert list(worlds.iterdir()), "the killed run's worlds are left where it wrote them"
        code, stdout, err = finish(memeval_run(out, reference["scenarios"], cache, server.url,
                                               "claude"))
    assert code == 0, err
    assert "resumed" in stdout
    assert not list(worlds.iterdir()), "the rerun sweeps the dead run's worlds, then its own"
    assert comparable_rows(out / RESULTS_FILE) == reference["rows"]
    assert not (out / INCOMPLETE_MARKER).exists()
    # Repeats send the same body on purpose (each repeat is its own answer), so a body
    # may be answered more than once; never more often than in the uninterrupted run.
    paid_twice = killing.answered - reference["answered"]
    assert not paid_twice, f"{sum(paid_twice.values())} model answers were paid for twice"
    assert killing.answered == reference["answered"], "the same answers, each paid once"


def test_kill_9_at_a_random_moment_then_rerun_equals_an_uninterrupted_run(
        tmp_path: Path, reference: dict[str, Any]) -> None:
    """Killed by the clock rather than between calls, so the kill may land inside a
    results write; the model answers come from the cache either way."""
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    killing = KillingServer()
    rng = random.Random(os.getpid() + 1)
    with killing.server as server:
        child = memeval_run(out, reference["scenarios"], cache, server.url, "claude")
        deadline = time.monotonic() + RUN_LIMIT_S
        # Wait until rows start landing, then kill after a random extra moment.
        while not (out / RESULTS_FILE).exists() and child.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=RUN_LIMIT_S)
        code, _, err = finish(memeval_run(out, reference["scenarios"], cache, server.url,
                                          "claude"))
    assert code == 0, err
    assert comparable_rows(out / RESULTS_FILE) == reference["rows"]
    assert sum(killing.answered.values()) <= sum(reference["answered"].values()) + 1


# ---------------------------------------------------- two runs into one folder
def test_second_run_into_a_busy_folder_is_refused_and_nothing_is_corrupted(
        tmp_path: Path, reference: dict[str, Any]) -> None:
    gate = threading.Event()
    arrived = threading.Event()

    def stalled(body: dict[str, Any]) -> str:
        arrived.set()
        gate.wait(RUN_LIMIT_S)
        return keyword_model(body)

    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with FakeMessagesServer(stalled) as server:
        first = memeval_run(out, reference["scenarios"], cache, server.url, "claude")
        assert arrived.wait(RUN_LIMIT_S), "the first run never called the model"
        before = (out / RESULTS_FILE).read_bytes() if (out / RESULTS_FILE).exists() else b""
        code, _, err = finish(memeval_run(out, reference["scenarios"], cache, server.url,
                                          "claude"))
        assert code != 0
        assert "another memeval run is writing this folder" in err
        assert err.strip().count("\n") == 0, f"one clear line, got: {err!r}"
        after = (out / RESULTS_FILE).read_bytes() if (out / RESULTS_FILE).exists() else b""
        assert after == before, "the refused run wrote rows"
        gate.set()
        code, _, err = finish(first)
    assert code == 0, err
    assert comparable_rows(out / RESULTS_FILE) == reference["rows"]
    assert not (out / INCOMPLETE_MARKER).exists()
