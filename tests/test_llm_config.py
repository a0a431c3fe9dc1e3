"""Building the run's client from options and environment variables."""

from __future__ import annotations

import pytest

from memeval.llm import LLMError, build_client, configure, get_default_client, set_default_client
from memeval.llm.config import default_cache_path
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import ClaudeSelector
from memeval.testing import FakeMessagesServer

ENV = ("MEMEVAL_LLM_CACHE", "MEMEVAL_RECORD", "MEMEVAL_REPLAY", "MEMEVAL_MAX_COST",
       "MEMEVAL_BATCHES", "MEMEVAL_LLM_LOG", "MEMEVAL_MAX_CONCURRENCY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    yield
    set_default_client(None)


def test_defaults_cache_under_xdg_and_nothing_else(tmp_path):
    door = build_client()
    assert door.cache is not None and door.cache.path == default_cache_path()
    assert str(door.cache.path).startswith(str(tmp_path / "xdg"))
    assert door.cassette is None and door.budget.max_cost is None and not door.use_batches


def test_environment_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    monkeypatch.setenv("MEMEVAL_MAX_COST", "2.5")
    monkeypatch.setenv("MEMEVAL_BATCHES", "1")
    monkeypatch.setenv("MEMEVAL_MAX_CONCURRENCY", "3")
    monkeypatch.setenv("MEMEVAL_RECORD", str(tmp_path / "tape.jsonl"))
    door = build_client()
    assert door.cache is None and door.budget.max_cost == 2.5 and door.use_batches
    assert door.max_concurrency == 3 and door.cassette.mode == "record"


def test_bad_settings_name_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_MAX_COST", "lots")
    with pytest.raises(LLMError, match=r"\$MEMEVAL_MAX_COST='lots'"):
        build_client()
    with pytest.raises(LLMError, match="cannot record and replay"):
        build_client(record=tmp_path / "a.jsonl", replay=tmp_path / "b.jsonl", max_cost=1)


def test_configure_sets_the_client_selectors_use(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeMessagesServer() as server:
        door = configure(base_url=server.url, cache=False)
        assert get_default_client() is door
        result = ClaudeSelector().select(SelectionRequest(
            query="run tests", manifest="- a.md (2026-01-01T00:00:00.000Z): run tests",
            candidates=(), memory_dir=tmp_path))
    assert result.names == ("a.md",) and door.usage.calls == 1
