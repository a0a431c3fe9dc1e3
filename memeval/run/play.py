"""The harness: a scenario becomes a session, each turn becomes a `TurnResult`.

This is the adapter between scenarios (YAML, labels) and the reference session
(memdir, selector, caps). The runner (`memeval.run.evaluate`), the pytest plugin,
`memeval inspect` and the benchmarks all play turns through it. Gold labels reach
only the judges and, explicitly, a selector that declares it reads them (the
oracle, via `use_labels`); the session never sees them.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from memeval.answers import AnswerStage, answer_request, answers_turn
from memeval.judges.base import Judge, Judgement, JudgeRequest, MemoryVerdict
from memeval.labels import PROJECT_SCOPE, memory_key, split_memory_key
from memeval.log import GivenAnswer, RecordedTurn, TurnResult
from memeval.memdir.text import utf8_len
from memeval.run.config import CompatName, RunConfig
from memeval.run.interrupt import STOPPED_CALL, StopRequested
from memeval.run.scratch import WorldsFolder, scratch_folder, world_bytes
from memeval.scenarios import (
    MaterializedScenario,
    Scenario,
    Turn,
    materialize,
    remove_written,
)
from memeval.selectors import resolve_selector
from memeval.selectors.base import Selector, reset_selector
from memeval.selectors.baselines import OracleSelector
from memeval.selectors.shuffle import ShuffledManifestSelector, unwrapped
from memeval.session import ScanStore, Session, SurfacedRecord, TurnRecord
from memeval.startup import StartupContext, StartupEnv
from memeval.startup.context import (
    indexed_memories,
    normalize_memory_filename,
    startup_contexts_for,
)

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

T = TypeVar("T")


@dataclass(frozen=True)
class Unit:
    """A piece of work that runs on its own: turns `start` up to `stop` (exclusive; None
    is the end) of one scenario, under one selector and repeat. The runner plans a
    turn per unit where a turn's start is known in advance (gold history, a selector
    without memory) and a stretch between compactions otherwise."""

    scenario: Scenario
    selector_spec: str
    repeat: int
    start: int = 0
    stop: int | None = None

    @property
    def turn_indices(self) -> range:
        return range(self.start, len(self.scenario.turns) if self.stop is None else self.stop)

    @property
    def key(self) -> tuple[str, str, int, int]:
        """(scenario, selector, repeat, first turn): what resume and shards go by."""
        return (self.scenario.id, self.selector_spec, self.repeat, self.start)

    @property
    def turn_keys(self) -> set[tuple[str, str, int, int]]:
        """The `TurnResult.turn_key` of each of its turns."""
        return {(self.scenario.id, self.selector_spec, self.repeat, i)
                for i in self.turn_indices}


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


async def ascore(judge: Judge, request: JudgeRequest) -> Judgement:
    """One judge's grading: awaited when the judge is async, inline when it says it is
    quick, else in a thread. A failure is a recorded error, never a lost turn."""
    try:
        scoring = getattr(judge, "ascore", None)
        if callable(scoring):
            return await scoring(request)
        if runs_inline(judge):
            return judge.score(request)
        return await asyncio.to_thread(judge.score, request)
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
    env = StartupEnv(
        cwd=world.cwd, config_home=sandbox / "config", memory_base=world.memory_base,
        home=sandbox / "home", managed_dir=sandbox / "managed",
        memory_dir=world.project_dir,
        walk_root=world.root,  # nothing above the materialized tree is read
        auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)),
    )
    return dict(startup_contexts_for(env, ("index", "recall"), today=scenario.now.date()))


def phase1_reachability(turn: Turn, indexed: frozenset[str]) -> dict[str, bool]:
    """For each relevant project memory: does its index line survive into the startup
    context (`indexed`: `indexed_memories` of the index-only context)? Agent memories
    have no index in the startup context."""
    return {key: normalize_memory_filename(key) in indexed
            for key in sorted(turn.labels.relevant) if not key.startswith("@")}


def selector_error(record: TurnRecord) -> str | None:
    """Why the selector gave no usable answer in some memdir, if it did not."""
    errors = [f"{d.scope}: {d.error}" for d in record.dirs if d.error]
    return "; ".join(errors) or None


def turn_result(unit: Unit, index: int, turn: Turn, record: TurnRecord,
                judgements: Mapping[str, Judgement], startup: Mapping[str, bool] | None = None,
                root: str = "", history: str = "own", in_context: tuple[str, ...] = (),
                earlier_relevant: tuple[str, ...] = (),
                answered: GivenAnswer | None = None) -> TurnResult:
    """The results row of one turn: the record once, every judge's grading of it, and
    the agent's answer when the run has an answer stage."""
    shown = delivered(record)
    return TurnResult(
        scenario=unit.scenario.id, scenario_path=str(unit.scenario.path),
        turn_id=turn.id, turn_index=index, selector=unit.selector_spec, repeat=unit.repeat,
        category=turn.labels.category, why=turn.labels.why,
        tags=turn.tags, answer=turn.answer, query=turn.query,
        relevant=tuple(sorted(turn.labels.relevant)),
        acceptable=tuple(sorted(turn.labels.acceptable)),
        selected=tuple(s.key for s in shown),
        discarded=bool(record.discarded) and not record.surfaced,
        skipped=record.skipped,
        surfaced_bytes=sum(utf8_len(s.content) for s in shown),
        selector_usage=record.usage,
        selector_error=selector_error(record),
        errors=tuple(record.errors),
        startup_reachable=dict(startup or {}),
        judgements=dict(judgements),
        record=RecordedTurn.from_dict(record.to_dict()),
        root=root,
        history=history,
        in_context=in_context,
        earlier_relevant=earlier_relevant,
        answered=answered,
    )


async def answer_turn(answers: AnswerStage | None, world: World, index: int, turn: Turn,
                      record: TurnRecord) -> GivenAnswer | None:
    """The agent's answer at this turn, given what it has in context then: the
    startup context, the memories surfaced (as rendered for the model) and, in a
    conversation, the user's messages since the last compaction. None when the run
    has no answer stage or the turn has no gold answer to score it by."""
    if answers is None or not answers_turn(turn.answer, turn.tags):
        return None
    scenario = world.scenario
    conversation: list[str] = []
    if not scenario.independent:  # the user's messages since the last compaction
        start = max((i for i in range(index + 1) if scenario.turns[i].compact_before),
                    default=0)
        conversation = [t.query for t in scenario.turns[start:index]]
    return await answers.answer(answer_request(
        turn_id=turn.id, question=turn.query, answer=turn.answer, tags=turn.tags,
        startup=world.contexts[scenario.mode].text, reminders=record.system_reminders,
        conversation=conversation))


def build_selector(spec: str, config: RunConfig, models: ModelAccess | None = None) -> Selector:
    """The selector `spec` names, given the run's model access, shuffled if asked."""
    selector = resolve_selector(spec, models=models)
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
    with World(scenario, 0, RunConfig(compat=compat, history="own"),
               share_scans=False) as world:
        yield OpenSession(world.files, world.session(selector), world.contexts)


def reads_labels(selector: Selector) -> bool:
    """Whether `selector` is the built-in oracle (possibly wrapped): the one selector
    the harness hands gold labels to. A third-party class with a `use_labels`
    method gets nothing."""
    return isinstance(unwrapped(selector), OracleSelector)


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
             stop: threading.Event | None = None,
             models: ModelAccess | None = None,
             answers: AnswerStage | None = None) -> list[TurnResult]:
    """Play one unit on its own world and return its rows (nothing is written here).

    The blocking door to `play_unit`, for callers without an event loop (the pytest
    plugin, tests); the runner plays many units at once instead. When `stop` is set,
    the unit ends at the next turn boundary with `StopRequested`. `models` is the
    run's model access, handed to the unit's selector.
    """
    async def one() -> list[TurnResult]:
        with World(unit.scenario, unit.repeat, config, (unit,)) as world:
            return await play_unit(world, unit,
                                   build_selector(unit.selector_spec, config, models),
                                   judges, on_turn, stop, answers)

    return run_coroutine(one(), models=models)


def run_coroutine(coroutine: Coroutine[Any, Any, T], *, models: ModelAccess | None = None) -> T:
    """`asyncio.run`, also from inside a running event loop (a sync Playwright session
    in the same process runs one): then in a thread of its own. The clients of
    `models` on the loop are closed before it ends (their connections belong to it)."""
    async def then_close() -> T:
        try:
            return await coroutine
        finally:
            if models is not None:
                await models.aclose_for_loop()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(then_close())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, then_close()).result()


def carries_state(selector: Selector) -> bool:
    """Whether `selector` remembers earlier turns (a stateful model conversation), so
    its turns must run in order. A selector says so with `stateful`; one that does not
    say, but can be `reset`, is taken to remember."""
    inner = unwrapped(selector)
    declared = getattr(inner, "stateful", None)
    if declared is not None:
        return bool(declared)
    return callable(getattr(inner, "reset", None))


def runs_inline(component: object) -> bool:
    """Whether a selector or judge declares itself quick pure computation (`inline`):
    then the runner calls it on the event loop, which is faster than a thread and
    keeps the oracle's label hand-over atomic. Anything else that is synchronous runs
    in a thread, so a selector or judge that waits does not stop the other units."""
    return bool(getattr(unwrapped(component), "inline", False))


@dataclass(frozen=True)
class TurnStart:
    """The reference state a gold-history turn starts from: fork it, never play it."""

    session: Session
    in_context: tuple[str, ...]


class ReferenceWalk:
    """Gold history's reference session: the oracle, driven by the labels, plays every
    turn in order; each turn's starting state is kept (as a fork) until every unit
    that needs it has taken it."""

    def __init__(self, session: Session, scenario: Scenario, repeat: int,
                 users: Mapping[int, int]) -> None:
        self.session, self.scenario, self.repeat = session, scenario, repeat
        self._users = dict(users)  # turn index -> units still to start from it
        self._starts: dict[int, TurnStart] = {}
        self._context = InTranscript()
        self._next = 0

    def start_of(self, index: int) -> TurnStart:
        while self._next <= index:
            turn = self.scenario.turns[self._next]
            if turn.compact_before:
                self.session.compact()
                self._context.clear()
            if self._users.get(self._next):
                self._starts[self._next] = TurnStart(self.session.fork(self.session.selector),
                                                     self._context.keys())
            self._context.add(play_turn(self.session, self.scenario, turn, self.repeat,
                                        compact=False), self.scenario, self._next)
            self._next += 1
        return self._starts[index]

    @property
    def held(self) -> int:
        """Turn starts kept for units that have not taken them yet."""
        return len(self._starts)

    def taken(self, *indices: int) -> None:
        """A unit is done with these turns' starts (it forked them, or it failed and
        never will); the last unit to be done with a start frees it."""
        for index in indices:
            self._users[index] -= 1
            if not self._users[index]:
                self._starts.pop(index, None)


class World:
    """One scenario and repeat on disk, shared by every unit that plays it: the
    materialized files (written once), both startup contexts and, under gold history,
    the reference walk. No turn changes a file, so units may share them, and with
    `share_scans` one scan of each memdir serves every session and turn here (the
    same headers a fresh scan would give, paid once).

    Args:
        scenario, repeat: what to materialize.
        config: history, compat and manifest shuffling.
        units: under gold history, the units that will play here: a turn's start is
            kept until each unit that needs it has forked it.
        share_scans: sessions reuse the world's memdir scans instead of scanning each
            turn afresh as the system does. This one speed-up is kept on measure: a
            LoCoMo-sized run (10 × 200 turns × 200 files, six offline selectors) took
            57.0 s of CPU without it and 33.7 s with it.
        scratch: the folder to write the world in (`memeval.run.scratch`); by default
            a `WorldsFolder` of the world's own, where `scratch_folder` chooses.
    """

    def __init__(self, scenario: Scenario, repeat: int, config: RunConfig,
                 units: Sequence[Unit] = (), *, share_scans: bool = True,
                 scratch: str | Literal["auto"] | None = "auto") -> None:
        self.scenario, self.repeat, self.config = scenario, repeat, config
        self._scans: ScanStore | None = {} if share_scans else None
        self._own: WorldsFolder | None = None  # a world alone holds a folder of its own
        if scratch == "auto":
            self._own = WorldsFolder(scratch_folder(world_bytes([scenario])))
            scratch = self._own.path
        try:
            self._tmp = tempfile.TemporaryDirectory(prefix="memeval-", dir=scratch)
        except BaseException:
            self._release_own()
            raise
        try:
            self.files = materialize(scenario, Path(self._tmp.name))
            self.contexts = startup_contexts(self.files, scenario)
            self.indexed = indexed_memories(self.contexts["index"])
            self.walk: ReferenceWalk | None = None
            if config.history == "gold":
                users = Counter(i for u in units for i in u.turn_indices)
                self.walk = ReferenceWalk(self.session(OracleSelector()), scenario, repeat,
                                          users)
        except BaseException:
            self._tmp.cleanup()
            self._release_own()
            raise

    def session(self, selector: Selector) -> Session:
        """A fresh session on these files, as the scenario starts it."""
        scenario = self.scenario
        session = Session(
            self.files.memory_base,
            scenario.project_root,
            cwd=self.files.cwd,
            selector=selector,
            agents={a.type: (None if a.scope == "none" else a.scope)
                    for a in scenario.agents.values()},
            now_ms=scenario.now_ms,
            auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)),
            prefetch_enabled=bool(scenario.flags.get("prefetch", True)),
            recall_mode=scenario.mode == "recall",
            compat=self.config.compat,
            startup_context=self.contexts[scenario.mode].text,
            scenario_id=scenario.id,
            shared_scans=self._scans,
        )
        return session

    def close(self) -> None:
        try:
            remove_written(self.files)
            self._tmp.cleanup()  # what is left: the emptied tree, and anything else written
        finally:
            self._release_own()

    def _release_own(self) -> None:
        if self._own is not None:
            self._own.close()
            self._own = None

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


async def play_unit(world: World, unit: Unit, selector: Selector, judges: Sequence[Judge],
                    on_turn: Callable[[], None] = lambda: None,
                    stop: threading.Event | None = None,
                    answers: AnswerStage | None = None) -> list[TurnResult]:
    """Play a unit's turns in order on `world` and return their rows.

    Under `own` history the unit's selector lives its own session: a unit that starts
    at a compaction starts from a fresh session, which is the state compaction leaves.
    Under `gold` history every turn is a fork of the reference walk's state for that
    turn, so every selector starts every turn alike; a stateful selector keeps its
    conversation across the unit's turns and forgets it at a compaction. Model calls
    are awaited (many units share one event loop); local selectors and judges run
    inline.
    """
    scenario, repeat, walk = unit.scenario, unit.repeat, world.walk
    rows: list[TurnResult] = []
    own: Session | None = None
    context = InTranscript()
    forked = unit.start  # turns from here on have not taken their start yet
    try:
        for index in unit.turn_indices:
            turn = scenario.turns[index]
            _check_stop(stop, scenario, turn)
            later = index > unit.start
            if walk is not None:
                start = walk.start_of(index)
                if later and turn.compact_before:
                    reset_selector(selector)
                session, in_context = start.session.fork(selector), start.in_context
                walk.taken(index)
                forked = index + 1
            else:
                if own is None:  # at the start, or at a compaction: nothing carried over
                    own = world.session(selector)
                elif turn.compact_before:
                    own.compact()
                    context.clear()
                session, in_context = own, context.keys()
            record = await aplay_turn(session, scenario, turn, repeat)
            if walk is None:
                context.add(record, scenario, index)
            request = judge_request(turn, record)
            judgements = {}
            for judge in judges:  # no judge call is sent once a stop is asked for
                _check_stop(stop, scenario, turn)
                judgements[judge.name] = await ascore(judge, request)
            if _refused_by_stop(record, judgements.values()):
                raise StopRequested(f"{scenario.id}: stopped during turn {turn.id}")
            earlier = InTranscript.earlier_relevant(scenario, index)
            _check_stop(stop, scenario, turn)
            answered = await answer_turn(answers, world, index, turn, record)
            if answered is not None and STOPPED_CALL in f"{answered.error} {answered.judge_error}":
                raise StopRequested(f"{scenario.id}: stopped during turn {turn.id}")
            rows.append(turn_result(unit, index, turn, record, judgements,
                                    phase1_reachability(turn, world.indexed),
                                    root=str(world.files.root), history=world.config.history,
                                    in_context=in_context, earlier_relevant=earlier,
                                    answered=answered))
            on_turn()
    finally:
        if walk is not None:  # a unit that failed frees the starts it never took
            walk.taken(*range(forked, unit.turn_indices.stop))
    return rows


async def aplay_turn(session: Session, scenario: Scenario, turn: Turn,
                     repeat: int = 0) -> TurnRecord:
    """`play_turn` (compaction left to the caller) for a session in an event loop:
    a model selector's calls are awaited, a local selector runs inline."""
    if runs_inline(session.selector):
        return play_turn(session, scenario, turn, repeat, compact=False)
    return await session.aturn(
        turn.query,
        tool_events=[{"tool": e.tool, "ok": e.ok, "path": e.path} for e in turn.tool_events],
        used_tools=turn.used_tools,
        turn_id=turn.id,
        repeat=repeat,
    )


def _refused_by_stop(record: TurnRecord, judgements: Iterable[Judgement]) -> bool:
    """Did the model door refuse one of the turn's calls because the run is stopping?
    Such a turn is not an answer: it is dropped and played again on resume."""
    errors = [*record.errors, *(j.error for j in judgements if j.error)]
    return any(STOPPED_CALL in e for e in errors)


def _check_stop(stop: threading.Event | None, scenario: Scenario, turn: Turn) -> None:
    if stop is not None and stop.is_set():
        raise StopRequested(f"{scenario.id}: stopped before turn {turn.id}")


class InTranscript:
    """Which memories in the transcript (surfaced since the last compaction) count as
    covered at later turns.

    Only a memory that was no false positive when it surfaced (relevant, acceptable, or
    relevant earlier in the conversation) covers a later turn that needs it: a selector
    spraying picks must not have later turns scored as needing nothing thanks to a
    pick it was wrong to make. An unearned memory stays needed at the later turn, and
    since the session no longer offers it, it counts as missed there.
    """

    def __init__(self) -> None:
        self._keys: dict[str, None] = {}

    def add(self, record: TurnRecord, scenario: Scenario, index: int) -> None:
        """Add what surfaced at turn `index` of `scenario` and was not a false positive."""
        turn = scenario.turns[index]
        earned = {*turn.labels.relevant, *turn.labels.acceptable,
                  *InTranscript.earlier_relevant(scenario, index)}
        self._keys.update(dict.fromkeys(s.key for s in record.surfaced if s.key in earned))

    def clear(self) -> None:
        self._keys.clear()

    def keys(self) -> tuple[str, ...]:
        return tuple(self._keys)

    @staticmethod
    def earlier_relevant(scenario: Scenario, index: int) -> tuple[str, ...]:
        """Keys relevant at an earlier turn of a conversation, which a pick may repeat
        without counting as a false positive; none for independent questions, whose
        precision is hits / picks as the literature computes it."""
        if scenario.independent:
            return ()
        return tuple(sorted({k for t in scenario.turns[:index] for k in t.labels.relevant}))
