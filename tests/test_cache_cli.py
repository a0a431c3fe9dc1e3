"""`memeval cache stats|prune`: what the response cache holds, and trimming it."""

from __future__ import annotations

import time

from click.testing import CliRunner

from memeval.cli import cli
from memeval.llm import ResponseCache

DAY_S = 86_400.0


def _cache(tmp_path, monkeypatch) -> ResponseCache:
    cache = ResponseCache(tmp_path / "c.sqlite")
    now = time.time()
    for i, (model, age_days) in enumerate([("claude-sonnet-4-6", 0), ("claude-sonnet-4-6", 40),
                                           ("qwen3:8b", 40), ("qwen3:8b", 1)]):
        monkeypatch.setattr(time, "time", lambda a=age_days: now - a * DAY_S)
        cache.put(f"k{i}", model, {"content": [{"type": "text", "text": "x" * 100}]})
    monkeypatch.setattr(time, "time", lambda: now)
    return cache


def memeval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_stats_counts_answers_per_model(tmp_path, monkeypatch):
    cache = _cache(tmp_path, monkeypatch)
    code, output = memeval("cache", "stats", "--cache", str(cache.path))
    assert code == 0 and "4 answers" in output
    lines = {line.split()[0]: line.split()[1] for line in output.splitlines()[1:]}
    assert lines == {"claude-sonnet-4-6": "2", "qwen3:8b": "2"}


def test_prune_by_age_and_model_prefix(tmp_path, monkeypatch):
    cache = _cache(tmp_path, monkeypatch)
    code, output = memeval("cache", "prune", "--cache", str(cache.path), "--older-than", "30",
                           "--model", "qwen")
    assert code == 0 and "1 answers deleted, 3 kept" in output
    assert cache.get("k2") is None and cache.get("k1") is not None  # old, but not qwen
    code, output = memeval("cache", "prune", "--cache", str(cache.path), "--older-than", "30")
    assert "1 answers deleted, 2 kept" in output and cache.get("k1") is None


def test_prune_without_a_criterion_and_a_missing_cache_are_usage_errors(tmp_path,
                                                                       monkeypatch):
    cache = _cache(tmp_path, monkeypatch)
    code, output = memeval("cache", "prune", "--cache", str(cache.path))
    assert code == 2 and "--older-than" in output and len(cache) == 4
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", str(tmp_path / "none.sqlite"))
    code, output = memeval("cache", "stats")
    assert code == 2 and "none.sqlite" in output and "--cache" in output
