"""The harness: a scenario becomes a session, each turn becomes a `TurnResult`.

This is the adapter between scenarios (YAML, labels) and the reference session
(memdir, selector, caps). The runner (`memeval.evaluate`), the pytest plugin,
`memeval inspect` and the benchmarks all play turns through it. Gold labels reach
only the judges and, explicitly, a selector that declares it reads them (the
oracle, via `use_labels`); the session never sees them.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memeval.interrupt import StopRequested
from memeval.judges.base import Judge, Judgement, JudgeRequest, MemoryVerdict
from memeval.labels import PROJECT_SCOPE, memory_key, split_memory_key
from memeval.memdir.text import utf8_len
from memeval.record import TurnResult
from memeval.run_config import CompatName, RunConfig
from memeval.scenarios import MaterializedScenario, Scenario, Turn, materialize
from memeval.selectors import resolve_selector
from memeval.selectors.base import Selector
from memeval.selectors.baselines import OracleSelector
from memeval.selectors.shuffle import ShuffledManifestSelector
from memeval.session import Session, SurfacedRecord, TurnRecord
from memeval.startup import StartupContext, StartupEnv, startup_context_for, startup_reachable


@dataclass(frozen=True)
class Unit:
    scenario: Scenario
    selector_spec: str
    repeat: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scenario.id, self.selector_spec, self.repeat)


def gold_by_scope(scenario: Scenario, turn: Turn) -> dict[str, list[str]]:
    """Relevant filenames per memdir; every memdir gets a list, so an oracle can tell
    "nothing is relevant here" from "no labels"."""
    by_scope: dict[str, list[str]] = {PROJECT_SCOPE: [], **{a: [] for a in scenario.agents}}
    for key in sorted(turn.labels.relevant):
        scope, filename = split_memory_key(key)
        by_scope.setdefault(scope, []).append(filename)
    return by_scope


def delivered(record: TurnRecord) -> tuple[SurfacedRecord, ...]:
    """What the selection put in front of the model: the surfaced memories, or the
    ones a tool-less turn discarded (scored, but flagged, as SPEC §2.8 asks)."""
    return record.surfaced or record.discarded


def judge_request(turn: Turn, record: TurnRecord) -> JudgeRequest:
    candidates: list[str] = []
    descriptions: dict[str, str] = {}
    for search in record.dirs:
        for header in search.candidates:
            key = memory_key(search.scope, header.filename)
            candidates.append(key)
            descriptions[key] = "" if header.description is None else str(header.description)
    shown = delivered(record)
    return JudgeRequest(
        turn_id=turn.id,
        query=turn.query,
        manifest="\n".join(d.manifest for d in record.dirs if d.manifest),
        candidates=tuple(candidates),
        selected=tuple(s.key for s in shown),
        contents={s.key: s.content for s in shown},
        descriptions=descriptions,
        labels=turn.labels,
    )


def _safe_score(judge: Judge, request: JudgeRequest) -> Judgement:
    try:
        return judge.score(request)
    except Exception as exc:  # a judge bug must not lose the selector's result
        return Judgement(
            turn_id=request.turn_id, judge=judge.name,
            verdicts=tuple(MemoryVerdict(k, "unscored", "judge failed") for k in request.selected),
            error=f"{type(exc).__name__}: {exc}",
        )


def startup_contexts(world: MaterializedScenario, scenario: Scenario,
                     ) -> dict[str, StartupContext]:
    """The startup context in both modes: the session's own, and the index-only one
    that the phase-1 reachability question is asked of."""
    sandbox = world.root / "startup"
    contexts = {}
    for mode in ("index", "recall"):
        env = StartupEnv(
            cwd=world.cwd, config_home=sandbox / "config", memory_base=world.memory_base,
            home=sandbox / "home", managed_dir=sandbox / "managed",
            memory_dir=world.project_dir, recall_mode=mode == "recall",
            walk_root=world.root,  # nothing above the materialized tree is read
            auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)),
        )
        contexts[mode] = startup_context_for(env, today=scenario.now.date())
    return contexts


def phase1_reachability(turn: Turn, index_context: StartupContext) -> dict[str, bool]:
    """For each relevant project memory: does its index line survive into the startup
    context? (Agent memories have no index in the startup context.)"""
    return {key: startup_reachable(index_context, key) for key in sorted(turn.labels.relevant)
            if not key.startswith("@")}


def selector_error(record: TurnRecord) -> str | None:
    """Why the selector gave no usable answer in some memdir, if it did not."""
    errors = [f"{d.scope}: {d.error}" for d in record.dirs if d.error]
    return "; ".join(errors) or None


def turn_result(unit: Unit, index: int, turn: Turn, record: TurnRecord,
                judges: Sequence[Judge], startup: Mapping[str, bool] | None = None,
                root: str = "", history: str = "own", in_context: tuple[str, ...] = (),
                earlier_relevant: tuple[str, ...] = ()) -> TurnResult:
    """The results row of one turn: the record once, every judge's grading of it."""
    request = judge_request(turn, record)
    shown = delivered(record)
    return TurnResult(
        scenario=unit.scenario.id, scenario_path=str(unit.scenario.path),
        turn_id=turn.id, turn_index=index, selector=unit.selector_spec, repeat=unit.repeat,
        category=turn.labels.category, why=turn.labels.why,
        tags=turn.tags, answer=turn.answer, query=turn.query,
        relevant=tuple(sorted(turn.labels.relevant)),
        acceptable=tuple(sorted(turn.labels.acceptable)),
        selected=request.selected,
        discarded=bool(record.discarded) and not record.surfaced,
        skipped=record.skipped,
        surfaced_bytes=sum(utf8_len(s.content) for s in shown),
        selector_usage=record.usage,
        selector_error=selector_error(record),
        errors=tuple(record.errors),
        startup_reachable=dict(startup or {}),
        judgements={judge.name: _safe_score(judge, request) for judge in judges},
        record=record.to_dict(),
        root=root,
        history=history,
        in_context=in_context,
        earlier_relevant=earlier_relevant,
    )


def build_selector(spec: str, config: RunConfig) -> Selector:
    selector = resolve_selector(spec)
    return ShuffledManifestSelector(selector, config.seed) if config.shuffle_manifest else selector


@dataclass
class OpenSession:
    """A scenario written to disk with its session ready for turns."""

    world: MaterializedScenario
    session: Session
    contexts: dict[str, StartupContext]


@contextmanager
def open_session(scenario: Scenario, selector: Selector,
                 compat: CompatName = "faithful") -> Iterator[OpenSession]:
    """Materialize `scenario` in a temporary folder and start a session on it."""
    with tempfile.TemporaryDirectory(prefix="memeval-") as tmp:
        world = materialize(scenario, Path(tmp))
        contexts = startup_contexts(world, scenario)
        session = Session(
            world.memory_base,
            scenario.project_root,
            cwd=world.cwd,
            selector=selector,
            agents={a.type: (None if a.scope == "none" else a.scope)
                    for a in scenario.agents.values()},
            now_ms=scenario.now_ms,
            auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)),
            prefetch_enabled=bool(scenario.flags.get("prefetch", True)),
            recall_mode=scenario.mode == "recall",
            compat=compat,
            startup_context=contexts[scenario.mode].text,
        )
        yield OpenSession(world, session, contexts)


def reads_labels(selector: Selector) -> bool:
    """Whether `selector` is the built-in oracle (possibly wrapped): the one selector
    the harness hands gold labels to. A third-party class with a `use_labels`
    method gets nothing."""
    inner = selector.inner if isinstance(selector, ShuffledManifestSelector) else selector
    return isinstance(inner, OracleSelector)


def play_turn(session: Session, scenario: Scenario, turn: Turn, repeat: int = 0, *,
              compact: bool = True) -> TurnRecord:
    """One scenario turn through the session, compaction first when the turn asks
    (and `compact` leaves it to this function).

    The oracle (and only the oracle, also inside the manifest-shuffling wrapper) is
    handed the turn's gold labels first; no other selector or part of the session
    sees them, whatever methods it declares.
    """
    if reads_labels(session.selector):
        session.selector.use_labels(gold_by_scope(scenario, turn))  # type: ignore[union-attr]
    if compact and turn.compact_before:
        session.compact()
    return session.turn(
        turn.query,
        tool_events=[{"tool": e.tool, "ok": e.ok, "path": e.path} for e in turn.tool_events],
        used_tools=turn.used_tools,
        turn_id=turn.id,
        repeat=repeat,
    )


def run_unit(unit: Unit, config: RunConfig, judges: Sequence[Judge],
             on_turn: Callable[[], None] = lambda: None,
             stop: threading.Event | None = None) -> list[TurnResult]:
    """Run one session and return its rows (nothing is written here); see `run_group`.

    When `stop` is set, the unit ends at the next turn boundary with `StopRequested`
    (its rows are dropped; a resume replays it from the cache).
    """
    (outcome,) = run_group([unit], config, judges, on_turn, stop)
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def run_group(units: Sequence[Unit], config: RunConfig, judges: Sequence[Judge],
              on_turn: Callable[[], None] = lambda: None,
              stop: threading.Event | None = None
              ) -> list[list[TurnResult] | Exception]:
    """Run sessions of one scenario and repeat together and return each one's rows.

    Under `own` history a group is one unit: its selector's session runs end to end.
    Under `gold` history one materialized world and one reference walk (the oracle,
    driven by the labels) serve every unit: each selector plays each turn on its own
    fork of the reference, so all start every turn from the same state, and the forks
    and the reference share the turn's memdir scan. Rows equal those of running each
    unit alone; the files, the walk and the scans are paid once per group.

    Returns:
        Each unit's rows, in the order of `units`; a unit whose selector failed to
        build or whose fork broke gets its exception instead and leaves the walk, so
        it costs only itself.
    """
    scenario, repeat = units[0].scenario, units[0].repeat
    gold = config.history == "gold"
    if any(u.scenario is not scenario or u.repeat != repeat for u in units) or \
            (not gold and len(units) != 1):
        raise ValueError("run_group: units of one scenario and repeat, one unit under "
                         "own history")
    selectors: dict[int, Selector] = {}
    outcomes: list[list[TurnResult] | Exception] = []
    for i, unit in enumerate(units):
        try:
            selectors[i] = build_selector(unit.selector_spec, config)
            outcomes.append([])
        except Exception as exc:  # a selector that cannot start fails alone
            outcomes.append(exc)
    if not selectors:
        return outcomes
    driver = OracleSelector() if gold else selectors[0]
    with open_session(scenario, driver, config.compat) as opened:
        session, context = opened.session, Context()
        for index, turn in enumerate(scenario.turns):
            _check_stop(stop, scenario, turn)
            if turn.compact_before:
                session.compact()  # resets the driving selector
                context.clear()
                for selector in selectors.values() if gold else ():  # and the forks'
                    reset = getattr(selector, "reset", None)
                    if callable(reset):
                        reset()
            in_context = context.keys()
            records: dict[int, TurnRecord] = {}
            if gold:
                session.scan_memo = {}  # this turn's files, scanned once for all forks
                for i, selector in list(selectors.items()):
                    try:
                        records[i] = play_turn(session.fork(selector), scenario, turn,
                                               repeat, compact=False)
                    except Exception as exc:  # a broken fork leaves the walk, alone
                        outcomes[i] = exc
                        del selectors[i]
            reference = play_turn(session, scenario, turn, repeat, compact=False)
            context.add(reference)
            if not gold:
                records[0] = reference
            reachable = phase1_reachability(turn, opened.contexts["index"])
            earlier = context.earlier_relevant(scenario, index)
            first: TurnResult | None = None
            for i, record in records.items():
                row = turn_result(units[i], index, turn, record, judges, reachable,
                                  root=str(opened.world.root), history=config.history,
                                  in_context=in_context, earlier_relevant=earlier)
                first = first or row
                _share_scans(first, row)
                rows = outcomes[i]
                assert not isinstance(rows, Exception)
                rows.append(row)
                on_turn()
    return outcomes


def _share_scans(first: TurnResult, row: TurnResult) -> None:
    """Every fork of a turn scanned the same memdirs: hold what their scans have alike
    (manifest, candidates) once, not once per selector, while a group's rows wait to be
    written. Only equal values are replaced, by the same value."""
    for mine, theirs in zip(row.record.get("dirs") or (), first.record.get("dirs") or (),
                            strict=False):
        if isinstance(mine, dict) and isinstance(theirs, dict) and mine is not theirs:
            for key, value in theirs.items():
                if key in mine and mine[key] == value:
                    mine[key] = value


def _check_stop(stop: threading.Event | None, scenario: Scenario, turn: Turn) -> None:
    if stop is not None and stop.is_set():
        raise StopRequested(f"{scenario.id}: stopped before turn {turn.id}")


class Context:
    """Which memories are in the transcript (surfaced since the last compaction)."""

    def __init__(self) -> None:
        self._keys: dict[str, None] = {}

    def add(self, record: TurnRecord) -> None:
        self._keys.update(dict.fromkeys(s.key for s in record.surfaced))

    def clear(self) -> None:
        self._keys.clear()

    def keys(self) -> tuple[str, ...]:
        return tuple(self._keys)

    @staticmethod
    def earlier_relevant(scenario: Scenario, index: int) -> tuple[str, ...]:
        return tuple(sorted({k for t in scenario.turns[:index] for k in t.labels.relevant}))
