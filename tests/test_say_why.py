"""Figures come with their explanation: scan ceilings, endpoints, prompt-blind models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.log import SUMMARY_FILE
from memeval.report import RunPage
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate


def _crowded(folder: Path, files: int = 205) -> Path:
    """A memdir over the scan's 200 newest, where t1 needs the newest and the oldest."""
    lines = ["id: crowded", "now: 2026-01-01T00:00:00Z", "memdirs:", "  project:",
             "    files:"]
    for i in range(files):
        lines.append(f'      m{i:03d}.md: {{age_days: {i + 1}, content: "---\\ndescription: '
                     f'note {i}\\n---\\nbody\\n"}}')
    lines += ["turns:", "  - {id: t1, query: what do notes zero and last say, category: direct,"
              f" relevant: [m000.md, m{files - 1:03d}.md]}}"]
    (folder / "scenarios").mkdir(parents=True)
    (folder / "scenarios" / "crowded.yaml").write_text("\n".join(lines) + "\n",
                                                       encoding="utf-8")
    return folder / "scenarios"


def test_memories_beyond_the_scan_are_named_with_the_ceiling(tmp_path: Path) -> None:
    scenarios = _crowded(tmp_path)
    evaluate(RunConfig(scenarios=(str(scenarios),), selectors=("oracle",), concurrency=1),
             tmp_path / "run", progress=False)
    summary = json.loads((tmp_path / "run" / SUMMARY_FILE).read_text())
    assert summary["overall"][0]["recall"] == pytest.approx(0.5)
    assert summary["per_turn"][0]["unreachable"] == 1
    assert ("the scan cannot reach 1 relevant memories on 1 of 1 turns that need memory "
            "(they lie beyond the 200 newest files a scan lists, or could not be read): "
            "mean recall is capped at 0.500 for every selector, the oracle included"
            ) in summary["alerts"]


TINY = Path(__file__).resolve().parent / "data" / "plugin" / "tiny.yaml"


def test_another_endpoint_is_recorded_and_shown_and_a_blind_prompt_tie_explained(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through ANTHROPIC_BASE_URL the run names its server in config.json, summary.json
    and the report header; two prompts on the keyword model pick the same memories
    everywhere, and compare says why the tie is no finding."""
    from memeval.run.config import LLMOptions
    from memeval.scoring.compare import compare_runs
    from memeval.testing import FakeMessagesServer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for name, spec in (("a", "claude"), ("b", "claude?prompt=conservative")):
            evaluate(RunConfig(scenarios=(str(TINY),), selectors=(spec,), concurrency=1,
                               llm=LLMOptions(cache=False)), tmp_path / name, progress=False,
                     page=RunPage())
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    summary = json.loads((tmp_path / "a" / SUMMARY_FILE).read_text())
    [(name, url)] = config["made"]["endpoints"].items()
    assert url == server.url.rstrip("/") and name.startswith("claude:")
    assert summary["made"]["endpoints"] == config["made"]["endpoints"]
    page = (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    assert f"{name} was answered by {url}, not the provider's API" in page
    data = compare_runs(tmp_path / "a", tmp_path / "b")
    [note] = data["notes"]
    assert "picked exactly what" in note and "keyword model reads the query and the " \
        "manifest, never the prompt" in note


def test_answer_surfaced_is_in_the_table_and_report_when_scenarios_carry_answers(
        tmp_path: Path) -> None:
    from memeval.scenarios.importers import import_locomo

    source = Path(__file__).resolve().parent / "data" / "importers" / "locomo_tiny.json"
    import_locomo(source, tmp_path / "imported")
    for name, scenarios in (("answers", tmp_path / "imported" / "scenarios"), ("none", TINY)):
        evaluate(RunConfig(scenarios=(str(scenarios),), selectors=("oracle",), concurrency=1),
                 tmp_path / name, progress=False, page=RunPage())
    with_answers = json.loads((tmp_path / "answers" / SUMMARY_FILE).read_text())
    without = json.loads((tmp_path / "none" / SUMMARY_FILE).read_text())
    assert "answer surfaced" in with_answers["table"].splitlines()[0]
    assert "answer surfaced" not in without["table"]
    assert ">answer surfaced ↑</th>" in (
        tmp_path / "answers" / "index.html").read_text(encoding="utf-8")
    assert ">answer surfaced ↑</th>" not in (tmp_path / "none" / "index.html").read_text(
        encoding="utf-8")
