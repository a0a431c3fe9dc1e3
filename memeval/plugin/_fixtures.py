"""The plugin's fixtures: one item per scenario turn × selector, and building blocks."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memeval.errors import MemevalError
from memeval.labels import GOLD
from memeval.plugin._sources import cassette_models, marker_cassette, model_source
from memeval.plugin._state import judged_name, state_of

if TYPE_CHECKING:
    from memeval.plugin.suite import ItemResult, SuiteStore
    from memeval.scenarios import MaterializedScenario, Scenario, Turn
    from memeval.session import Session, TurnRecord

@pytest.fixture(scope="session")
def memeval_store(pytestconfig: pytest.Config) -> SuiteStore:
    """The session's scenarios and cached session units (one per scenario × selector)."""
    return state_of(pytestconfig).store


def _turn_result(request: pytest.FixtureRequest) -> ItemResult:
    from memeval.plugin.suite import TurnCase

    case = getattr(request, "param", None)
    if not isinstance(case, TurnCase):
        raise pytest.UsageError(f"{request.fixturename} is parametrized by the memeval "
                                "plugin; request it from a test function, not another fixture")
    if case.load_error is not None:
        from memeval.plugin.suite import ItemResult

        return ItemResult(case, None, (case.load_error,))  # fails in the test, not setup
    return state_of(request.config).store.result(case)


@pytest.fixture
def memeval_turn(request: pytest.FixtureRequest) -> ItemResult:
    """One scenario turn under one selector, scored by the gold labels.

    `result.failure()` says which invariant broke or which error occurred; the
    scores are recorded as the item's user_properties and in the run folder.
    """
    result = _turn_result(request)
    for name, value in result.scores(GOLD).items():
        request.node.user_properties.append((f"memeval_{name}", value))
    return result


@pytest.fixture
def memeval_judged_turn(request: pytest.FixtureRequest) -> ItemResult:
    """One scenario turn scored by the model judge (see `--memeval-judge`)."""
    result = _turn_result(request)
    for name, value in result.scores(judged_name(request.config)).items():
        request.node.user_properties.append((f"memeval_judged_{name}", value))
    return result


@pytest.fixture
def selector(pytestconfig: pytest.Config) -> Any:
    """A fresh selector built from the first --memeval-selector spec (default oracle)."""
    from memeval.selectors import resolve_selector

    state = state_of(pytestconfig)
    return resolve_selector(state.settings.selectors[0], models=state.models)


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The --memeval-judge judge; under an `llm(cassette=...)` marker with no key it
    answers from that cassette."""
    from memeval.judges import resolve_judge

    state = state_of(request.config)
    source = model_source(state.settings, marker_cassette(request.node))
    if source.kind == "cassette" and source.cassette is not None:
        with cassette_models(source.cassette) as models:
            yield resolve_judge(state.settings.judge, models=models)
    else:
        yield resolve_judge(state.settings.judge, models=state.models)


@dataclass
class ScenarioSession:
    """A Session running on a materialized scenario; `play` runs one of its turns."""

    scenario: Scenario
    world: MaterializedScenario
    session: Session
    contexts: Mapping[str, Any]

    def turn(self, turn_id: str) -> Turn:
        for turn in self.scenario.turns:
            if turn.id == turn_id:
                return turn
        raise MemevalError(f"scenario {self.scenario.id}: no turn {turn_id!r}; it has "
                           f"{', '.join(t.id for t in self.scenario.turns)}")

    def play(self, turn: Turn | str) -> TurnRecord:
        """Run a turn (by id or Turn); turns are meant to be played in scenario order."""
        from memeval.run.play import play_turn

        chosen = self.turn(turn) if isinstance(turn, str) else turn
        return play_turn(self.session, self.scenario, chosen)


@pytest.fixture
def memeval_session(request: pytest.FixtureRequest, pytestconfig: pytest.Config,
                    selector: Any) -> Iterator[ScenarioSession]:
    """A Session on a materialized scenario: the one given by indirect parametrization
    (a scenario id), else the first configured scenario; selector from `selector`."""
    store = state_of(pytestconfig).store
    scenarios = store.loaded().scenarios
    if not scenarios:
        pytest.fail("memeval_session: no scenario loaded; check --memeval-scenarios",
                    pytrace=False)
    wanted = getattr(request, "param", None)
    chosen = next((s for s in scenarios if s.id == wanted), None) if wanted else scenarios[0]
    if chosen is None:
        pytest.fail(f"memeval_session: no scenario {wanted!r}; loaded: "
                    f"{', '.join(s.id for s in scenarios)}", pytrace=False)
    from memeval.run.play import open_session

    with open_session(chosen, selector, store.config.compat) as opened:
        yield ScenarioSession(chosen, opened.world, opened.session, opened.contexts)


MemdirFactory = Callable[..., Path]


@pytest.fixture
def memdir_factory(tmp_path: Path) -> MemdirFactory:
    """Write a memdir: `memdir_factory({"a.md": text}, ages={"a.md": 3}) -> Path`.

    Args (of the returned function):
        files: relative path -> file text (frontmatter included).
        name: folder name under the test's tmp_path.
        ages: relative path -> age in days before `now` (default 0).
        now: the clock the ages count back from (default: now, UTC).
    """
    def make(files: Mapping[str, str], *, name: str = "memory",
             ages: Mapping[str, float] | None = None, now: datetime | None = None) -> Path:
        root = tmp_path / name
        clock = (now or datetime.now(UTC)).timestamp()
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            stamp = clock - float((ages or {}).get(rel, 0)) * 86_400
            os.utime(path, (stamp, stamp))
        root.mkdir(parents=True, exist_ok=True)
        return root

    return make
