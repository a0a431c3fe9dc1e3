"""Phase-1 checks on the bundled fixture memdirs (and a lint users can run on theirs).

For each `fixtures/memdirs/<name>/`: every index line links to a file that exists,
entries stay under the recommended length, the startup context carries the index
and nothing else from the memdir, recall mode leaves the index out, and exactly the
memories whose index line survives truncation are reachable from startup.
Oversized indexes are allowed here (large-memdir fixtures are built to be cut).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from memeval.startup import (
    MemoryFileType,
    StartupEnv,
    index_link_targets,
    startup_context_for,
    startup_reachable,
)
from memeval.startup.lint import lint_memdir

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memdirs"
MEMDIRS = sorted(p for p in FIXTURES.glob("*") if p.is_dir()) if FIXTURES.is_dir() else []
TODAY = dt.date(2026, 11, 30)
LINK_CODES = {"no-index", "no-link", "bad-link"}


def test_fixture_memdirs_exist() -> None:
    assert MEMDIRS, f"no memdirs under {FIXTURES}; the startup suite has nothing to check"


@pytest.fixture(params=MEMDIRS, ids=[p.name for p in MEMDIRS])
def fixture_memdir(request: pytest.FixtureRequest) -> Path:
    return request.param


@pytest.fixture
def env(fixture_memdir: Path, tmp_path: Path) -> StartupEnv:
    env = StartupEnv.in_folder(tmp_path, cwd="project", memory_dir=fixture_memdir)
    env.cwd.mkdir()
    return env


def test_each_index_line_points_to_an_existing_file(fixture_memdir: Path) -> None:
    problems = [str(p) for p in lint_memdir(fixture_memdir) if p.code in LINK_CODES]
    assert problems == []


def test_index_entries_stay_under_the_recommended_length(fixture_memdir: Path) -> None:
    problems = [str(p) for p in lint_memdir(fixture_memdir) if p.code == "long-entry"]
    assert problems == []


def test_startup_context_holds_the_index_and_no_topic_file(
    env: StartupEnv, fixture_memdir: Path
) -> None:
    context = startup_context_for(env, today=TODAY)
    assert [(f.path, f.type) for f in context.files] == [
        (fixture_memdir / "MEMORY.md", MemoryFileType.AUTO_MEM)
    ]
    for topic in fixture_memdir.rglob("*.md"):
        if topic.name != "MEMORY.md":
            assert f"Contents of {topic}" not in context.text


def test_recall_mode_leaves_the_index_out(env: StartupEnv) -> None:
    recall = replace(env, recall_mode=True)
    context = startup_context_for(recall, today=TODAY)
    assert "MEMORY.md" not in context.text
    assert context.in_context == ()


def test_reachable_memories_are_those_whose_line_survives_truncation(
    env: StartupEnv, fixture_memdir: Path
) -> None:
    context = startup_context_for(env, today=TODAY)
    [index] = context.files
    on_disk = index_link_targets((fixture_memdir / "MEMORY.md").read_text(encoding="utf-8"))
    kept = set(index_link_targets(index.content))
    for name in on_disk:
        assert startup_reachable(context, name) is (name in kept)
    assert kept <= set(on_disk)
    if not (index.was_line_truncated or index.was_byte_truncated):
        assert kept == set(on_disk)
