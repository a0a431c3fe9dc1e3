"""Why turns failed, told under the CLI's table: each selector's and judge's most
common error causes with their counts, and the first error once in full, so a user
learns the cause without opening the report."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP_REASONS = 3  # causes shown per selector or judge; the report lists every turn
SHOWN_CHARS = 160  # a cause is one line; the first error is shown whole
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")  # answers differ per turn


def cause(error: str) -> str:
    """An error with what varies per turn (quoted answers) masked, cut to one line."""
    line = _QUOTED.sub("'…'", error.splitlines()[0] if error else "")
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


@dataclass
class ErrorTally:
    """Errors by component (`selector X` / `judge Y`) and cause, and the first one."""

    causes: dict[str, Counter[str]] = field(default_factory=dict)
    turns: Counter[str] = field(default_factory=Counter)
    first: tuple[str, str, str] | None = None  # (component, where, full error)

    def add(self, component: str, where: str, error: str) -> None:
        self.causes.setdefault(component, Counter())[cause(error)] += 1
        if self.first is None:
            self.first = (component, where, error)

    def lines(self) -> list[str]:
        if not self.causes:
            return []
        out = ["errors by cause (the report lists every turn):"]
        for component, counts in self.causes.items():
            total = sum(counts.values())
            out.append(f"  {component}: {total} turn(s)")
            out += [f"    {n}× {text}" for text, n in counts.most_common(TOP_REASONS)]
            if len(counts) > TOP_REASONS:
                out.append(f"    … and {len(counts) - TOP_REASONS} other cause(s)")
        if self.first is not None:
            component, where, error = self.first
            out.append(f"first error in full ({component}, {where}):\n  {error}")
        return out


def tally_rows(rows: Iterable[Any]) -> ErrorTally:
    """Count the selector and judge errors of a run's rows."""
    tally = ErrorTally()
    for row in rows:
        where = f"{row.scenario} turn {row.turn_id}"
        if row.selector_error:
            tally.add(f"selector {row.selector}", where, row.selector_error)
        for name, judgement in row.judgements.items():
            if judgement.error:
                tally.add(f"judge {name}", where, judgement.error)
    return tally


def had_errors(summary: Mapping[str, Any]) -> bool:
    return any((r.get("selector_error_rate") or 0) or (r.get("judge_error_rate") or 0)
               for r in summary.get("overall") or [])


def error_reasons(run_dir: Path, summary: Mapping[str, Any]) -> list[str]:
    """The lines to print under the table; none when no turn erred (rows not read)."""
    if not had_errors(summary):
        return []
    from memeval.log import iter_results

    return tally_rows(iter_results(run_dir, searches=False)).lines()
