"""What a run folder should contain, recorded in its `config.json`.

A run records a digest of each scenario it evaluated and its unit plan (every unit
of the whole run, before any share is taken). A resume then knows which stored rows
still answer the scenarios as they are now (an edited scenario's units run again, a
scenario no longer planned loses its rows); `memeval merge` checks every share's
rows against the plan; the gate fails a folder that holds fewer turns than planned.
A `Shard` is the share of the plan one machine runs (`--shard K/N`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memeval.errors import MemevalError
from memeval.log import TurnKey, UnitKey

if TYPE_CHECKING:
    from memeval.run.play import Unit
    from memeval.scenarios import Scenario

PLAN_KEY = "plan"  # its key in config.json
# Where a scenario was read from, not what it says: shares run on other machines.
_WHERE = frozenset({"path", "source", "line"})
_SPEC = re.compile(r"^(\d+)/(\d+)$")  # a share as `--shard K/N` spells it


@dataclass(frozen=True)
class Shard:
    """Share `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.match(text.strip())
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise MemevalError(f"--shard {text!r}: write K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(match[1]), int(match[2]))

    def owns(self, unit_key: Sequence[Any]) -> bool:
        """Whether this share runs the unit: a hash of its key, stable across machines."""
        digest = hashlib.sha256("\x1f".join(map(str, unit_key)).encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"



def _canonical(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in fields(value)
                if f.name not in _WHERE}
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=json.dumps)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (datetime, Path)):
        return str(value)
    return value


def scenario_digest(scenario: Scenario) -> str:
    """A digest of everything a scenario says (turns, labels, files and their times),
    not where it was read from: the same on every machine, changed by any edit that
    could change a row."""
    text = json.dumps(_canonical(scenario), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PlannedUnit:
    """A unit of the plan: turns `start` to `stop` (exclusive) of one scenario, under
    one selector and repeat."""

    scenario: str
    selector: str
    repeat: int
    start: int
    stop: int

    @property
    def key(self) -> UnitKey:
        return (self.scenario, self.selector, self.repeat, self.start)

    @property
    def turn_keys(self) -> list[TurnKey]:
        return [(self.scenario, self.selector, self.repeat, i)
                for i in range(self.start, self.stop)]


@dataclass(frozen=True)
class Plan:
    """A run's scenarios (id → digest, id → file) and every unit of the whole run.

    Args:
        digests: each scenario's `scenario_digest`.
        files: each scenario's file, for messages.
        units: the units of the whole run, every share's.
    """

    digests: Mapping[str, str]
    files: Mapping[str, str]
    units: tuple[PlannedUnit, ...]

    @classmethod
    def of(cls, scenarios: Iterable[Scenario], units: Iterable[Unit]) -> Plan:
        scenarios = list(scenarios)
        return cls(digests={s.id: scenario_digest(s) for s in scenarios},
                   files={s.id: str(s.path) for s in scenarios},
                   units=tuple(PlannedUnit(u.scenario.id, u.selector_spec, u.repeat, u.start,
                                           u.turn_indices.stop) for u in units))

    @classmethod
    def from_config(cls, record: Mapping[str, Any]) -> Plan | None:
        """The plan a `config.json` records; None when it records none (written by
        memeval before plans, or by the pytest plugin)."""
        raw = record.get(PLAN_KEY)
        if not isinstance(raw, Mapping):
            return None
        scenarios = raw.get("scenarios") or {}
        return cls(digests={k: str(v["digest"]) for k, v in scenarios.items()},
                   files={k: str(v.get("file", k)) for k, v in scenarios.items()},
                   units=tuple(PlannedUnit(str(u[0]), str(u[1]), int(u[2]), int(u[3]),
                                           int(u[4])) for u in raw.get("units") or ()))

    def share(self, shard: Shard | None) -> tuple[PlannedUnit, ...]:
        """The units a share runs (all of them without a share)."""
        return self.units if shard is None else tuple(u for u in self.units
                                                      if shard.owns(u.key))

    def to_record(self, shard: Shard | None) -> dict[str, Any]:
        """The plan as `config.json` holds it; `rows` counts the rows this folder (the
        share `shard`, or the whole run) holds when it is complete."""
        return {"scenarios": {k: {"digest": d, "file": self.files.get(k, k)}
                              for k, d in self.digests.items()},
                "units": [[u.scenario, u.selector, u.repeat, u.start, u.stop]
                          for u in self.units],
                "rows": sum(u.stop - u.start for u in self.share(shard))}


def edited_since(old: Plan | None, new: Plan) -> list[str]:
    """Scenarios of `new` whose content differs from what `old` recorded (none when
    `old` recorded no digests)."""
    if old is None:
        return []
    return sorted(k for k, d in new.digests.items() if k in old.digests and old.digests[k] != d)


def dropped_since(old: Plan | None, new: Plan) -> list[str]:
    """Scenarios `old` planned that `new` does not (a deleted or broken file)."""
    if old is None:
        return []
    return sorted(set(old.digests) - set(new.digests))


def planned_turns(units: Sequence[PlannedUnit]) -> set[TurnKey]:
    return {turn for unit in units for turn in unit.turn_keys}
