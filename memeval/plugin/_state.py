"""The plugin's per-session state, kept in the pytest config's stash."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memeval.labels import GOLD
from memeval.plugin._options import DEFAULT_JUDGE, Settings
from memeval.plugin._sources import ModelSource

if TYPE_CHECKING:
    from memeval.llm import ModelAccess
    from memeval.plugin.suite import SuiteStore
    from memeval.scoring.gate import GateResult

@dataclass
class PluginState:
    settings: Settings
    rootpath: Path
    _store: SuiteStore | None = None
    judged_source: ModelSource | None = None
    judged_name: str | None = None
    models: ModelAccess | None = None  # what --memeval-replay/--memeval-record built
    specs_checked: bool = False
    spec_error: str | None = None
    summary: dict[str, Any] | None = None
    gate: GateResult | None = None
    gate_error: str | None = None
    run_dir: Path | None = None


    @property
    def store(self) -> SuiteStore:
        if self._store is None:
            from memeval.plugin.suite import SuiteStore
            from memeval.run.config import RunConfig, bundled_fixtures_dir, default_scenarios

            settings = self.settings
            config = RunConfig(scenarios=settings.scenarios or default_scenarios(),
                               selectors=settings.selectors, judges=(GOLD,), concurrency=1,
                               compat=settings.compat,  # type: ignore[arg-type]
                               history=settings.history)  # type: ignore[arg-type]
            self._store = SuiteStore(config, roots=(self.rootpath,
                                                    bundled_fixtures_dir().parent),
                                     models=self.models)
        return self._store

    def has_units(self) -> bool:
        return self._store is not None and bool(self._store.all_units())


STATE = pytest.StashKey[PluginState]()


def state_of(config: pytest.Config) -> PluginState:
    return config.stash[STATE]


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def judged_name(config: pytest.Config) -> str:
    """The canonical spec of the judged suite's model judge (`claude:claude-sonnet-4-6`)."""
    return state_of(config).judged_name or DEFAULT_JUDGE
