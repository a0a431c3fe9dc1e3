"""Scenarios: memory bases, clocks and turns with gold labels, from YAML or a generator.

`load` reads and validates one file (every problem reported at once, with line and
field), `load_many` keeps the good files of a suite, `materialize` writes a
scenario's memory base to disk with exact mtimes, `generate` writes a seeded synthetic scenario.
"""

from memeval.scenarios.generate import Rendered, generate, render
from memeval.scenarios.importers import ImportReport, import_locomo, import_longmemeval
from memeval.scenarios.loader import LoadResult, expand_paths, load, load_many, loads
from memeval.scenarios.materialize import MaterializedScenario, materialize, remove_written
from memeval.scenarios.schema import (
    AGENT_SCOPES,
    CATEGORIES,
    MODES,
    AgentSpec,
    MemdirSpec,
    MemoryFileSpec,
    Scenario,
    ScenarioError,
    ScenarioIssue,
    ToolEvent,
    Turn,
)

__all__ = [
    "AGENT_SCOPES",
    "CATEGORIES",
    "MODES",
    "AgentSpec",
    "ImportReport",
    "LoadResult",
    "MaterializedScenario",
    "MemdirSpec",
    "MemoryFileSpec",
    "Rendered",
    "Scenario",
    "ScenarioError",
    "ScenarioIssue",
    "ToolEvent",
    "Turn",
    "expand_paths",
    "generate",
    "import_locomo",
    "import_longmemeval",
    "load",
    "load_many",
    "loads",
    "materialize",
    "remove_written",
    "render",
]
