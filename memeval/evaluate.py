"""The main job: run scenarios × selectors × judges and write a run folder.

A *unit* is one session: one scenario, one selector, one repeat. Units are
independent (each gets its own materialized memory base and a fresh selector, so a
stateful selector's conversation never leaks across sessions) and run concurrently;
turns inside a unit run in order, as they would in a conversation. Each finished
unit is appended to `results.jsonl` in one write, so an interrupted run resumes from
the units already on disk and never evaluates a written turn twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from memeval import __version__
from memeval.errors import MemevalError
from memeval.judges import resolve_judge
from memeval.judges.base import Judge, JudgeRequest, MemoryVerdict, ScoredTurn
from memeval.labels import PROJECT_SCOPE, memory_key, split_memory_key
from memeval.memdir.text import utf8_len
from memeval.results import (
    CONFIG_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    ResultsWriter,
    write_json,
)
from memeval.scenarios import MaterializedScenario, Scenario, Turn, load_many, materialize
from memeval.selectors import resolve_selector
from memeval.selectors.base import Selector
from memeval.selectors.shuffle import ShuffledManifestSelector
from memeval.session import Session, SurfacedRecord, TurnRecord
from memeval.startup import StartupContext, StartupEnv, startup_context_for, startup_reachable

DEFAULT_SELECTORS: tuple[str, ...] = ("bm25", "recency", "oracle")
DEFAULT_JUDGES: tuple[str, ...] = ("gold",)
CompatName = Literal["faithful", "hardened"]


def bundled_fixtures_dir() -> Path:
    """The curated fixtures: inside the wheel when installed, else the repository's."""
    packaged = Path(__file__).parent / "_bundled" / "fixtures"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "fixtures"


def default_scenarios() -> tuple[str, ...]:
    return (str(bundled_fixtures_dir() / "scenarios" / "*.yaml"),)


@dataclass(frozen=True)
class LLMOptions:
    """How model calls are made (see `memeval.llm.build_client`); `None` defers to the
    `MEMEVAL_*` environment variables.

    Args:
        cache: SQLite response cache path, or False to disable.
        record: cassette file to record every live exchange into.
        replay: cassette file to answer from, never calling out.
        max_cost: USD budget; calls that would pass it are refused and recorded.
        batches: send calls through the Message Batches API (half price, slower).
        prices: price table overriding the bundled one.
    """

    cache: str | bool | None = None
    record: str | None = None
    replay: str | None = None
    max_cost: float | None = None
    batches: bool | None = None
    prices: str | None = None


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's results; written verbatim to `config.json`.

    Args:
        scenarios: scenario files, folders or globs.
        selectors: selector spec strings (`bm25`, `claude:claude-sonnet-4-6?prompt=x`).
        judges: judge spec strings (`gold`, `claude`).
        repeats: sessions per scenario × selector; repeats expose selector instability.
        shuffle_manifest: reorder each manifest with a per-repeat seed (order bias).
        concurrency: sessions run at once.
        seed: base seed for shuffles and seeded selectors.
        compat: `faithful` reproduces the system's quirks; `hardened` holds every
            invariant.
    """

    scenarios: tuple[str, ...] = field(default_factory=default_scenarios)
    selectors: tuple[str, ...] = DEFAULT_SELECTORS
    judges: tuple[str, ...] = DEFAULT_JUDGES
    repeats: int = 1
    shuffle_manifest: bool = False
    concurrency: int = 4
    seed: int = 0
    compat: CompatName = "faithful"
    llm: LLMOptions = field(default_factory=lambda: LLMOptions())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fingerprint(self) -> str:
        """What must match for a folder's rows to be resumed by this config: not how
        model calls are made (cache, cassette, budget), only what is evaluated."""
        keep = {k: v for k, v in self.to_dict().items() if k not in ("concurrency", "llm")}
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Unit:
    scenario: Scenario
    selector_spec: str
    repeat: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scenario.id, self.selector_spec, self.repeat)


@dataclass(frozen=True)
class RunOutcome:
    """What `evaluate` did: where it wrote, how many rows, and what went wrong."""

    run_dir: Path
    rows: int
    units_run: int
    units_resumed: int
    scenario_errors: tuple[str, ...]
    summary: dict[str, Any]
    unit_errors: tuple[str, ...] = ()


def _gold_by_scope(scenario: Scenario, turn: Turn) -> dict[str, list[str]]:
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


def _verdict_dicts(verdicts: Iterable[MemoryVerdict]) -> list[dict[str, str]]:
    return [{"key": v.key, "verdict": v.verdict, "reason": v.reason} for v in verdicts]


def _safe_score(judge: Judge, request: JudgeRequest) -> ScoredTurn:
    try:
        return judge.score(request)
    except Exception as exc:  # a judge bug must not lose the selector's result
        return ScoredTurn(
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
            auto_memory_enabled=bool(scenario.flags.get("auto_memory", True)),
        )
        contexts[mode] = startup_context_for(env, today=scenario.now.date())
    return contexts


def phase1_reachability(turn: Turn, index_context: StartupContext) -> dict[str, bool]:
    """For each relevant project memory: does its index line survive into the startup
    context? (Agent memories have no index in the startup context.)"""
    return {key: startup_reachable(index_context, key) for key in sorted(turn.labels.relevant)
            if not key.startswith("@")}


def turn_rows(unit: Unit, index: int, turn: Turn, record: TurnRecord,
              judges: Sequence[Judge], startup: Mapping[str, bool] | None = None,
              ) -> list[dict[str, Any]]:
    """The results rows of one turn: one per judge, each carrying the full record."""
    request = judge_request(turn, record)
    record_dict = record.to_dict()
    rows = []
    for judge in judges:
        scored = _safe_score(judge, request)
        errors = list(record.errors) + ([f"judge {judge.name}: {scored.error}"]
                                        if scored.error else [])
        rows.append({
            "scenario": unit.scenario.id,
            "scenario_path": str(unit.scenario.path),
            "turn_id": turn.id,
            "turn_index": index,
            "category": turn.labels.category,
            "why": turn.labels.why,
            "selector": unit.selector_spec,
            "judge": judge.name,
            "repeat": unit.repeat,
            "query": turn.query,
            "relevant": sorted(turn.labels.relevant),
            "acceptable": sorted(turn.labels.acceptable),
            "candidates": list(request.candidates),
            "selected": list(request.selected),
            "discarded": bool(record.discarded) and not record.surfaced,
            "skipped": record.skipped,
            "verdicts": _verdict_dicts(scored.verdicts),
            "candidate_verdicts": None if scored.candidate_verdicts is None
            else _verdict_dicts(scored.candidate_verdicts),
            "surfaced_bytes": sum(utf8_len(s.content) for s in delivered(record)),
            "selector_usage": record.usage.to_dict(),
            "judge_usage": scored.usage.to_dict(),
            "startup_reachable": dict(startup or {}),
            "errors": errors,
            "error": "; ".join(errors) if errors else None,
            "record": record_dict,
        })
    return rows


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


def play_turn(session: Session, scenario: Scenario, turn: Turn, repeat: int = 0) -> TurnRecord:
    """One scenario turn through the session, compaction first when the turn asks."""
    if turn.compact_before:
        session.compact()
    return session.turn(
        turn.query,
        tool_events=[{"tool": e.tool, "ok": e.ok, "path": e.path} for e in turn.tool_events],
        used_tools=turn.used_tools,
        turn_id=turn.id,
        repeat=repeat,
        gold_relevant_by_scope=_gold_by_scope(scenario, turn),
    )


def run_unit(unit: Unit, config: RunConfig, judges: Sequence[Judge],
             on_turn: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """Run one session and return its rows (nothing is written here)."""
    scenario = unit.scenario
    selector = build_selector(unit.selector_spec, config)
    rows: list[dict[str, Any]] = []
    with open_session(scenario, selector, config.compat) as opened:
        for index, turn in enumerate(scenario.turns):
            record = play_turn(opened.session, scenario, turn, unit.repeat)
            reachable = phase1_reachability(turn, opened.contexts["index"])
            rows.extend(turn_rows(unit, index, turn, record, judges, reachable))
            on_turn()
    return rows


def plan_units(scenarios: Iterable[Scenario], config: RunConfig) -> list[Unit]:
    return [Unit(s, spec, r) for s in scenarios for spec in config.selectors
            for r in range(config.repeats)]


def run_config_record(config: RunConfig, selectors: Sequence[Selector],
                      judges: Sequence[Judge]) -> dict[str, Any]:
    """`config.json`: the config plus what is needed to reproduce it exactly."""
    def describe(component: Any) -> dict[str, Any]:
        info = {"name": component.name}
        for attr in ("model", "prompt_name", "prompt_hash", "seed"):
            value = getattr(component, attr, None)
            if value is not None:
                info[attr] = value
        return info

    return {
        "config": config.to_dict(),
        "fingerprint": config.fingerprint(),
        "selectors": [describe(s) for s in selectors],
        "judges": [describe(j) for j in judges],
        "versions": {"memeval": __version__, "python": sys.version.split()[0],
                     "platform": platform.platform()},
    }


Summarizer = Callable[[Path, Mapping[str, Any]], dict[str, Any]]


def evaluate(config: RunConfig, run_dir: Path, *, progress: bool = True,
             summarize: Summarizer | None = None) -> RunOutcome:
    """Run (or resume) the evaluation described by `config` into `run_dir`.

    Args:
        config: what to run.
        run_dir: the run folder; rows already in it for the same config are kept.
        progress: show a progress bar over turns.
        summarize: builds `summary.json` and the report from the folder and extra
            run facts (defaults to `memeval.summary.write_summary_and_report`).
    """
    loaded = load_many(config.scenarios)
    scenario_errors = tuple(str(error) for error in loaded.errors)
    if not loaded.scenarios:
        detail = "\n".join(scenario_errors) or "no scenario files matched"
        raise MemevalError(f"nothing to evaluate: {detail}\nPass --scenarios with YAML files "
                           "in the format of fixtures/README.md.")
    llm_client = _configure_llm(config)
    selectors = [resolve_selector(spec) for spec in config.selectors]  # fail fast on typos
    judges = [resolve_judge(spec) for spec in config.judges]
    run_dir.mkdir(parents=True, exist_ok=True)
    _check_resumable(run_dir, config)

    units = plan_units(loaded.scenarios, config)
    with ResultsWriter(run_dir) as writer:
        done = writer.completed_units()
        todo = [u for u in units if u.key not in done]
        write_json(run_dir / CONFIG_FILE, {
            **run_config_record(config, selectors, judges),
            "scenario_errors": list(scenario_errors),
        })
        total_turns = sum(len(u.scenario.turns) for u in todo)
        bar = tqdm(total=total_turns, desc="memeval", unit="turn", disable=not progress,
                   dynamic_ncols=True)
        lock = threading.Lock()

        def tick() -> None:
            with lock:
                bar.update(1)

        unit_errors: list[str] = []
        with ThreadPoolExecutor(max_workers=max(1, config.concurrency)) as pool:
            futures = {pool.submit(run_unit, u, config, judges, tick): u for u in todo}
            for future in as_completed(futures):
                unit = futures.pop(future)  # a finished future would hold its rows to the end
                try:
                    writer.append_unit(future.result())
                except Exception as exc:  # one broken session must not cost the others
                    unit_errors.append(_unit_failure(unit, exc))
        bar.close()
        extra: dict[str, Any] = {"unit_errors": unit_errors}
        if llm_client is not None:
            extra["llm"] = llm_client.summary()
        summary = (summarize or _default_summarize)(run_dir, extra)
        if not unit_errors:  # a failed unit has no rows: rerunning retries just it
            writer.mark_complete()
    return RunOutcome(run_dir=run_dir, rows=writer.row_count, units_run=len(todo),
                      units_resumed=len(units) - len(todo),
                      scenario_errors=scenario_errors, summary=summary,
                      unit_errors=tuple(unit_errors))


def _unit_failure(unit: Unit, exc: BaseException) -> str:
    where = f"{unit.scenario.path} [{unit.selector_spec}, repeat {unit.repeat}]"
    return (f"{where}: session failed with {type(exc).__name__}: {exc}; its turns have no "
            "rows. Fix the cause and rerun the same command to evaluate just this session.")


def _check_resumable(run_dir: Path, config: RunConfig) -> None:
    previous = run_dir / CONFIG_FILE
    if not previous.exists() or not (run_dir / RESULTS_FILE).exists():
        return
    try:
        old = json.loads(previous.read_text()).get("fingerprint")
    except (OSError, json.JSONDecodeError):
        old = None
    if old != config.fingerprint():
        raise MemevalError(
            f"{run_dir} holds results of a different configuration; resuming would mix "
            "them. Pass a new --out, or delete the folder to start over."
        )


def _default_summarize(run_dir: Path, extra: Mapping[str, Any]) -> dict[str, Any]:
    from memeval.summary import write_summary_and_report

    return write_summary_and_report(run_dir, extra)


def uses_model(config: RunConfig) -> bool:
    """Does any selector or judge of the run call Claude?"""
    return any(spec.split("?")[0].split(":")[0] == "claude"
               for spec in (*config.selectors, *config.judges))


def _configure_llm(config: RunConfig) -> Any:
    """Set up the model door once for the run, before any Claude component is built."""
    if not uses_model(config):
        return None
    from memeval.llm import configure
    from memeval.llm.config import CONCURRENCY_ENV

    options: dict[str, Any] = {k: v for k, v in asdict(config.llm).items() if v is not None}
    if not os.environ.get(CONCURRENCY_ENV):
        # Each session has at most one call in flight, so the door should admit as many
        # calls as there are sessions; a smaller cap would quietly serialize the run.
        options["max_concurrency"] = max(1, config.concurrency)
    return configure(**options)


def timestamped_run_dir(reports_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return reports_dir / stamp


__all__ = [
    "CONFIG_FILE", "DEFAULT_JUDGES", "DEFAULT_SELECTORS", "REPORT_FILE", "RESULTS_FILE",
    "SUMMARY_FILE", "RunConfig", "RunOutcome", "Unit", "evaluate", "run_unit",
]
