"""Ctrl-C during a slow run: it stops within seconds, keeps finished sessions, says how to
resume, and the resume completes without paying for any answer twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memeval.log import INCOMPLETE_MARKER, RESULTS_FILE
from memeval.testing import FakeMessagesServer
from tests.reliability._scenario import write_suite

SCENARIOS, TURNS = 4, 5
LATENCY_S = 0.4  # each model call; a session takes about 2 s, the run about 4 s
STOP_WITHIN_S = 15


def _run(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    memeval = Path(sys.executable).with_name("memeval")  # the console script, as a user runs it
    return subprocess.Popen([str(memeval), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigint_keeps_finished_sessions_and_the_resume_pays_nothing_twice(tmp_path: Path):
    write_suite(tmp_path / "scenarios", SCENARIOS)  # five turns each
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    args = ["run", "--quiet", "--scenarios", str(tmp_path / "scenarios" / "*.yaml"),
            "-s", "claude", "--concurrency", "2", "--cache", str(cache), "--out", str(out)]
    with FakeMessagesServer(latency=LATENCY_S) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key-interrupt",
               "ANTHROPIC_BASE_URL": server.url}
        child = _run(args, env)
        deadline = time.monotonic() + 60
        results = out / RESULTS_FILE
        while not (results.exists() and results.stat().st_size) and child.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)  # wait for the first finished session; others are running
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=STOP_WITHIN_S + 5)
        stopped_in = time.monotonic() - sent
        calls_first = len(server.message_requests())
        assert child.returncode == 130, err
        assert stopped_in < STOP_WITHIN_S
        assert "resume with:" in err and f"--out {out}" in err
        assert (out / INCOMPLETE_MARKER).exists()
        kept = [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]
        assert 0 < len(kept) < SCENARIOS * TURNS
        # gold history, a selector without memory: each turn is a unit, kept whole
        assert {(r["unit_size"], r["unit_start"] == r["turn_index"]) for r in kept} == {(1, True)}

        again = _run(args, env)
        _, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        calls_total = len(server.message_requests())
    rows = (out / RESULTS_FILE).read_text().splitlines()
    assert len(rows) == SCENARIOS * TURNS
    assert not (out / INCOMPLETE_MARKER).exists()
    # Every request the first run made was answered and cached: the resume asked only
    # for turns never asked before.
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.message_requests()]
    assert calls_total == len(set(bodies))
    assert calls_total - calls_first <= SCENARIOS * TURNS - len(kept)


def test_a_second_sigint_stops_at_once(tmp_path: Path):
    write_suite(tmp_path / "scenarios", SCENARIOS)
    out = tmp_path / "run"
    worlds = tmp_path / "worlds"  # where the run writes its worlds, to see what it leaves
    with FakeMessagesServer(latency=5.0) as server:  # every call hangs for a while
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key-interrupt",
               "ANTHROPIC_BASE_URL": server.url, "MEMEVAL_WORLDS": str(worlds)}
        child = _run(["run", "--quiet", "--scenarios", str(tmp_path / "scenarios" / "*.yaml"),
                      "-s", "claude", "--no-cache", "--out", str(out)], env)
        deadline = time.monotonic() + 60
        while not server.message_requests() and time.monotonic() < deadline:
            time.sleep(0.05)  # a call is in flight
        child.send_signal(signal.SIGINT)
        time.sleep(0.3)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=STOP_WITHIN_S)
        assert child.returncode == 130 and time.monotonic() - sent < 3, err
        assert "stopped at once" in err
    # Stopping at once leaves the worlds behind; the next run, whatever it runs, sweeps
    # them (in /dev/shm they would hold memory until the machine restarts).
    assert [p.name for p in worlds.iterdir() if p.name.startswith("memeval-run-")]
    again = _run(["run", "--quiet", "--scenarios", str(tmp_path / "scenarios" / "*.yaml"),
                  "-s", "recency", "--out", str(tmp_path / "other")], env)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert not list(worlds.iterdir())
