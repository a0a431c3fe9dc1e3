"""The door's output files fail before the first call, and a full disk is called a full
disk (issue 37, items 10 and 12)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.llm import LLMError, ResponseCache
from memeval.run.config import bundled_fixtures_dir
from memeval.testing import FakeMessagesServer

KEY = "sk-ant-" + "test-outputs-000000"  # built, so scanners see no key
SCENARIO = str(bundled_fixtures_dir() / "scenarios" / "a-dbt-warehouse.yaml")


def _run(tmp_path: Path, server: FakeMessagesServer, monkeypatch: pytest.MonkeyPatch,
         *extra: str) -> tuple[int, str]:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    result = CliRunner().invoke(cli, ["run", "--quiet", "--out", str(tmp_path / "r"),
                                      "--scenarios", SCENARIO, "-s", "claude", *extra])
    return result.exit_code, result.output


def test_an_unwritable_cassette_is_refused_before_any_call(tmp_path, monkeypatch) -> None:
    (tmp_path / "file").write_text("")  # a file where the cassette's folder should be
    tape = tmp_path / "file" / "tape.jsonl"
    with FakeMessagesServer() as server:
        code, output = _run(tmp_path, server, monkeypatch, "--no-cache",
                            "--record-cassette", str(tape))
        assert server.message_requests() == []  # before: every call paid, then lost
    assert code == 2, output
    assert f"{tape}: cannot write the cassette there" in output
    assert "nothing was sent" in output


def test_an_unwritable_call_log_is_refused_before_any_call(tmp_path, monkeypatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MEMEVAL_LLM_LOG", str(tmp_path / "file" / "calls.jsonl"))
    with FakeMessagesServer() as server:
        code, output = _run(tmp_path, server, monkeypatch, "--no-cache")
        assert server.message_requests() == []
    assert code == 2, output
    assert "cannot write the call log there" in output and "MEMEVAL_LLM_LOG" in output


def test_duplicate_selector_specs_are_refused(tmp_path, monkeypatch) -> None:
    """`-s claude -s claude` paid every call twice."""
    with FakeMessagesServer() as server:
        code, output = _run(tmp_path, server, monkeypatch, "--no-cache", "-s", "claude")
        assert server.message_requests() == []
    assert code == 2, output
    assert "-s/--selector 'claude' given more than once" in output


def _full_after(monkeypatch: pytest.MonkeyPatch, pages: int | None) -> None:
    """Every connection of the cache may hold only `pages` pages (None: as many as it
    has now): SQLite then answers writes as a full disk does, SQLITE_FULL."""
    connect = ResponseCache._connect

    def limited(self: ResponseCache) -> sqlite3.Connection:
        conn = connect(self)
        limit = pages or conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={limit}")
        return conn

    monkeypatch.setattr(ResponseCache, "_connect", limited)


def test_a_full_disk_when_the_cache_opens_says_disk_full(tmp_path, monkeypatch) -> None:
    _full_after(monkeypatch, 1)
    with pytest.raises(LLMError) as info:
        ResponseCache(tmp_path / "c.sqlite")
    assert "disk full" in str(info.value) and "intact" in str(info.value)
    assert "corrupt" not in str(info.value) and "delete" not in str(info.value)


def test_a_full_disk_while_storing_says_disk_full_and_keeps_the_cache(tmp_path,
                                                                      monkeypatch) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k1", "m", {"text": "kept"})
    _full_after(monkeypatch, None)
    with pytest.raises(LLMError, match="disk full: cannot store an answer in"):
        cache.put("k2", "m", {"text": "x" * 100_000})
    monkeypatch.undo()
    assert ResponseCache(tmp_path / "c.sqlite").get("k1") == {"text": "kept"}


def test_an_answer_the_full_cache_cannot_store_is_still_answered(tmp_path,
                                                                 monkeypatch) -> None:
    """Paid for is paid for: the answer reaches the turn, and the summary says the cache
    could not keep it (before: the store's error replaced the answer)."""
    from memeval.llm import LLMRequest
    from tests._doors import open_door

    with FakeMessagesServer(lambda _: "y" * 20_000) as server:  # more than a page holds
        door = open_door(server.url, api_key=KEY, cache=tmp_path / "c.sqlite")
        _full_after(monkeypatch, None)
        answer = door.complete(LLMRequest(model="claude-sonnet-4-6", max_tokens=50,
                                          messages=({"role": "user", "content": "x" * 5000},)))
    assert answer.record.error is None and answer.text
    assert "disk full" in (door.summary()["cache_error"] or "")
