"""The runner: turn units in flight on one event loop, batches filled by all of them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from memeval.judges import resolve_judge
from memeval.llm import DoorConfig, LLMClient, ModelAccess
from memeval.llm.endpoint import ANTHROPIC
from memeval.run.config import RunConfig, bundled_fixtures_dir
from memeval.run.evaluate import plan_units, units_in_flight
from memeval.run.play import run_coroutine
from memeval.run.runner import run_units
from memeval.scenarios import load
from memeval.selectors import SELECTORS
from memeval.selectors.base import SelectionResult, SyncSelector
from memeval.testing import FakeMessagesServer

SCENARIOS = [load(bundled_fixtures_dir() / "scenarios" / name) for name in (
    "a-rails-invoicing.yaml", "b-terraform-aws.yaml")]


def test_with_message_batches_every_unit_waits_on_one_batch(monkeypatch):
    """Turn units all in flight at once: one batch holds the calls of every turn of
    every scenario, where `--concurrency` units at a time would make many batches."""
    config = RunConfig(selectors=("claude",), concurrency=2)
    units = plan_units(SCENARIOS, config)
    rows: list = []
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        models = ModelAccess(DoorConfig(batches=True, poll_interval=0.01, batch_window=0.5))
        run_coroutine(run_units(
            units, config, [resolve_judge("gold")],
            on_rows=lambda unit, got: rows.extend(got),
            on_error=lambda unit, exc: rows.append(exc),
            in_flight=units_in_flight(config, len(units), models), models=models),
            models=models)
        assert LLMClient.of(models, ANTHROPIC).use_batches
    created = [r for r in server.requests if r.method == "POST" and r.path.endswith("batches")]
    asked = sum(1 for r in rows if r.selector_usage.calls)
    assert len(rows) == sum(len(s.turns) for s in SCENARIOS)
    assert [r.selector_error for r in rows if isinstance(r, Exception) or r.selector_error] == []
    assert len(created) == 1 and len(created[0].body["requests"]) == asked > 10


def test_units_in_flight_is_the_concurrency_unless_batches_gather_calls():
    config = RunConfig(concurrency=4)
    assert units_in_flight(config, 500, None) == 4
    assert units_in_flight(config, 500, SimpleNamespace(use_batches=False)) == 4
    batching = SimpleNamespace(use_batches=True, batch_max=100)
    assert units_in_flight(config, 500, batching) == 100
    assert units_in_flight(config, 2, batching) == 4


class Waiting(SyncSelector):
    """A user's selector that waits on something (here: on a second call to arrive),
    written as the docs say: `select` only, not marked inline."""

    barrier = threading.Barrier(2, timeout=5)

    def __init__(self) -> None:
        self.name = WAITING

    def select(self, request):
        self.barrier.wait()  # breaks (an error on the turn) unless two turns run at once
        time.sleep(0.1)  # and then takes a while, as a remote service would
        return SelectionResult(names=())


WAITING = "test-runner-waiting"
SELECTORS.register(WAITING, Waiting)


class Remembering(SyncSelector):
    """Picks nothing, but says it remembers: its stretches run in order."""

    stateful = True
    inline = True

    def __init__(self) -> None:
        self.name = REMEMBERING

    def reset(self) -> None:
        pass

    def select(self, request):
        return SelectionResult(names=())


REMEMBERING = "test-runner-remembering"
SELECTORS.register(REMEMBERING, Remembering)


def test_a_selector_that_waits_runs_in_threads_so_units_overlap():
    scenario = SCENARIOS[0]
    config = RunConfig(selectors=(WAITING,), concurrency=2)
    units = plan_units([scenario], config, split=True)[:2]
    rows: list = []
    run_coroutine(run_units(units, config, [resolve_judge("gold")],
                            on_rows=lambda unit, got: rows.extend(got),
                            on_error=lambda unit, exc: rows.append(exc)))
    assert [r.selector_error for r in rows] == [None, None]


def test_rows_that_cannot_be_written_end_the_run_with_that_error():
    config = RunConfig(selectors=("bm25",), concurrency=2)
    units = plan_units(SCENARIOS, config)
    written: list = []

    def full_disk(unit, rows):
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        written.append(rows)

    with pytest.raises(OSError, match="No space left"):
        run_coroutine(run_units(units, config, [resolve_judge("gold")], on_rows=full_disk,
                                on_error=lambda unit, exc: None))
    assert len(written) == 3  # no unit started after the failure wrote anything


def test_each_blocking_run_closes_its_loops_model_clients():
    """`run_unit` (the pytest plugin's door) runs a loop per session; the door's clients
    of that loop, and their connections, must not outlive it."""
    from memeval.run.play import Unit, run_unit

    fds = Path("/proc/self/fd")
    with FakeMessagesServer() as server:
        models = ModelAccess()
        spec = f"claude?base_url={server.url}"
        config = RunConfig(selectors=(spec,))
        run_unit(Unit(SCENARIOS[0], spec, 0), config, [resolve_judge("gold")], models=models)
        before = len(list(fds.iterdir()))
        for repeat in range(1, 6):
            run_unit(Unit(SCENARIOS[0], spec, repeat), config, [resolve_judge("gold")],
                     models=models)
        after = len(list(fds.iterdir()))
        models.close()
    assert server.message_requests()
    assert after <= before


def test_a_world_that_cannot_be_cleaned_up_warns_and_the_run_goes_on(monkeypatch):
    from memeval.run import play as harness

    def stuck(self):
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(harness.World, "close", stuck)
    config = RunConfig(selectors=("bm25",), concurrency=1)
    units = plan_units(SCENARIOS, config)
    rows: list = []
    with pytest.warns(UserWarning, match="could not clean up"):
        run_coroutine(run_units(units, config, [resolve_judge("gold")],
                                on_rows=lambda unit, got: rows.extend(got),
                                on_error=lambda unit, exc: rows.append(exc)))
    assert len(rows) == len(units)  # every unit ran: no slot was lost to a failed cleanup


def test_the_periodic_call_runs_while_units_are_still_running():
    """The writer's flush rides on it: rows must not wait for the next unit to end."""
    config = RunConfig(selectors=(WAITING,), concurrency=2)
    units = plan_units([SCENARIOS[0]], config)[:2]
    calls: list[int] = []
    rows: list = []
    run_coroutine(run_units(units, config, [resolve_judge("gold")],
                            on_rows=lambda unit, got: rows.extend(got),
                            on_error=lambda unit, exc: rows.append(exc),
                            every=(0.01, lambda: calls.append(len(rows)))))
    assert calls and calls[0] == 0  # called before any unit had finished


def test_a_unit_that_stops_partway_frees_the_turn_starts_it_never_took():
    """Each turn's start is kept until every unit that needs it has forked it; a unit
    that ends early (a stop, a failure) must count itself out of the rest, or the
    starts that the walk makes for it later are held until the world closes."""
    from memeval.run.interrupt import StopRequested
    from memeval.run.play import Unit, World, build_selector, play_unit

    scenario = SCENARIOS[0]
    config = RunConfig(selectors=(REMEMBERING, "bm25"))
    stretch, last = Unit(scenario, REMEMBERING, 0, 0, 4), Unit(scenario, "bm25", 0, 3, 4)
    judges = [resolve_judge("gold")]
    stop = threading.Event()
    with World(scenario, 0, config, (stretch, last)) as world:
        with pytest.raises(StopRequested):  # stops after its first turn
            run_coroutine(play_unit(world, stretch, build_selector(REMEMBERING, config),
                                    judges, on_turn=stop.set, stop=stop))
        rows = run_coroutine(play_unit(world, last, build_selector("bm25", config), judges))
        assert [r.turn_index for r in rows] == [3]
        assert world.walk.held == 0  # turns 1 and 2 were nobody's any more
