"""`memeval doctor` and the browser tests' skip-or-require rule on a machine without Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval import __version__
from memeval.cli import cli
from memeval.cli.doctor import find_chromium
from memeval.run.config import bundled_fixtures_dir

ROOT = Path(__file__).resolve().parents[1]


def doctor(env: dict[str, str | None]) -> dict[str, str]:
    result = CliRunner().invoke(cli, ["doctor"], env=env)
    assert result.exit_code == 0, result.output
    return {line.split("  ", 1)[0]: line.split("  ", 1)[1].strip()
            for line in result.output.splitlines()}


def test_doctor_says_a_key_is_set_without_printing_it(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    cache.write_bytes(b"x" * 3000)
    env = {"ANTHROPIC_API_KEY": "sk-ant-" + "very-secret", "OPENAI_API_KEY": "",
           "MEMEVAL_LLM_CACHE": str(cache), "MEMEVAL_CHROMIUM": str(tmp_path / "none")}
    result = CliRunner().invoke(cli, ["doctor"], env=env)
    assert "very-secret" not in result.output
    lines = doctor(env)
    assert lines["memeval"] == __version__
    assert lines["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    assert lines["ANTHROPIC_API_KEY"] == "set"
    assert lines["OPENAI_API_KEY"] == "not set"
    assert lines["response cache"] == f"{cache} (from $MEMEVAL_LLM_CACHE), 2.9 KB"
    assert lines["chromium"].startswith("not found")
    assert "apt-get install -y chromium" in lines["chromium"]
    count = len(list((bundled_fixtures_dir() / "scenarios").glob("*.yaml")))
    assert lines["bundled fixtures"].endswith(f"({count} scenarios)")


def test_doctor_cache_off_and_not_yet_created(tmp_path: Path) -> None:
    assert doctor({"MEMEVAL_LLM_CACHE": "off"})["response cache"].startswith("off")
    lines = doctor({"MEMEVAL_LLM_CACHE": None, "XDG_CACHE_HOME": str(tmp_path)})
    assert lines["response cache"] == f"{tmp_path}/memeval/llm.sqlite, not created yet"


def test_doctor_says_whether_the_embedding_model_is_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memeval.selectors import embedding

    if embedding.embedding_available():
        assert doctor({})["embedding model"].startswith("wordllama-")
    monkeypatch.setattr(embedding, "embedding_available", lambda: False)
    assert doctor({})["embedding model"].endswith(embedding.INSTALL_HINT)


def test_chromium_must_be_an_executable_file(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("MEMEVAL_CHROMIUM", str(fake))
    assert find_chromium() is None  # not executable
    fake.chmod(0o755)
    assert find_chromium() == fake
    monkeypatch.setenv("MEMEVAL_CHROMIUM", os.devnull)  # what a bind-mount hiding it leaves
    assert find_chromium() is None


def run_browser_tests(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(ROOT / "tests" / "browser" / "test_compare_page.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MEMEVAL_CHROMIUM": "/nonexistent/chromium", **env})


def test_browser_tests_skip_without_chromium_with_the_install_line() -> None:
    done = run_browser_tests(MEMEVAL_REQUIRE_BROWSER="")
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout
    assert "SKIPPED [2] tests/browser/test_compare_page.py: no Chromium" in done.stdout
    assert "apt-get install -y chromium" in done.stdout


def test_browser_tests_fail_without_chromium_where_required() -> None:
    done = run_browser_tests(MEMEVAL_REQUIRE_BROWSER="1")
    assert done.returncode == 1, done.stdout
    assert "2 errors" in done.stdout and "skipped" not in done.stdout
    assert "apt-get install -y chromium" in done.stdout
