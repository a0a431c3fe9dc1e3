"""The two modes, never both (SPEC §0): the Session's startup context and its recall."""

from __future__ import annotations

import pytest
from _session_world import make_world, memory_text

from memeval.errors import MemevalError
from memeval.selectors.testing import EverythingSelector
from memeval.startup import StartupEnv


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path)
    w.write(w.project_dir, "MEMORY.md", "- [Testing](testing.md) — run tests against a real db\n")
    w.write(w.project_dir, "testing.md", memory_text("run tests against a real db"))
    (w.repo / "CLAUDE.md").write_text("Use tabs.\n")
    return w


def env_for(world):
    return StartupEnv.in_folder(world.root / "env", cwd="work", git_root=world.repo)


def test_index_mode_puts_the_index_in_the_startup_context_and_does_no_recall(world):
    selector = EverythingSelector()
    session = world.session(selector, recall_mode=False, startup_env=env_for(world))
    assert "[Testing](testing.md)" in session.startup_context.text
    assert str(world.project_dir / "MEMORY.md") in session.startup_context.text
    record = session.turn("how do I run the tests")
    assert record.skipped == "gate:recall-off" and selector.requests == []


def test_recall_mode_leaves_the_index_out_and_recalls_per_turn(world):
    session = world.session(EverythingSelector(), recall_mode=True, startup_env=env_for(world))
    assert "[Testing](testing.md)" not in session.startup_context.text
    assert session.turn("how do I run the tests").surfaced_keys == ("testing.md",)


def test_session_mode_wins_over_the_env_flag(world):
    env = env_for(world)
    assert env.recall_mode is False
    session = world.session(EverythingSelector(), recall_mode=True, startup_env=env)
    assert session.startup_context.mode == "recall"


def test_auto_memory_off_means_no_index_and_no_recall(world):
    session = world.session(EverythingSelector(), recall_mode=False, auto_memory_enabled=False,
                            startup_env=env_for(world))
    assert "[Testing](testing.md)" not in session.startup_context.text
    assert session.turn("how do I run the tests").skipped == "gate:auto-memory-disabled"


def test_compaction_recomputes_the_startup_context(world):
    session = world.session(EverythingSelector(), recall_mode=False, startup_env=env_for(world))
    world.write(world.project_dir, "MEMORY.md", "- [Deploy](deploy.md) — staging first\n")
    assert "[Deploy](deploy.md)" not in session.startup_context.text  # computed once
    session.compact()
    assert "[Deploy](deploy.md)" in session.startup_context.text


def test_a_given_startup_context_is_kept_as_is(world):
    session = world.session(EverythingSelector(), startup_context="given")
    assert session.startup_context == "given"
    with pytest.raises(MemevalError, match="startup_env"):
        session.compute_startup_context()
