"""The main job: run scenarios × selectors × judges and write a run folder.

The work is cut into *units* (`memeval.run.play.Unit`) that can run in any order.
Under gold history every turn starts from a state known in advance (the reference
walk's), so a selector without memory gets one unit per turn; a selector that
remembers, and every selector under own history, gets one unit per stretch of
turns between compactions (a compaction leaves nothing to carry over), whose turns
run in order as in a conversation. Units run concurrently on one event loop
(`memeval.run.runner`); each finished unit's rows are appended to `results.jsonl`
together, so an interrupted run resumes from the turns already on disk and never
evaluates a written turn twice.
"""

from __future__ import annotations

import itertools
import os
import platform
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tqdm import tqdm

from memeval import __version__
from memeval.answers import AnswerStage, answer_stage
from memeval.errors import MemevalError
from memeval.judges import resolve_judge
from memeval.judges.base import Judge
from memeval.log import (
    CONFIG_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    ResultsWriter,
    RowSink,
    RunFolderError,
    TurnKey,
    TurnResult,
    iter_results,
    read_config,
    read_summary,
    refuse_links,
    write_json,
)
from memeval.provenance import MADE_KEY, made_record, read_made
from memeval.run.config import RunConfig
from memeval.run.interrupt import RunInterrupted, stop_on_signals
from memeval.run.plan import PLAN_KEY, Plan, Shard, dropped_since, edited_since, planned_turns
from memeval.run.play import Unit, carries_state, run_coroutine
from memeval.run.runner import run_units
from memeval.scenarios import Scenario, load_many
from memeval.scenarios.subset import select_turns
from memeval.scoring.summary import SummaryPass
from memeval.selectors import resolve_selector
from memeval.selectors.base import Selector
from memeval.session import Compat

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

SYNC_EVERY_S = 0.5  # rows wait at most this long before an fsync; their answers are cached


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
    units_retried: int = 0


def plan_units(scenarios: Iterable[Scenario], config: RunConfig,
               shard: Shard | None = None, *,
               remembers: Callable[[str], bool] = lambda spec: False,
               split: bool = True) -> list[Unit]:
    """Every unit of the run, or the share `shard` owns, world by world in turn order.

    Args:
        scenarios, config: what to run.
        shard: keep only this share of the units.
        remembers: whether a selector spec keeps state across turns (its gold-history
            turns then run in order, a unit per stretch between compactions).
        split: cut sessions into units at all; False gives one unit per session.
            Sessions are cut at compactions only where compaction forgets everything
            (`compaction=clear`).
    """
    # A compaction that restores files carries state over, so a session is cut there
    # only when compaction forgets everything.
    cut_at_compactions = split and Compat.from_spec(config.compat).compaction == "clear"
    units = []
    for scenario in scenarios:
        for repeat in range(config.repeats):
            pieces = [Unit(scenario, spec, repeat, start, stop)
                      for spec in config.selectors
                      for start, stop in _pieces(scenario, split and config.history == "gold"
                                                 and not remembers(spec), cut_at_compactions)]
            units += sorted(pieces, key=lambda u: u.start)  # stable: selectors keep order
    return units if shard is None else [u for u in units if shard.owns(u.key)]


def _pieces(scenario: Scenario, per_turn: bool, split: bool) -> list[tuple[int, int]]:
    count = len(scenario.turns)
    if per_turn:
        return [(i, i + 1) for i in range(count)]
    cuts = [0, *(i for i, t in enumerate(scenario.turns) if split and i and t.compact_before),
            count]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def run_config_record(config: RunConfig, selectors: Sequence[Selector],
                      judges: Sequence[Judge], *, source: str = "memeval run") -> dict[str, Any]:
    """`config.json`: the config plus what is needed to reproduce it exactly, and how
    the run was made (`made`: what a pairing of two runs must agree on)."""
    def describe(component: Any) -> dict[str, Any]:
        info = {"name": component.name}
        for attr in ("model", "prompt_name", "prompt_hash", "seed", "order",
                     "grade_candidates"):
            value = getattr(component, attr, None)
            if value is not None:
                info[attr] = value
        endpoint = getattr(component, "endpoint_config", None)
        if callable(endpoint):  # where a model component's calls went (never the key)
            info.update(endpoint())
        server = getattr(component, "endpoint", None)
        if hasattr(server, "url") and hasattr(server, "public"):
            # as resolved: `base_url=`, else ANTHROPIC_BASE_URL / OPENAI_BASE_URL
            info.update(url=server.url, public=server.public)
        return info

    described_selectors = [describe(s) for s in selectors]
    described_judges = [describe(j) for j in judges]
    return {
        "config": config.to_dict(),
        "fingerprint": config.fingerprint(),
        "selectors": described_selectors,
        "judges": described_judges,
        MADE_KEY: made_record(history=config.history, compat=config.compat,
                              shuffle_manifest=config.shuffle_manifest,
                              judges=described_judges, selectors=described_selectors,
                              source=source),
        "versions": {"memeval": __version__, "python": sys.version.split()[0],
                     "platform": platform.platform()},
    }


class Page(Protocol):
    """A view of a run folder made from its rows and its summary (the report's
    `index.html`, `memeval.report.RunPage`). The caller picks it, so the engine never
    imports the report; its views are gathered while the rows are written, so the
    page costs no second read of `results.jsonl`."""

    def gather(self) -> RowSink:
        """An empty collector of what the page needs of each row."""
        ...

    def write(self, run_dir: Path, gathered: Any, *, flag_incomplete: bool) -> Path:
        """Write the page from `gathered` (every row of the folder) and the summary."""
        ...


class RowDigest:
    """What `summary.json` (and the page, when there is one) need of a run's rows,
    gathered in one pass that keeps no row. A run gathers its rows as they are
    written, so finishing it does not read `results.jsonl` back; `of_folder` reads a
    folder's rows instead (a resumed run's earlier rows, a rebuild, a merge)."""

    def __init__(self, page: Page | None = None) -> None:
        self.inputs = SummaryPass()
        self.page = page
        self.views = None if page is None else page.gather()

    def add(self, result: TurnResult) -> None:
        self.inputs.add(result)
        if self.views is not None:
            self.views.add(result)

    @classmethod
    def of_folder(cls, run_dir: Path, page: Page | None = None) -> RowDigest:
        """Every row of a run folder, in file order."""
        digest = cls(page)
        for result in iter_results(run_dir):
            digest.add(result)
        return digest


class Summarizer(Protocol):
    """Builds `summary.json` and the report of a run folder (see `finish_run`)."""

    def __call__(self, run_dir: Path, extra: Mapping[str, Any], *,
                 digest: RowDigest | None = None) -> dict[str, Any]: ...


def evaluate(config: RunConfig, run_dir: Path, *, progress: bool = True,
             page: Page | None = None, finish: Summarizer | None = None,
             shard: Shard | None = None, retry_errors: bool = False,
             say: Callable[[str], None] | None = None) -> RunOutcome:
    """Run (or resume) the evaluation described by `config` into `run_dir`.

    Args:
        config: what to run.
        run_dir: the run folder; rows already in it for the same config are kept.
        progress: show a progress bar over turns.
        page: the page to write beside the summary (`memeval.report.RunPage()`);
            None writes none.
        finish: builds `summary.json` (and the page) from the folder, extra run
            facts and the rows' digest (defaults to `finish_run`).
        shard: run only this share of the units (see `memeval.run.shards`).
        retry_errors: run again the finished sessions that had a selector or judge
            error (the rest of the folder is kept).
        say: told, before any call, how many calls each model endpoint gets at once
            and why (the CLI prints it).
    """
    loaded = load_many(config.scenarios)
    scenario_errors = tuple(str(error) for error in loaded.errors)
    if not loaded.scenarios:
        detail = "\n".join(scenario_errors) or "no scenario files matched"
        raise MemevalError(f"nothing to evaluate: {detail}\nPass --scenarios with YAML files "
                           "in the format of fixtures/README.md.")
    scenarios = select_turns(loaded.scenarios, categories=config.categories, tags=config.tags,
                             exclude_tags=config.exclude_tags,
                             scenario_ids=config.scenario_ids, limit=config.limit)
    if not scenarios:
        raise MemevalError("no turn matches the subset asked for (--category, --tag, "
                           "--exclude-tag, --scenario); `memeval inspect` lists a "
                           "scenario's turns with their categories")
    selectors = [resolve_selector(spec) for spec in config.selectors]  # fail fast on typos
    judges = [resolve_judge(spec) for spec in config.judges]
    answers = None if config.answerer is None else \
        answer_stage(config.answerer, config.answer_judge)
    if answers is None and config.answer_judge is not None:
        raise MemevalError("--answer-judge grades answers, and there are none: add "
                           "--answerer SPEC (extractive, claude:<model>, openai:<model>)")
    staged = [] if answers is None else answers.components
    check_model_access(config, [*selectors, *judges, *staged])
    notes: list[str] = []
    models = _open_models(config, [*selectors, *judges, *staged], notes.append, run_dir)
    try:
        return _run(config, run_dir, scenarios, scenario_errors, selectors, judges, models,
                    progress=progress, page=page, finish=finish, shard=shard,
                    retry_errors=retry_errors, notes=notes, say=say or (lambda _: None),
                    answers=answers)
    finally:
        if models is not None:
            models.close()


def _run(config: RunConfig, run_dir: Path, scenarios: Sequence[Scenario],
         scenario_errors: tuple[str, ...], selectors: Sequence[Selector],
         judges: Sequence[Judge], models: ModelAccess | None, *, progress: bool,
         page: Page | None, finish: Summarizer | None, shard: Shard | None, retry_errors: bool,
         notes: Sequence[str], say: Callable[[str], None],
         answers: AnswerStage | None = None) -> RunOutcome:
    run_dir.mkdir(parents=True, exist_ok=True)
    refuse_links(run_dir)  # before config.json is read through one
    previous = _check_resumable(run_dir, config, shard)

    remembers = {spec: carries_state(s) for spec, s in zip(config.selectors, selectors,
                                                              strict=True)}
    everything = plan_units(scenarios, config, remembers=remembers.__getitem__)
    units = [u for u in everything if shard is None or shard.owns(u.key)]
    plan = Plan.of(scenarios, everything)
    old_plan = None if previous is None else Plan.from_config(previous)
    edited, dropped = edited_since(old_plan, plan), dropped_since(old_plan, plan)
    mine = planned_turns(plan.share(shard))

    def reusable(turn: TurnKey) -> bool:  # planned now, and its scenario unchanged
        return turn in mine and turn[0] not in edited

    with ResultsWriter(run_dir, retry_errors=retry_errors, sync_every=SYNC_EVERY_S,
                       reusable=reusable) as writer:
        for note in notes:  # once the folder is the run's: a refused run tells one line
            say(note)
        for scenario_id in edited:
            say(f"{plan.files[scenario_id]}: scenario {scenario_id} changed since its rows "
                "were written; its turns run again")
        if dropped and old_plan is not None:
            say("no longer in the run, their rows dropped: "
                + ", ".join(f"{old_plan.files[s]} (scenario {s})" for s in dropped))
        done = writer.completed_turns()
        todo = [u for u in units if not u.turn_keys <= done]
        write_json(run_dir / CONFIG_FILE, {
            **run_config_record(config, selectors, judges),
            **({} if answers is None else answers.config()),
            "scenario_errors": list(scenario_errors),
            "shard": None if shard is None else [shard.index, shard.count],
            PLAN_KEY: plan.to_record(shard),
        })
        bar = tqdm(total=sum(len(u.turn_indices) for u in todo), desc="memeval", unit="turn",
                   disable=not progress, dynamic_ncols=True)
        failures = UnitFailures()
        # The rows kept from an earlier run first, then each unit's as it is written:
        # the file's order, so the summary and report are those a rebuild makes.
        digest = RowDigest.of_folder(run_dir, page)

        def write(_unit: Unit, rows: list[TurnResult]) -> None:
            for result in writer.append_unit(rows):
                digest.add(result)

        with stop_on_signals() as stop:
            if models is not None:
                models.stop_calls_on(stop)
            run_coroutine(run_units(todo, config, judges, on_rows=write,
                                    on_error=failures.add, on_turn=lambda: bar.update(1),
                                    stop=stop, every=(SYNC_EVERY_S, writer.flush),
                                    in_flight=units_in_flight(config, len(todo), models),
                                    models=models, answers=answers), models=models)
        bar.close()
        writer.flush()
        unit_errors = failures.messages()
        if stop.is_set():
            (finish or finish_run)(run_dir, {"unit_errors": unit_errors}, digest=digest)
            left = len(todo) - writer.units_written - failures.count
            raise RunInterrupted(writer.units_written, left)
        extra: dict[str, Any] = {"unit_errors": unit_errors}
        if models is not None:
            extra["llm"] = models.summary()
        summary = (finish or finish_run)(run_dir, extra, digest=digest)
        if not unit_errors:  # a failed unit has no rows: rerunning retries just it
            writer.mark_complete()
    return RunOutcome(run_dir=run_dir, rows=writer.row_count, units_run=len(todo),
                      units_resumed=len(units) - len(todo),
                      scenario_errors=scenario_errors, summary=summary,
                      unit_errors=tuple(unit_errors), units_retried=writer.retried)


def units_in_flight(config: RunConfig, units: int, models: ModelAccess | None) -> int:
    """Units started at once: `--concurrency`; with Message Batches, every unit (up to
    a batch's size), so one batch fills with the turns of all of them rather than
    `--concurrency` calls at a time."""
    if models is not None and models.use_batches:
        return max(config.concurrency, min(units, models.batch_max))
    return config.concurrency


class UnitFailures:
    """Units that raised, told once per session and cause: a world that failed to
    build fails each of its turn units alike, and one line says so with the count."""

    def __init__(self) -> None:
        self._turns: dict[tuple[str, str], int] = {}
        self.count = 0

    def add(self, unit: Unit, exc: Exception) -> None:
        where = f"{unit.scenario.path} [{unit.selector_spec}, repeat {unit.repeat}]"
        cause = f"{type(exc).__name__}: {exc}"
        self._turns[(where, cause)] = self._turns.get((where, cause), 0) + len(unit.turn_indices)
        self.count += 1

    def messages(self) -> list[str]:
        return [f"{where}: {turns} turn(s) failed with {cause}; they have no rows. Fix the "
                "cause and rerun the same command to evaluate just them."
                for (where, cause), turns in self._turns.items()]


def _check_resumable(run_dir: Path, config: RunConfig,
                     shard: Shard | None) -> dict[str, Any] | None:
    """The folder's `config.json` when its rows may be resumed by `config` (None for a
    new folder); refuses a folder of another configuration."""
    previous = run_dir / CONFIG_FILE
    if not previous.exists() or not (run_dir / RESULTS_FILE).exists():
        return None
    record: dict[str, Any] = {}
    try:
        record = read_config(run_dir)
        old = (record.get("fingerprint"), record.get("shard"))
    except RunFolderError:
        old = None
    if old != (config.fingerprint(), None if shard is None else [shard.index, shard.count]):
        raise MemevalError(
            f"{run_dir} holds results of a different configuration; resuming would mix "
            "them. Pass a new --out, or delete the folder to start over."
        )
    return record


def finish_run(run_dir: Path, extra: Mapping[str, Any] | None = None, *,
               flag_incomplete: bool = False, digest: RowDigest | None = None,
               page: Page | None = None) -> dict[str, Any]:
    """Write `summary.json` from the rows, then the digest's page (if any) from both.

    Args:
        run_dir: the run folder.
        extra: run facts that are not in the rows (the model door's budget state).
        flag_incomplete: warn on the page when the folder is marked unfinished.
        digest: every row of the folder, gathered as they were written, with the page
            it gathered for; by default the rows are read from the folder for `page`.
        page: the page to write when there is no digest.
    """
    if digest is None:
        digest = RowDigest.of_folder(run_dir, page)
    summary = digest.inputs.summary(run_dir=run_dir)
    made = read_made(run_dir / CONFIG_FILE)
    if made:  # a CI job may keep summary.json alone: it says how it was made
        summary[MADE_KEY] = made
    summary.update(extra or {})
    write_json(run_dir / SUMMARY_FILE, summary)
    if digest.page is not None:
        digest.page.write(run_dir, digest.views, flag_incomplete=flag_incomplete)
    return summary


RUN_FACTS = ("llm", "unit_errors")  # summary keys that come from the run, not the rows


def rebuild_run(run_dir: Path, page: Page | None = None) -> dict[str, Any]:
    """`finish_run` again on a folder, keeping the run facts of its last summary."""
    if not (run_dir / RESULTS_FILE).exists():
        raise MemevalError(f"{run_dir}: no {RESULTS_FILE}; pass a folder written by "
                           "`memeval run --out DIR`")
    try:
        old = read_summary(run_dir)
    except RunFolderError:  # a missing or broken summary has no run facts to keep
        old = {}
    extra = {k: old[k] for k in RUN_FACTS if k in old}
    return finish_run(run_dir, extra, flag_incomplete=True, page=page)


def model_components(components: Iterable[Any]) -> list[Any]:
    """The selectors and judges that call a model: those that name an endpoint."""
    return [c for c in components
            if callable(getattr(getattr(c, "endpoint", None), "has_access", None))]


def uses_model(components: Iterable[Any]) -> bool:
    """Does any selector or judge of the run call a model?"""
    return bool(model_components(components))


def check_model_access(config: RunConfig, components: Iterable[Any]) -> None:
    """Stop before any call when a model is asked for but nothing could answer it.

    Without a key every call would fail, and the run would be all errors; a cache
    must not stand in for the endpoint either (it could hold another server's
    answers). A replay cassette, or a server that needs no key (a local one), will do.
    """
    calling = model_components(components)
    if not calling:  # an offline run never loads the SDK
        return
    from memeval.llm.config import REPLAY_ENV

    if config.llm.replay or os.environ.get(REPLAY_ENV):
        return
    missing: dict[str, list[str]] = {}
    for component in calling:
        if not component.endpoint.has_access():
            missing.setdefault(component.endpoint.key_env, []).append(component.name)
    if not missing:
        return
    named = "; ".join(f"{', '.join(map(repr, specs))} needs ${env}, which is not set"
                      for env, specs in missing.items())
    raise MemevalError(
        f"{named}. Set it (to any value for a remote server that needs no key), or run "
        "offline: --replay-cassette FILE answers from a recorded run, a server on this "
        "machine needs no key (base_url=http://localhost:…), and the offline selectors "
        "(bm25, recency, oracle, ...) with the gold judge need no model.")


def _open_models(config: RunConfig, components: Sequence[Any],
                 say: Callable[[str], None], run_dir: Path) -> ModelAccess | None:
    """The run's model access, handed to every component that calls a model (the
    selectors get it as each is built); None for an offline run, which never loads
    the SDKs. Each endpoint's concurrency is the spec's `concurrency=`, else what the
    server states (`/props`), else the run's; `say` is told the choice. Refuses a
    `--max-cost` it could not enforce, before any call. The budget counts what earlier
    attempts of `run_dir` spent (its `spend.jsonl`)."""
    calling = model_components(components)
    if not calling:
        return None
    from memeval.llm.access import ModelAccess, connect
    from memeval.llm.batch_journal import BATCH_FILE
    from memeval.llm.config import CONCURRENCY_ENV, door_config
    from memeval.llm.spend import SPEND_FILE

    options: dict[str, Any] = {k: v for k, v in asdict(config.llm).items() if v is not None}
    if not os.environ.get(CONCURRENCY_ENV):
        # Each session has at most one call in flight, so the door should admit as many
        # calls as there are sessions; a smaller cap would quietly serialize the run.
        options["max_concurrency"] = max(1, config.concurrency)
    models = ModelAccess(door_config(**options, spend_log=run_dir / SPEND_FILE,
                                     batch_log=run_dir / BATCH_FILE))
    for component in calling:
        connect(component, models)
    if models.budget.max_cost is not None:
        unpriced = models.unpriced(m for c in calling
                                   if isinstance(m := getattr(c, "model", None), str))
        if unpriced:
            raise MemevalError(
                f"--max-cost cannot be enforced: no price for {', '.join(unpriced)} in "
                f"{models.prices.source}; add it with --prices FILE or the spec's "
                "price_in=…&price_out=… (USD per million tokens), or drop --max-cost")
    _choose_concurrency(models, calling, say)
    return models


def _choose_concurrency(models: ModelAccess, calling: Sequence[Any],
                        say: Callable[[str], None]) -> None:
    from memeval.llm.capacity import server_props

    endpoints = list(dict.fromkeys(c.endpoint for c in calling))
    for endpoint in endpoints:
        props = server_props(endpoint)
        if props.total_slots is not None and not models.capacity_set(endpoint):
            models.set_capacity(endpoint, props.total_slots,
                                f"the server's /props says total_slots={props.total_slots}")
        say(f"model calls to {endpoint.label()}: at most {models.capacity(endpoint)} at a "
            f"time ({models.capacity_reason(endpoint)})")
        tools = [c.name for c in calling if c.endpoint == endpoint
                 and getattr(c, "structured", None) == "tool"]
        if props.supports_tool_calls is False and tools:
            say(f"warning: {endpoint.label()} says it cannot call tools "
                f"(/props supports_tool_calls: false), so {', '.join(tools)} with "
                "structured=tool will get prose; use structured=prompt or json_schema")


def timestamped_run_dir(reports_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return reports_dir / stamp


__all__ = [
    "Page", "RowDigest", "RunOutcome", "evaluate", "finish_run", "plan_units", "run_config_record",
    "timestamped_run_dir", "uses_model",
]
