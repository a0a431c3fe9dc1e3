"""memeval's pytest plugin (registered through the `pytest11` entry point).

Installing memeval is enough: any project's tests can use the fixtures below, and
the suites in `suites/` are ordinary test files built on them.

- Options (each also an ini key in `pyproject.toml` / `pytest.ini`, the option
  wins): `--memeval-selector` (repeatable; default `oracle`, so a plain `pytest`
  stays green and fast), `--memeval-judge` (the model judge of the judged suite,
  default `claude`), `--memeval-scenarios`, `--memeval-report DIR`,
  `--memeval-baseline SUMMARY`, `--memeval-min-precision`, `--memeval-min-recall`,
  `--memeval-margin`, `--memeval-replay` / `--memeval-record CASSETTE`,
  `--memeval-profile ci|deep`, `--memeval-compat faithful|hardened`.
- Fixtures: `memeval_turn` / `memeval_judged_turn` (parametrized: one item per
  scenario turn × selector), `memeval_session`, `memdir_factory`, `selector`,
  `judge`, `memeval_store`.
- Markers: `memeval_suite` (added to every item built on the turn fixtures) and
  `llm(cassette=PATH)` (needs a model: a replayed cassette, a key, or it is skipped
  with the reason).
- At the end of the session: the run folder (results.jsonl, summary.json,
  config.json, index.html when the report package is present, gate.json) and the
  gate, which fails the session when a threshold is missed or a metric is not
  non-inferior to the baseline (see `memeval.gate`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from memeval.errors import MemevalError
from memeval.labels import GOLD

# Only pytest and the standard library at import time: this module loads in every
# pytest run of every project that installs memeval; the engine loads on first use.
if TYPE_CHECKING:
    from memeval.gate import GateResult
    from memeval.scenarios import MaterializedScenario, Scenario, Turn
    from memeval.session import Session, TurnRecord
    from memeval.suite import ItemResult, SuiteStore, TurnCase

TURN_FIXTURE = "memeval_turn"
JUDGED_FIXTURE = "memeval_judged_turn"
SUITE_FIXTURES = (TURN_FIXTURE, JUDGED_FIXTURE)
DEFAULT_SELECTOR = "oracle"  # reads the gold labels: the suite's plumbing, fast and green
DEFAULT_JUDGE = "claude"
DEFAULT_REPORT = "reports/pytest-latest"
WORKER_OUTPUT_KEY = "memeval_units"
PROFILE_ENV = "MEMEVAL_PROFILE"  # read by the property suites' hypothesis settings
KEY_ENV = "ANTHROPIC_API_KEY"
GATE_STAT = "memeval gate failed"  # shown in pytest's final count line

OptionKind = Literal["list", "str", "path", "float", "choice"]


@dataclass(frozen=True)
class _Option:
    name: str  # `selector` → --memeval-selector and ini `memeval_selector`
    kind: OptionKind
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return f"--memeval-{self.name}"

    @property
    def ini(self) -> str:
        return "memeval_" + self.name.replace("-", "_")

    @property
    def dest(self) -> str:
        return self.ini


OPTIONS: tuple[_Option, ...] = (
    _Option("selector", "list", "selector spec to evaluate; repeat for several (default "
            "oracle). Example: --memeval-selector bm25 --memeval-selector recency"),
    _Option("judge", "str", "model judge of the LLM-judged suite (default claude). "
            "Example: --memeval-judge 'claude:claude-sonnet-4-6?order=both'", DEFAULT_JUDGE),
    _Option("scenarios", "list", "scenario files, folders or globs (default: the bundled "
            "fixtures). Example: --memeval-scenarios 'my/scenarios/*.yaml'"),
    _Option("report", "path", f"run folder written at the end (default {DEFAULT_REPORT}). "
            "Example: --memeval-report reports/pr-42", DEFAULT_REPORT),
    _Option("baseline", "path", "summary.json of a reference run; fails the session when a "
            "metric is not non-inferior to it. Example: --memeval-baseline main/summary.json"),
    _Option("min-precision", "float", "fail the session when a selector's mean precision "
            "is below this. Example: --memeval-min-precision 0.6"),
    _Option("min-recall", "float", "fail the session when a selector's mean recall is "
            "below this. Example: --memeval-min-recall 0.5"),
    _Option("margin", "float", "non-inferiority margin: the lower bound of the paired 95% "
            "CI of candidate - baseline may not go below -margin (default 0.03)", 0.03),
    _Option("replay", "path", "answer every model call from this cassette (no key, no "
            "network). Example: --memeval-replay suites/cassettes/judged.jsonl"),
    _Option("record", "path", "record every model call into this cassette (needs "
            "ANTHROPIC_API_KEY). Example: --memeval-record my-tape.jsonl"),
    _Option("profile", "choice", "hypothesis profile of the property suites: ci (default, "
            "deterministic) or deep. Example: --memeval-profile deep", None, ("ci", "deep")),
    _Option("compat", "choice", "faithful (Claude Code's quirks, default) or hardened "
            "(every invariant holds). Example: --memeval-compat hardened", "faithful",
            ("faithful", "hardened")),
)
_BY_NAME = {o.name: o for o in OPTIONS}


@dataclass(frozen=True)
class Settings:
    """The plugin's options after the command line, the ini file and defaults."""

    selectors: tuple[str, ...]
    judge: str
    scenarios: tuple[str, ...]
    report: Path
    baseline: Path | None
    min_precision: float | None
    min_recall: float | None
    margin: float
    replay: Path | None
    record: Path | None
    profile: str | None
    compat: str


def _raw(config: pytest.Config, option: _Option) -> tuple[Any, Path]:
    """The option's value and the folder relative paths in it are relative to."""
    cli = config.getoption(option.dest, default=None)
    if cli not in (None, []):
        return cli, config.invocation_params.dir
    ini = config.getini(option.ini)
    if ini not in (None, "", []):
        return ini, config.inipath.parent if config.inipath else config.rootpath
    return option.default, config.rootpath


def _anchored(value: str | Path, base: Path) -> str:
    text = os.path.expanduser(str(value))
    return text if os.path.isabs(text) else str(base / text)


def read_settings(config: pytest.Config) -> Settings:
    """Settings from pytest's config; a bad value is a UsageError naming the option."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        raw, base = _raw(config, option)
        key = option.name.replace("-", "_")
        if raw is None:
            values[key] = None
        elif option.kind == "list":
            values[key] = tuple(str(v) for v in raw)
        elif option.kind == "path":
            values[key] = Path(_anchored(raw, base))
        elif option.kind == "float":
            try:
                values[key] = float(raw)
            except ValueError:
                raise pytest.UsageError(f"{option.flag} / ini {option.ini}: {raw!r} is not a "
                                        "number") from None
        elif option.kind == "choice":
            if raw not in option.choices:
                raise pytest.UsageError(f"{option.flag} / ini {option.ini}: {raw!r}; use one "
                                        f"of {', '.join(option.choices)}")
            values[key] = raw
        else:
            values[key] = str(raw)
        if option.name == "scenarios" and values[key] is not None:
            values[key] = tuple(_anchored(v, base) for v in values[key])
    for name in ("min_precision", "min_recall"):
        if values[name] is not None and not 0 <= values[name] <= 1:
            raise pytest.UsageError(f"--memeval-{name.replace('_', '-')}: {values[name]} is "
                                    "not between 0 and 1")
    if values["margin"] < 0:
        raise pytest.UsageError(f"--memeval-margin: {values['margin']} must be >= 0")
    if values["replay"] is not None and values["record"] is not None:
        raise pytest.UsageError("--memeval-replay and --memeval-record exclude each other; "
                                "pick one")
    for name in ("baseline", "replay"):  # checked now, not after a long run
        if values[name] is not None and not values[name].exists():
            raise pytest.UsageError(f"--memeval-{name} {values[name]}: no such file; pass a "
                                    + ("summary.json or run folder" if name == "baseline"
                                       else "recorded cassette"))
    values["selectors"] = values.pop("selector") or (DEFAULT_SELECTOR,)
    values["scenarios"] = values["scenarios"] or ()  # () means the bundled fixtures
    return Settings(**values)


# -- model sources --------------------------------------------------------------------

@dataclass(frozen=True)
class ModelSource:
    """Where an `llm` item's model answers come from, or why there are none.

    `kind`: `replay`/`record` (the --memeval-* options), `live` (a key in the
    environment), `cassette` (the marker's own committed cassette), `none`.
    """

    kind: Literal["replay", "record", "live", "cassette", "none"]
    cassette: Path | None = None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.kind != "none"


def model_source(settings: Settings, marker_cassette: Path | None) -> ModelSource:
    if settings.replay is not None:
        return ModelSource("replay", settings.replay)
    if settings.record is not None:
        if not os.environ.get(KEY_ENV):
            return ModelSource("none", settings.record,
                               f"--memeval-record needs {KEY_ENV} to call the model")
        return ModelSource("record", settings.record)
    if os.environ.get(KEY_ENV):
        return ModelSource("live")
    if marker_cassette is not None and marker_cassette.is_file():
        return ModelSource("cassette", marker_cassette)
    missing = f" and {marker_cassette} does not exist" if marker_cassette is not None else ""
    return ModelSource("none", None, f"needs a model: no {KEY_ENV}{missing}; pass "
                                     "--memeval-replay CASSETTE or set the key")


def _marker_cassette(item: pytest.Item) -> Path | None:
    marker = item.get_closest_marker("llm")
    if marker is None:
        return None
    value = marker.kwargs.get("cassette", marker.args[0] if marker.args else None)
    if value is None:
        return None
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else item.path.parent / path


@contextlib.contextmanager
def _cassette_client(path: Path) -> Iterator[None]:
    """Answer the model door from `path` while the block runs (the marker's cassette)."""
    from memeval.llm import build_client, set_default_client

    set_default_client(build_client(replay=path, cache=False))
    try:
        yield
    finally:
        set_default_client(None)  # back to "built from the environment on first use"


# -- state ----------------------------------------------------------------------------

@dataclass
class _State:
    settings: Settings
    rootpath: Path
    _store: SuiteStore | None = None
    judged_source: ModelSource | None = None
    judged_name: str | None = None
    configured_llm: bool = False
    specs_checked: bool = False
    spec_error: str | None = None
    summary: dict[str, Any] | None = None
    gate: GateResult | None = None
    gate_error: str | None = None
    run_dir: Path | None = None


    @property
    def store(self) -> SuiteStore:
        if self._store is None:
            from memeval.run_config import RunConfig, bundled_fixtures_dir, default_scenarios
            from memeval.suite import SuiteStore

            settings = self.settings
            config = RunConfig(scenarios=settings.scenarios or default_scenarios(),
                               selectors=settings.selectors, judges=(GOLD,), concurrency=1,
                               compat=settings.compat)  # type: ignore[arg-type]
            self._store = SuiteStore(config, roots=(self.rootpath,
                                                    bundled_fixtures_dir().parent))
        return self._store

    def has_units(self) -> bool:
        return self._store is not None and bool(self._store.all_units())


STATE = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    return config.stash[STATE]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- hooks ----------------------------------------------------------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memeval", "memeval: memory re-injection evaluation")
    for option in OPTIONS:
        # argparse %-formats help texts; the ini listing does not
        kwargs: dict[str, Any] = {"dest": option.dest, "default": None,
                                  "help": option.help.replace("%", "%%")}
        if option.kind == "list":
            kwargs["action"] = "append"
        if option.kind == "choice":
            kwargs["choices"] = option.choices
        group.addoption(option.flag, **kwargs)
        parser.addini(option.ini, option.help, type="linelist" if option.kind == "list"
                      else "string")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "memeval_suite: an item of a memeval evaluation suite "
                            "(one scenario turn under one selector)")
    config.addinivalue_line("markers", "llm(cassette=None): needs a model; replayed from "
                            "--memeval-replay or the marker's cassette when no "
                            f"{KEY_ENV} is set, else skipped with the reason")
    settings = read_settings(config)
    if settings.profile:
        os.environ[PROFILE_ENV] = settings.profile
    state = _State(settings, config.rootpath)
    if settings.replay is not None or settings.record is not None:
        from memeval.llm import configure

        try:
            configure(replay=settings.replay, record=settings.record, cache=False)
        except MemevalError as exc:
            raise pytest.UsageError(str(exc)) from None
        state.configured_llm = True
    config.stash[STATE] = state
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "dist", "no") == "load":
        # One session unit serves many items; keeping them on one worker runs it once.
        config.option.dist = "loadgroup"


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None and state.configured_llm:
        from memeval.llm import set_default_client

        set_default_client(None)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wanted = [name for name in SUITE_FIXTURES if name in metafunc.fixturenames]
    if not wanted:
        return
    state = _state(metafunc.config)
    if not state.specs_checked:
        state.specs_checked = True
        try:
            state.store.validate_specs()
        except MemevalError as exc:
            # Raised here it would be one module's collection error; raised after
            # collection it is pytest's usage error: one line, exit code 4.
            state.spec_error = str(exc)
    cases = [] if state.spec_error else state.store.cases()
    for name in wanted:
        metafunc.parametrize(name, cases, ids=[c.id for c in cases], indirect=True)


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: plan for what will run
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    state = _state(config)
    if state.spec_error:
        raise pytest.UsageError(state.spec_error)
    grouping = config.pluginmanager.hasplugin("xdist")
    judged: list[pytest.Item] = []
    for item in items:
        case = _case_of(item)
        if case is None:
            continue
        item.add_marker(pytest.mark.memeval_suite)
        if grouping:
            item.add_marker(pytest.mark.xdist_group(f"memeval:{case.scenario_id}:"
                                                    f"{case.selector}"))
        if JUDGED_FIXTURE in getattr(item, "fixturenames", ()):
            judged.append(item)
    if judged:
        _plan_judged(state, judged)


def _case_of(item: pytest.Item) -> TurnCase | None:
    params = getattr(getattr(item, "callspec", None), "params", {})
    if not any(name in params for name in SUITE_FIXTURES):
        return None
    from memeval.suite import TurnCase

    for name in SUITE_FIXTURES:
        value = params.get(name)
        if isinstance(value, TurnCase):
            return value
    return None


def _plan_judged(state: _State, items: list[pytest.Item]) -> None:
    """Decide once how the judged suite gets its model, and add its judge to every unit."""
    source = model_source(state.settings, _marker_cassette(items[0]))
    state.judged_source = source
    if not source.available:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=f"LLM-judged suite {source.reason}"))
        return
    from memeval.judges import resolve_judge

    try:
        state.judged_name = resolve_judge(state.settings.judge).name
    except MemevalError as exc:
        raise pytest.UsageError(f"--memeval-judge: {exc}") from None
    if state.judged_name == GOLD:
        raise pytest.UsageError("--memeval-judge gold: the judged suite needs a model judge "
                                "(e.g. claude); gold already scores the selection suite")
    store = state.store
    store.add_judge(state.judged_name)
    if source.kind == "cassette" and source.cassette is not None:
        cassette = source.cassette
        store.prepare = lambda: _cassette_client(cassette)


def judged_name(config: pytest.Config) -> str:
    """The canonical spec of the judged suite's model judge (`claude:claude-sonnet-4-6`)."""
    return _state(config).judged_name or DEFAULT_JUDGE


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("llm") is None or _case_of(item) is not None:
        return  # the judged suite was planned at collection
    source = model_source(_state(item.config).settings, _marker_cassette(item))
    if not source.available:
        pytest.skip(source.reason)


# -- fixtures -------------------------------------------------------------------------

@pytest.fixture(scope="session")
def memeval_store(pytestconfig: pytest.Config) -> SuiteStore:
    """The session's scenarios and cached session units (one per scenario × selector)."""
    return _state(pytestconfig).store


def _turn_result(request: pytest.FixtureRequest) -> ItemResult:
    from memeval.suite import TurnCase

    case = getattr(request, "param", None)
    if not isinstance(case, TurnCase):
        raise pytest.UsageError(f"{request.fixturename} is parametrized by the memeval "
                                "plugin; request it from a test function, not another fixture")
    if case.load_error is not None:
        from memeval.suite import ItemResult

        return ItemResult(case, None, (case.load_error,))  # fails in the test, not setup
    return _state(request.config).store.result(case)


@pytest.fixture
def memeval_turn(request: pytest.FixtureRequest) -> ItemResult:
    """One scenario turn under one selector, scored by the gold labels.

    `result.failure()` says which invariant broke or which error occurred; the
    scores are recorded as the item's user_properties and in the run folder.
    """
    result = _turn_result(request)
    for name, value in result.scores(GOLD).items():
        request.node.user_properties.append((f"memeval_{name}", value))
    return result


@pytest.fixture
def memeval_judged_turn(request: pytest.FixtureRequest) -> ItemResult:
    """One scenario turn scored by the model judge (see `--memeval-judge`)."""
    result = _turn_result(request)
    for name, value in result.scores(judged_name(request.config)).items():
        request.node.user_properties.append((f"memeval_judged_{name}", value))
    return result


@pytest.fixture
def selector(pytestconfig: pytest.Config) -> Any:
    """A fresh selector built from the first --memeval-selector spec (default oracle)."""
    from memeval.selectors import resolve_selector

    return resolve_selector(_state(pytestconfig).settings.selectors[0])


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The --memeval-judge judge; under an `llm(cassette=...)` marker with no key it
    answers from that cassette."""
    from memeval.judges import resolve_judge

    state = _state(request.config)
    built = resolve_judge(state.settings.judge)
    source = model_source(state.settings, _marker_cassette(request.node))
    if source.kind == "cassette" and source.cassette is not None:
        with _cassette_client(source.cassette):
            yield built
    else:
        yield built


@dataclass
class ScenarioSession:
    """A Session running on a materialized scenario; `play` runs one of its turns."""

    scenario: Scenario
    world: MaterializedScenario
    session: Session
    contexts: Mapping[str, Any]

    def turn(self, turn_id: str) -> Turn:
        for turn in self.scenario.turns:
            if turn.id == turn_id:
                return turn
        raise MemevalError(f"scenario {self.scenario.id}: no turn {turn_id!r}; it has "
                           f"{', '.join(t.id for t in self.scenario.turns)}")

    def play(self, turn: Turn | str) -> TurnRecord:
        """Run a turn (by id or Turn); turns are meant to be played in scenario order."""
        from memeval.harness import play_turn

        chosen = self.turn(turn) if isinstance(turn, str) else turn
        return play_turn(self.session, self.scenario, chosen)


@pytest.fixture
def memeval_session(request: pytest.FixtureRequest, pytestconfig: pytest.Config,
                    selector: Any) -> Iterator[ScenarioSession]:
    """A Session on a materialized scenario: the one given by indirect parametrization
    (a scenario id), else the first configured scenario; selector from `selector`."""
    store = _state(pytestconfig).store
    scenarios = store.loaded().scenarios
    if not scenarios:
        pytest.fail("memeval_session: no scenario loaded; check --memeval-scenarios",
                    pytrace=False)
    wanted = getattr(request, "param", None)
    chosen = next((s for s in scenarios if s.id == wanted), None) if wanted else scenarios[0]
    if chosen is None:
        pytest.fail(f"memeval_session: no scenario {wanted!r}; loaded: "
                    f"{', '.join(s.id for s in scenarios)}", pytrace=False)
    from memeval.harness import open_session

    with open_session(chosen, selector, store.config.compat) as opened:
        yield ScenarioSession(chosen, opened.world, opened.session, opened.contexts)


MemdirFactory = Callable[..., Path]


@pytest.fixture
def memdir_factory(tmp_path: Path) -> MemdirFactory:
    """Write a memdir: `memdir_factory({"a.md": text}, ages={"a.md": 3}) -> Path`.

    Args (of the returned function):
        files: relative path -> file text (frontmatter included).
        name: folder name under the test's tmp_path.
        ages: relative path -> age in days before `now` (default 0).
        now: the clock the ages count back from (default: now, UTC).
    """
    def make(files: Mapping[str, str], *, name: str = "memory",
             ages: Mapping[str, float] | None = None, now: datetime | None = None) -> Path:
        root = tmp_path / name
        clock = (now or datetime.now(UTC)).timestamp()
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            stamp = clock - float((ages or {}).get(rel, 0)) * 86_400
            os.utime(path, (stamp, stamp))
        root.mkdir(parents=True, exist_ok=True)
        return root

    return make


# -- the end of the session: merge, write, gate -----------------------------------------

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: take a finished worker's units (each unit kept once)."""
    output = getattr(node, "workeroutput", None) or {}
    units = output.get(WORKER_OUTPUT_KEY)
    if units:
        _state(node.config).store.merge(units)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if _is_worker(config):
        if state._store is not None:
            from memeval.suite import unit_rows_payload

            config.workeroutput[WORKER_OUTPUT_KEY] = unit_rows_payload(  # type: ignore[attr-defined]
                state.store.units_rows())
        return
    if not state.has_units():
        return
    settings = state.settings
    try:
        state.summary = state.store.write_run(settings.report)
        state.run_dir = settings.report
        _gate(state)
    except MemevalError as exc:
        state.gate_error = str(exc)
    if (state.gate_error or (state.gate is not None and not state.gate.passed)) \
            and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _gate(state: _State) -> None:
    from memeval.gate import GATE_FILE, per_turn_table, run_gate
    from memeval.results import write_json

    settings = state.settings
    if (settings.baseline is None and settings.min_precision is None
            and settings.min_recall is None):
        return
    baseline = per_turn_table(settings.baseline) if settings.baseline is not None else None
    state.gate = run_gate(per_turn_table(settings.report), baseline, margin=settings.margin,
                          min_precision=settings.min_precision,
                          min_recall=settings.min_recall)
    write_json(settings.report / GATE_FILE, state.gate.to_dict())


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or _is_worker(config) or (state.summary is None and not state.gate_error):
        return
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", "memeval")
    if state.summary is not None:
        write(state.summary.get("table", ""))
        write(f"run folder: {state.run_dir}")
        if state.store.report_error:
            write(f"warning: {state.store.report_error}", yellow=True)
    if state.gate_error:
        terminalreporter.write_sep("-", "memeval gate: ERROR", red=True)
        write(state.gate_error)
        terminalreporter.stats.setdefault(GATE_STAT, []).append(state.gate_error)
        return
    if state.gate is None:
        return
    passed = state.gate.passed
    terminalreporter.write_sep("-", f"memeval gate: {'PASS' if passed else 'FAIL'}",
                               green=passed, red=not passed)
    write(state.gate.table())
    for check in state.gate.failures:
        write(f"FAIL: {check.message()}", red=True)
    if not passed:
        terminalreporter.stats.setdefault(GATE_STAT, []).extend(state.gate.failures)

