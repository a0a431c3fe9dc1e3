"""The plugin's hooks: options, collection, planning the judged suite, and the end
of the session (merge the workers' units, write the run folder, gate)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from memeval.errors import MemevalError
from memeval.labels import GOLD
from memeval.plugin._options import (
    GATE_STAT,
    JUDGED_FIXTURE,
    KEY_ENV,
    OPTIONS,
    PROFILE_ENV,
    SUITE_FIXTURES,
    WORKER_OUTPUT_KEY,
    read_settings,
)
from memeval.plugin._sources import (
    cassette_models,
    marker_cassette,
    model_source,
    option_models,
)
from memeval.plugin._state import STATE, PluginState, is_worker, state_of

if TYPE_CHECKING:
    from memeval.plugin.suite import TurnCase

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
    state = PluginState(settings, config.rootpath)
    try:
        state.models = option_models(settings)
    except MemevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[STATE] = state
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "dist", "no") == "load":
        # One session unit serves many items; keeping them on one worker runs it once.
        config.option.dist = "loadgroup"


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None and state.models is not None:
        state.models.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wanted = [name for name in SUITE_FIXTURES if name in metafunc.fixturenames]
    if not wanted:
        return
    state = state_of(metafunc.config)
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
    state = state_of(config)
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
    from memeval.plugin.suite import TurnCase

    for name in SUITE_FIXTURES:
        value = params.get(name)
        if isinstance(value, TurnCase):
            return value
    return None


def _plan_judged(state: PluginState, items: list[pytest.Item]) -> None:
    """Decide once how the judged suite gets its model, and add its judge to every unit."""
    source = model_source(state.settings, marker_cassette(items[0]))
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
        store.use_models(cassette_models(source.cassette))


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("llm") is None or _case_of(item) is not None:
        return  # the judged suite was planned at collection
    source = model_source(state_of(item.config).settings, marker_cassette(item))
    if not source.available:
        pytest.skip(source.reason)


# -- the end of the session: merge, write, gate -----------------------------------------

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: take a finished worker's units (each unit kept once)."""
    output = getattr(node, "workeroutput", None) or {}
    units = output.get(WORKER_OUTPUT_KEY)
    if units:
        state_of(node.config).store.merge(units)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if is_worker(config):
        if state._store is not None:
            from memeval.plugin.suite import unit_rows_payload

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
    except OSError as exc:  # a full disk: one failure line, never pytest's traceback
        state.gate_error = (f"{exc.filename or settings.report}: {exc.strerror or exc}; free "
                            "the space or fix the folder, then run the tests again")
    if (state.gate_error or (state.gate is not None and not state.gate.passed)) \
            and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _gate(state: PluginState) -> None:
    from memeval.log import write_json
    from memeval.scoring.gate import GATE_FILE, gate_run

    settings = state.settings
    if (settings.baseline is None and settings.min_precision is None
            and settings.min_recall is None):
        return
    # the same procedure, margins and calibration lookup as `memeval gate`
    state.gate = gate_run(settings.report, settings.baseline, margin=settings.margin,
                          min_precision=settings.min_precision,
                          min_recall=settings.min_recall)
    write_json(settings.report / GATE_FILE, state.gate.to_dict())


@dataclass(frozen=True)
class GateError:
    """Why the gate could not run, as a terminal-summary entry (counted in the last line)."""

    message: str


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or is_worker(config) or (state.summary is None and not state.gate_error):
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
        # An object, as every entry of `stats` (other plugins read their `__dict__`).
        terminalreporter.stats.setdefault(GATE_STAT, []).append(GateError(state.gate_error))
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
