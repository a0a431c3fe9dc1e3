"""Candidate label errors: turns where strong selectors (and a model judge) agree
against gold.

Gold labels are written by people and can be too strict or plain wrong. When every
non-oracle selector of one or more runs picks the same memory that gold calls
irrelevant — and a model judge, if one ran, holds it relevant or acceptable — the
label deserves a second look. `memeval audit` lists such turns with a suggested
YAML patch (add the memory to `acceptable:`); a person decides.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memeval.errors import MemevalError
from memeval.log import TurnResult, read_results


@dataclass(frozen=True)
class Finding:
    """One memory at one turn that the selectors agree on against gold."""

    scenario_path: str
    turn_id: str
    key: str
    pickers: tuple[str, ...]
    judges: tuple[str, ...]  # model judges that held it relevant or acceptable
    why: str

    def patch(self) -> str:
        return (f"# {self.scenario_path}, turn {self.turn_id}: picked by "
                f"{', '.join(self.pickers)}"
                + (f"; {', '.join(self.judges)} agree" if self.judges else "")
                + f"\n  - id: {self.turn_id}\n    acceptable: [..., {self.key}]   "
                f"# or relevant, if the turn needs it")


def audit(results: Sequence[TurnResult], *, min_pickers: int = 2) -> list[Finding]:
    """Memories gold calls irrelevant that at least `min_pickers` selectors (all of
    those that ran the turn) picked, and no model judge contradicts."""
    by_turn: dict[tuple[str, str], list[TurnResult]] = defaultdict(list)
    for r in results:
        if r.selector.split("?")[0] != "oracle" and not r.selector_error:
            by_turn[(r.scenario_path, r.turn_id)].append(r)
    findings = []
    for (path, turn_id), rows in sorted(by_turn.items()):
        selectors = {r.selector for r in rows}
        if len(selectors) < min_pickers:
            continue
        labelled = set(rows[0].relevant) | set(rows[0].acceptable) | set(rows[0].in_context)
        picked_by: dict[str, set[str]] = defaultdict(set)
        for r in rows:
            for key in r.selected:
                picked_by[key].add(r.selector)
        for key, pickers in sorted(picked_by.items()):
            if key in labelled or pickers != selectors:
                continue
            votes = [(j.judge, v.verdict) for r in rows for j in r.judgements.values()
                     if j.relevant is None for v in j.verdicts if v.key == key]
            if any(verdict == "irrelevant" for _, verdict in votes):
                continue  # a model judge sides with gold
            findings.append(Finding(path, turn_id, key, tuple(sorted(pickers)),
                                    tuple(sorted({j for j, _ in votes})), rows[0].why))
    return findings


def audit_runs(runs: Sequence[Path], *, min_pickers: int = 2) -> list[Finding]:
    results = [r for run in runs for r in read_results(run)]
    if not results:
        raise MemevalError("no results in the runs given; pass folders of `memeval run`")
    return audit(results, min_pickers=min_pickers)
