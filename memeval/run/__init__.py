"""The engine: what a run is (config, sweep), how it is cut (units, shards), where
its files live (scratch worlds), how a turn and a unit are played, how units run
together (runner, interrupts) and how a run folder is finished (summary, page).

- `config`: `RunConfig` (what a run evaluates) and `LLMOptions` (how it calls models).
- `sweep`: `load_sweep`, a reviewed TOML file of selectors × prompts × judges.
- `evaluate`: the main job (`memeval.run.evaluate.evaluate`), `plan_units`,
  `finish_run`, `rebuild_run`.
- `play`: `Unit`, `World`, `open_session`, `play_turn`, `run_unit`.
- `shards`: `Shard` and `merge_runs`.
- `interrupt`: `RunInterrupted`, what a stopped run raises.

Each name loads its module on first use, so the command line starts quickly.
"""

from __future__ import annotations

from memeval._lazy import lazy_exports

_WHERE: dict[str, str] = {
    "RunConfig": "config", "LLMOptions": "config", "load_sweep": "sweep",
    "plan_units": "evaluate", "finish_run": "evaluate",
    "rebuild_run": "evaluate", "RunOutcome": "evaluate",
    "Unit": "play", "World": "play", "open_session": "play", "play_turn": "play",
    "run_unit": "play", "Shard": "plan", "merge_runs": "shards",
    "RunInterrupted": "interrupt",
}

__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
