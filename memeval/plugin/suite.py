"""The engine behind the pytest suites: test cases, the session-unit cache, invariants.

pytest makes one item per scenario turn × selector, but a turn only means something
inside its session (what surfaced before, the budget, compaction). So the first item
of a scenario × selector runs the whole session once (`memeval.run.evaluate.run_unit`)
and every item of that unit reads its own turn from the cached rows. Nothing here
imports pytest: the plugin wires it in, and the logic is testable on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memeval.jsonenc import json_safe
from memeval.judges import resolve_judge
from memeval.judges.base import Judge
from memeval.labels import GOLD, PROJECT_SCOPE
from memeval.log import (
    CONFIG_FILE,
    REPORT_FILE,
    RecordedTurn,
    ResultsWriter,
    TurnResult,
    read_summary,
    write_json,
)
from memeval.memdir import ENTRYPOINT_NAME as INDEX_NAME
from memeval.memdir import MAX_MEMORY_BYTES, MAX_MEMORY_LINES
from memeval.run.config import RunConfig
from memeval.run.evaluate import run_config_record
from memeval.run.play import Unit, run_unit
from memeval.scenarios import LoadResult, Scenario, load_many
from memeval.scoring.catalog import HEADLINE
from memeval.scoring.metrics import score_results
from memeval.selectors import resolve_selector
from memeval.session import MAX_SURFACED_PER_TURN, Compat

# Where the truncation note starts (SPEC §2.6); limits apply to the content before it.
NOTE_START = "\n\n> This memory file was truncated ("
UnitKey = tuple[str, str, int]

if TYPE_CHECKING:
    from memeval.llm import ModelAccess


@dataclass(frozen=True)
class TurnCase:
    """One test item: a scenario turn under one selector (or a scenario that failed to load).

    Args:
        scenario_id: the scenario's id (empty for a load error).
        label: the scenario file as shown in ids (`fixtures/scenarios/x.yaml`).
        turn_id: the turn's id.
        selector: the selector spec.
        load_error: why the scenario file could not be loaded; the item fails with it.
    """

    scenario_id: str
    label: str
    turn_id: str
    selector: str
    load_error: str | None = None

    @property
    def id(self) -> str:
        """`fixtures/scenarios/x.yaml::t3[bm25]`, the item id pytest shows."""
        if self.load_error is not None:
            return f"{self.label}::load-error"
        return f"{self.label}::{self.turn_id}[{self.selector}]"


def display_path(path: Path, roots: Sequence[Path]) -> str:
    """A scenario path relative to the first root that holds it, with `/` separators."""
    resolved = path.resolve()
    for root in roots:
        try:
            return PurePosixPath(resolved.relative_to(root.resolve())).as_posix()
        except ValueError:
            continue
    parent = resolved.parent
    return f"{parent.parent.name}/{parent.name}/{resolved.name}" if parent.parent.name \
        else resolved.name


def invariant_problems(scenario: Scenario, records: Sequence[RecordedTurn],
                       compat: Compat,
                       in_context: Sequence[Sequence[str]] | None = None,
                       ) -> dict[str, list[str]]:
    """SPEC §3's invariants over one session's turn records, per turn id.

    A quirk of the faithful preset that knowingly breaks an invariant (duplicate names
    surfacing twice in one turn, symlinks followed out of a memdir) is allowed while
    its switch is on; everything else is a problem. `in_context` gives, per turn, the
    memory keys already in the transcript when each turn is a fork of another session
    (gold history); without it the records are one session, played in order.
    """
    problems: dict[str, list[str]] = {}
    seen: dict[str, str] = {}  # key -> turn that surfaced it, since the last compaction
    for index, (turn, record) in enumerate(zip(scenario.turns, records, strict=True)):
        found: list[str] = []
        if in_context is not None:
            seen = dict.fromkeys(in_context[index], "the reference walk's")
        elif turn.compact_before:
            seen.clear()
        dirs = record.dirs
        scopes = {d.scope for d in dirs}
        for d in dirs:
            for header in d.candidates:
                if PurePosixPath(header["filename"]).name == INDEX_NAME:
                    found.append(f"invariant 1: {INDEX_NAME} listed as a candidate "
                                 f"({d.scope}: {header['filename']})")
        surfaced = record.surfaced
        if len(surfaced) > MAX_SURFACED_PER_TURN:
            found.append(f"invariant 2: {len(surfaced)} memories surfaced, at most "
                         f"{MAX_SURFACED_PER_TURN} allowed")
        this_turn: set[str] = set()
        for memory in surfaced:
            key, path = memory.key, memory.path
            if PurePosixPath(memory.filename).name == INDEX_NAME:
                found.append(f"invariant 1: {INDEX_NAME} surfaced ({key})")
            body = memory.content.split(NOTE_START, 1)[0]
            size, lines = len(body.encode("utf-8")), body.count("\n") + 1
            if size > MAX_MEMORY_BYTES:
                found.append(f"invariant 3: {key} surfaced {size} bytes, over "
                             f"{MAX_MEMORY_BYTES}")
            if lines > MAX_MEMORY_LINES:
                found.append(f"invariant 3: {key} surfaced {lines} lines, over "
                             f"{MAX_MEMORY_LINES}")
            if key in seen:
                found.append(f"invariant 4: {key} surfaced again (first in turn "
                             f"{seen[key]}, no compaction since)")
            elif key in this_turn and not compat.duplicate_names_surface_twice:
                found.append(f"invariant 4: {key} surfaced twice in one turn")
            this_turn.add(key)
            mentioned = scopes - {PROJECT_SCOPE}
            if memory.scope not in scopes:
                found.append(f"invariant 5: {key} comes from memdir {memory.scope!r}, "
                             f"not searched this turn ({', '.join(sorted(scopes))})")
            elif not mentioned and memory.scope != PROJECT_SCOPE:
                found.append(f"invariant 5: {key} is an agent memory in a turn without "
                             "agent mentions")
            home = next((d.memory_dir for d in dirs if d.scope == memory.scope), None)
            if (home is not None and not compat.follow_symlinks_out_of_memdir
                    and not Path(path).resolve().is_relative_to(Path(home).resolve())):
                found.append(f"invariant 5: {key} resolves outside its memdir {home}")
        seen.update({p: turn.id for p in this_turn})
        if found:
            problems[turn.id] = found
    return problems


@dataclass
class UnitOutcome:
    """A session unit's rows, their scores (every judge) and invariant problems per turn."""

    scenario: Scenario
    selector: str
    rows: list[TurnResult]
    problems: dict[str, list[str]]
    scores: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def scored(cls, scenario: Scenario, selector: str, rows: list[TurnResult],
               problems: dict[str, list[str]]) -> UnitOutcome:
        """Score the unit once (`memeval.scoring.metrics`); items only read the scores."""
        frame = score_results(rows)
        scores = {(str(r["turn_id"]), str(r["judge"])): r
                  for r in json_safe(frame.to_dict(orient="records"))}
        return cls(scenario, selector, rows, problems, scores)

    def turn_row(self, turn_id: str) -> TurnResult | None:
        return next((r for r in self.rows if r.turn_id == turn_id), None)


@dataclass(frozen=True)
class ItemResult:
    """What one item sees: its turn's row, the unit's scores of it and its problems."""

    case: TurnCase
    row: TurnResult | None
    problems: tuple[str, ...]
    scored: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def record(self) -> RecordedTurn:
        """What the session did in the turn (empty when the turn has no row)."""
        return self.row.record if self.row is not None else RecordedTurn()

    @property
    def selection_errors(self) -> tuple[str, ...]:
        """Selector and session errors (not a judge's)."""
        return self.row.errors if self.row is not None else ()

    def judge_error(self, judge: str) -> str | None:
        """Why `judge` could not score this turn (its error, or why it is unscored)."""
        if self.case.load_error is not None:
            return self.case.load_error
        if self.row is None or judge not in self.row.judgements:
            return f"no verdicts of judge {judge}"
        error = self.row.judgements[judge].error
        if error:
            return error
        reason = (self.scored.get(judge) or {}).get("unscored_reason")
        return None if reason in (None, "selector error") else f"unscored: {reason}"

    def scores(self, judge: str = GOLD) -> dict[str, Any]:
        """The headline metrics (catalog) and the outcome under `judge`."""
        row = self.scored.get(judge) or {}
        return {name: row.get(name) for name in (*HEADLINE, "outcome")} if row else {}

    def failure(self, judge: str = GOLD) -> str | None:
        """Why the item fails: broken invariants, errors, or a turn that could not be
        scored; None when it passes."""
        if self.case.load_error is not None:
            return self.case.load_error
        lines = [*self.problems, *(f"error: {e}" for e in self.selection_errors)]
        if not self.selection_errors:
            problem = self.judge_error(judge)
            if problem:
                lines.append(f"judge {judge}: {problem}")
        if not lines:
            return None
        query = self.row.query if self.row is not None else ""
        return f"{self.case.id}: query {query!r}\n" + "\n".join(f"  - {line}" for line in lines)


@dataclass
class SuiteStore:
    """Scenarios, cached session units and the rows to write at the end of a pytest run.

    Args:
        config: scenarios, selectors and compat preset (judges are `judges()`).
        roots: folders scenario ids are shown relative to (rootdir first).
        judges: judge spec strings every unit is scored with; the Claude judge is added
            by the plugin when a judged suite runs.
        models: the model access handed to every selector and judge (a cassette's,
            or the --memeval-replay one); None lets each build its own.
    """

    config: RunConfig
    roots: tuple[Path, ...] = ()
    judges: list[str] = field(default_factory=lambda: [GOLD])
    models: ModelAccess | None = None
    _loaded: LoadResult | None = None
    _units: dict[tuple[str, str], UnitOutcome] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _built_judges: list[Judge] | None = None
    foreign: dict[UnitKey, list[TurnResult]] = field(default_factory=dict)
    report_error: str | None = None

    # -- collection ---------------------------------------------------------------------
    def loaded(self) -> LoadResult:
        if self._loaded is None:
            self._loaded = load_many(self.config.scenarios)
        return self._loaded

    def scenario(self, scenario_id: str) -> Scenario:
        return next(s for s in self.loaded().scenarios if s.id == scenario_id)

    def cases(self) -> list[TurnCase]:
        """Every item, scenario by scenario, turns in order, selectors innermost."""
        loaded = self.loaded()
        out: list[TurnCase] = []
        for error in loaded.errors:
            where = error.issues[0].file if error.issues else "scenarios"
            out.append(TurnCase("", display_path(Path(where), self.roots)
                                if Path(where).exists() else where, "", "", str(error)))
        for scenario in loaded.scenarios:
            label = display_path(scenario.path, self.roots)
            out += [TurnCase(scenario.id, label, turn.id, spec)
                    for turn in scenario.turns for spec in self.config.selectors]
        return out

    def validate_specs(self) -> None:
        """Resolve every selector and judge once, so a typo fails before any item runs."""
        for spec in self.config.selectors:
            resolve_selector(spec)
        self.built_judges()

    def add_judge(self, spec: str) -> None:
        """Score every unit with `spec` too (before any unit has run)."""
        if spec not in self.judges:
            self.judges = [*self.judges, spec]
            self._built_judges = None

    def use_models(self, models: ModelAccess) -> None:
        """Hand `models` to every selector and judge built from now on."""
        self.models, self._built_judges = models, None

    def built_judges(self) -> list[Judge]:
        if self._built_judges is None:
            self._built_judges = [resolve_judge(spec, models=self.models)
                                  for spec in self.judges]
        return self._built_judges

    # -- running ------------------------------------------------------------------------
    def unit(self, scenario_id: str, selector: str) -> UnitOutcome:
        """The session of `scenario_id` under `selector`, run on first use only."""
        with self._lock:
            cached = self._units.get((scenario_id, selector))
            if cached is not None:
                return cached
            scenario = self.scenario(scenario_id)
            judges = self.built_judges()
            rows = run_unit(Unit(scenario, selector, 0), self.config, judges,
                            models=self.models)
            records = [r.record for r in rows]
            forks = [r.in_context for r in rows] if self.config.history == "gold" else None
            problems = invariant_problems(scenario, records, Compat.from_spec(self.config.compat),
                                          forks)
            outcome = UnitOutcome.scored(scenario, selector, rows, problems)
            self._units[(scenario_id, selector)] = outcome
            return outcome

    def result(self, case: TurnCase) -> ItemResult:
        outcome = self.unit(case.scenario_id, case.selector)
        return ItemResult(case, outcome.turn_row(case.turn_id),
                          tuple(outcome.problems.get(case.turn_id, ())),
                          {judge: score for (turn, judge), score in outcome.scores.items()
                           if turn == case.turn_id})

    # -- merging and writing --------------------------------------------------------------
    def units_rows(self) -> dict[UnitKey, list[TurnResult]]:
        """Rows of every unit this process ran, by unit key (what a worker sends)."""
        return {outcome.rows[0].session_key: outcome.rows
                for outcome in self._units.values() if outcome.rows}

    def merge(self, units: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Add units from an xdist worker; a unit two workers both ran is kept once."""
        for rows in units.values():
            results = [TurnResult.from_dict(r) for r in rows]
            if results:
                self.foreign.setdefault(results[0].session_key, results)

    def all_units(self) -> dict[UnitKey, list[TurnResult]]:
        merged = dict(self.foreign)
        for key, rows in self.units_rows().items():
            merged.setdefault(key, rows)
        return dict(sorted(merged.items()))

    def write_run(self, run_dir: Path) -> dict[str, Any] | None:
        """Write results.jsonl, config.json, summary.json (and index.html) afresh."""
        units = self.all_units()
        if not units:
            return None
        from memeval.report import RunPage
        from memeval.run.evaluate import RowDigest, finish_run

        selectors = sorted({key[1] for key in units})
        # From the rows: an xdist controller never planned the workers' judges itself.
        judges = sorted({j for rows in units.values() for row in rows for j in row.judgements})
        digest = RowDigest(RunPage())
        # A pytest run replaces the folder's last run, once it holds the folder's lock.
        with ResultsWriter(run_dir, fresh=True) as writer:
            for rows in units.values():
                for result in writer.append_unit(rows):
                    digest.add(result)
            config = replace(self.config, selectors=tuple(selectors), judges=tuple(judges))
            record = run_config_record(config, [resolve_selector(s) for s in selectors],
                                       [resolve_judge(j) for j in judges], source="pytest")
            write_json(run_dir / CONFIG_FILE, {**record, "source": "pytest",
                                               "scenario_errors": [
                                                   str(e) for e in self.loaded().errors]})
            try:
                summary = finish_run(run_dir, digest=digest)
            except Exception as exc:  # a report bug must not lose the run: summary is on disk
                self.report_error = f"{REPORT_FILE} not written ({type(exc).__name__}: {exc})"
                summary = read_summary(run_dir)
            writer.mark_complete()
        return summary


def unit_rows_payload(units: Mapping[UnitKey, list[TurnResult]]) -> dict[str, Any]:
    """Units keyed by a string, as xdist's workeroutput (JSON-like) can carry them."""
    return {"\x1f".join(map(str, key)): [r.to_dict() for r in rows]
            for key, rows in units.items()}

