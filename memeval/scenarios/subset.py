"""Run part of a suite: turns by category or tag, scenarios by id, a few turns each.

A subset keeps each scenario's turns in order and drops the rest, so the session
replays only the chosen turns (under gold history their starting state is still
the one the labels of the kept turns imply). Scenarios left with no turn are
dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from memeval.scenarios.schema import Scenario, Turn


def _keep(turn: Turn, categories: set[str], tags: set[str], exclude: set[str]) -> bool:
    labels = {turn.labels.category, *turn.tags}
    return ((not categories or turn.labels.category in categories)
            and (not tags or bool(labels & tags)) and not labels & exclude)


def select_turns(scenarios: Iterable[Scenario], *, categories: Sequence[str] = (),
                 tags: Sequence[str] = (), exclude_tags: Sequence[str] = (),
                 scenario_ids: Sequence[str] = (), limit: int | None = None,
                 ) -> list[Scenario]:
    """The scenarios restricted to matching turns (a turn's category counts as a tag).

    Args:
        categories: keep turns of these categories (all when empty).
        tags: keep turns carrying one of these tags (all when empty).
        exclude_tags: drop turns carrying any of these tags.
        scenario_ids: keep only these scenarios (all when empty).
        limit: keep at most this many matching turns per scenario.
    """
    wanted_c, wanted_t, unwanted = set(categories), set(tags), set(exclude_tags)
    out = []
    for scenario in scenarios:
        if scenario_ids and scenario.id not in scenario_ids:
            continue
        turns = [t for t in scenario.turns if _keep(t, wanted_c, wanted_t, unwanted)]
        if limit is not None:
            turns = turns[:limit]
        if turns:
            out.append(scenario if len(turns) == len(scenario.turns)
                       else replace(scenario, turns=tuple(turns)))
    return out
