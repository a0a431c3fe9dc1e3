"""`memeval run --retry-errors`: after an outage, redo only the sessions that failed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memeval.cli import cli
from memeval.run.config import bundled_fixtures_dir
from memeval.testing import FakeMessagesServer, Fault

SCENARIOS = [str(bundled_fixtures_dir() / "scenarios" / name)
             for name in ("a-dbt-warehouse.yaml", "a-rails-invoicing.yaml")]


def run(out: Path, server: FakeMessagesServer, *extra: str) -> tuple[int, str]:
    args = ["run", "--quiet", "--out", str(out), "--concurrency", "1",
            "-s", f"claude:claude-sonnet-4-6?base_url={server.url}", "-s", "bm25", *extra]
    for scenario in SCENARIOS:
        args += ["--scenarios", scenario]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_retry_errors_redoes_only_failed_sessions_and_pays_only_failed_calls(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "run"
    with FakeMessagesServer() as server:
        server.inject(*[Fault.http(500)] * 5)  # the first call fails, retries included
        code, output = run(out, server)
        first_calls = len(server.message_requests())
        assert code == 3 and "--retry-errors" in output
        before = rows(out)
        failed = {(r["scenario"], r["selector"]) for r in before if r["selector_error"]}
        assert len(failed) == 1  # one session of the claude selector
        code, output = run(out, server, "--retry-errors")
        retry_calls = len(server.message_requests()) - first_calls
    assert code == 0, output
    assert "1 of them again for errors" in output and "3 resumed" in output
    after = rows(out)
    assert not [r for r in after if r["selector_error"]]
    assert len(after) == len(before)  # the failed session's rows were replaced, not added
    kept = [r for r in before if (r["scenario"], r["selector"]) not in failed]
    assert all(r in after for r in kept)  # the sessions that worked are untouched
    turns = sum(1 for r in before if (r["scenario"], r["selector"]) in failed)
    assert retry_calls == 1 and turns > 1  # only the call that failed is paid again


def test_without_the_flag_a_finished_run_resumes_to_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    out = tmp_path / "run"
    with FakeMessagesServer() as server:
        server.inject(*[Fault.http(500)] * 5)
        run(out, server)
        calls = len(server.message_requests())
        code, output = run(out, server)
        assert len(server.message_requests()) == calls
    assert code == 3 and "0 units run, 74 resumed" in output
