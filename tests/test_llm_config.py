"""The run's model settings from options and environment variables, and how a run
hands its clients to the components (no process-wide default)."""

from __future__ import annotations

import pytest

from memeval.llm import CallTiming, DoorConfig, LLMError, ModelAccess, door_config
from memeval.llm.config import default_cache_path
from memeval.llm.endpoint import Endpoint
from memeval.selectors import resolve_selector
from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import ClaudeSelector
from memeval.testing import FakeMessagesServer

ENV = ("MEMEVAL_LLM_CACHE", "MEMEVAL_RECORD", "MEMEVAL_REPLAY", "MEMEVAL_MAX_COST",
       "MEMEVAL_BATCHES", "MEMEVAL_LLM_LOG", "MEMEVAL_MAX_CONCURRENCY", "MEMEVAL_TIMEOUT",
       "MEMEVAL_DEADLINE")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def ask(tmp_path) -> SelectionRequest:
    return SelectionRequest(query="run tests",
                            manifest="- a.md (2026-01-01T00:00:00.000Z): run tests",
                            candidates=(), memory_dir=tmp_path)


def test_defaults_cache_under_xdg_and_nothing_else(tmp_path):
    settings = door_config()
    assert settings.cache == default_cache_path()
    assert str(settings.cache).startswith(str(tmp_path / "xdg"))
    assert settings.record is None and settings.replay is None
    assert settings.max_cost is None and not settings.batches
    assert settings.timing == CallTiming()


def test_environment_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    monkeypatch.setenv("MEMEVAL_MAX_COST", "2.5")
    monkeypatch.setenv("MEMEVAL_BATCHES", "1")
    monkeypatch.setenv("MEMEVAL_MAX_CONCURRENCY", "3")
    monkeypatch.setenv("MEMEVAL_RECORD", str(tmp_path / "tape.jsonl"))
    models = ModelAccess(door_config())
    assert models.cache is None and models.budget.max_cost == 2.5 and models.use_batches
    assert models.capacity(Endpoint()) == 3 and models.cassette.mode == "record"


def test_bad_settings_name_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMEVAL_MAX_COST", "lots")
    with pytest.raises(LLMError, match=r"\$MEMEVAL_MAX_COST='lots'"):
        door_config()
    with pytest.raises(LLMError, match="cannot record and replay"):
        door_config(record=tmp_path / "a.jsonl", replay=tmp_path / "b.jsonl", max_cost=1)


def test_a_component_calls_through_the_access_it_is_handed(tmp_path, monkeypatch):
    """The run hands its access to the component; its calls land in that access's
    records and budget, and nothing else in the process knows of it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeMessagesServer() as server, ModelAccess(DoorConfig(max_cost=5.0)) as models:
        chosen = resolve_selector(f"claude?base_url={server.url}", models=models)
        other = resolve_selector(f"claude?base_url={server.url}", models=models)
        assert chosen.client is other.client  # one client per endpoint and timing
        result = chosen.select(ask(tmp_path))
        alone = ModelAccess()
        separate = resolve_selector(f"claude?base_url={server.url}", models=alone)
        separate.select(ask(tmp_path))
    assert result.names == ("a.md",)
    assert models.usage.calls == 1 and alone.usage.calls == 1
    assert models.budget_state().spent > 0  # the one place that spends reads it back


def test_a_component_used_on_its_own_builds_its_own_access(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        first, second = ClaudeSelector(), ClaudeSelector()
        first.select(ask(tmp_path))
        assert first.client.access is not second.client.access
        assert first.client.usage.calls == 1 and second.client.usage.calls == 0


def test_the_llm_package_holds_no_default_client():
    import memeval.llm as llm

    for name in ("get_default_client", "set_default_client", "configure",
                 "default_client_installed", "build_client"):
        assert not hasattr(llm, name)
