"""memeval's pytest plugin (registered through the `pytest11` entry point).

Installing memeval is enough: any project's tests can use the fixtures below, and
the suites in `suites/` are ordinary test files built on them.

- Options (each also an ini key in `pyproject.toml` / `pytest.ini`, the option
  wins): `--memeval-selector` (repeatable; default `oracle`, so a plain `pytest`
  stays green and fast), `--memeval-judge` (the model judge of the judged suite,
  default `claude`), `--memeval-scenarios`, `--memeval-report DIR`,
  `--memeval-baseline SUMMARY`, `--memeval-min-precision`, `--memeval-min-recall`,
  `--memeval-margin`, `--memeval-replay` / `--memeval-record CASSETTE`,
  `--memeval-profile ci|deep`, `--memeval-compat faithful|hardened`,
  `--memeval-history gold|own` (default gold, as `memeval run`).
- Fixtures: `memeval_turn` / `memeval_judged_turn` (parametrized: one item per
  scenario turn × selector), `memeval_session`, `memdir_factory`, `selector`,
  `judge`, `memeval_store`.
- Markers: `memeval_suite` (added to every item built on the turn fixtures) and
  `llm(cassette=PATH)` (needs a model: a replayed cassette, a key, or it is skipped
  with the reason).
- At the end of the session: the run folder (results.jsonl, summary.json,
  config.json, index.html when the report package is present, gate.json) and the
  gate, which fails the session when a threshold is missed or a metric is not
  non-inferior to the baseline (see `memeval.scoring.gate`), and refuses a
  baseline made another way (`memeval.provenance`).

The package loads in every pytest run of every project that installs memeval, so
its modules import only pytest and the standard library at import time; the engine
loads on first use. `_options` (flags and ini keys), `_sources` (where model answers
come from), `_state` (per-session state), `_hooks` and `_fixtures`; the engine's
pytest side is `memeval.plugin.suite`.
"""

from memeval.plugin._fixtures import (
    judge,
    memdir_factory,
    memeval_judged_turn,
    memeval_session,
    memeval_store,
    memeval_turn,
    selector,
)
from memeval.plugin._hooks import (
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_setup,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
    pytest_unconfigure,
)
from memeval.plugin._options import DEFAULT_SELECTOR, OPTIONS, Settings, read_settings
from memeval.plugin._state import judged_name

__all__ = [
    "DEFAULT_SELECTOR", "OPTIONS", "Settings", "judge", "judged_name", "memdir_factory",
    "memeval_judged_turn", "memeval_session", "memeval_store", "memeval_turn",
    "pytest_addoption", "pytest_collection_modifyitems", "pytest_configure",
    "pytest_generate_tests", "pytest_runtest_setup", "pytest_sessionfinish",
    "pytest_terminal_summary", "pytest_testnodedown", "pytest_unconfigure", "read_settings",
    "selector",
]
