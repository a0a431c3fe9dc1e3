"""The runner: many units in flight on one event loop.

Units of one scenario and repeat share a `World` (its files written once and, under
gold history, one reference walk); a world opens when its first unit starts and
closes when its last one ends, so a run of many scenarios holds only the worlds in
play. At most `concurrency` units are in flight. A model call is awaited without
holding a thread, and the model door caps calls in flight per endpoint; local
selectors and judges run inline, since threads would only queue for the same lock.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memeval.answers import AnswerStage
from memeval.judges.base import Judge
from memeval.log import TurnResult
from memeval.run.config import RunConfig
from memeval.run.interrupt import StopRequested
from memeval.run.play import Unit, World, build_selector, carries_state, play_unit
from memeval.run.scratch import WorldsFolder, scratch_folder, world_bytes
from memeval.selectors.base import Selector

if TYPE_CHECKING:
    from memeval.llm.access import ModelAccess

WorldKey = tuple[int, int]  # (id of the scenario, repeat)
STOP_GRACE_S = 5.0  # after a stop, calls in flight get this long before they are cancelled
STOP_POLL_S = 0.1  # how often the runner looks at the stop event (set by a signal handler)


def world_key(unit: Unit) -> WorldKey:
    return (id(unit.scenario), unit.repeat)


class Worlds:
    """The open worlds of a run, each with the selectors its units share.

    A selector without memory is built once per world and shared by its units (their
    turns are independent); one that remembers gets a fresh instance per unit. A
    world or selector that fails to build fails every unit that needs it, alone.
    """

    def __init__(self, units: Sequence[Unit], config: RunConfig,
                 models: ModelAccess | None = None) -> None:
        self.config, self.models = config, models
        self._units: dict[WorldKey, list[Unit]] = {}
        for unit in units:
            self._units.setdefault(world_key(unit), []).append(unit)
        self._left = Counter({key: len(group) for key, group in self._units.items()})
        # Every world may be open at once (with --batches they are): room for all.
        self._folder = WorldsFolder(scratch_folder(world_bytes(
            group[0].scenario for group in self._units.values())))
        self._open: dict[WorldKey, World | Exception] = {}
        self._selectors: dict[tuple[WorldKey, str], Selector | Exception] = {}

    def acquire(self, unit: Unit) -> World:
        key = world_key(unit)
        if key not in self._open:
            try:
                self._open[key] = World(unit.scenario, unit.repeat, self.config,
                                        self._units[key], scratch=self._folder.path)
            except Exception as exc:
                self._open[key] = exc
        world = self._open[key]
        if isinstance(world, Exception):
            raise world
        return world

    def selector(self, unit: Unit) -> Selector:
        key = (world_key(unit), unit.selector_spec)
        shared = self._selectors.get(key)
        if shared is None:
            try:
                shared = build_selector(unit.selector_spec, self.config, self.models)
            except Exception as exc:
                shared = exc
            self._selectors[key] = shared
        if isinstance(shared, Exception):
            world = self._open.get(world_key(unit))
            if isinstance(world, World) and world.walk is not None:
                world.walk.taken(*unit.turn_indices)  # this unit will take none of them
            raise shared
        return build_selector(unit.selector_spec, self.config, self.models) \
            if carries_state(shared) \
            else shared

    def release(self, unit: Unit) -> None:
        key = world_key(unit)
        self._left[key] -= 1
        if self._left[key] == 0:
            world = self._open.pop(key, None)
            if isinstance(world, World):
                world.close()
            for spec in {u.selector_spec for u in self._units.pop(key)}:
                self._selectors.pop((key, spec), None)

    def close(self) -> None:
        try:
            for world in self._open.values():
                if isinstance(world, World):
                    world.close()
            self._open.clear()
        finally:
            self._folder.close()


async def run_units(units: Sequence[Unit], config: RunConfig, judges: Sequence[Judge], *,
                    on_rows: Callable[[Unit, list[TurnResult]], None],
                    on_error: Callable[[Unit, Exception], None],
                    on_turn: Callable[[], None] = lambda: None,
                    stop: threading.Event | None = None, in_flight: int | None = None,
                    every: tuple[float, Callable[[], None]] | None = None,
                    models: ModelAccess | None = None,
                    answers: AnswerStage | None = None) -> None:
    """Play `units`, at most `in_flight` (default `config.concurrency`) at once, in the
    order given.

    Each finished unit's rows go to `on_rows` as soon as it ends; a unit that raises
    goes to `on_error` and costs only itself. Once `stop` is set no unit starts,
    running ones end at their next turn boundary or model call without rows, and
    those still running `STOP_GRACE_S` later are cancelled. `every` = (seconds,
    call) is called that often while units run (the writer's flush). If `on_rows`
    fails (the disk is full), no unit starts any more and the first such error is
    raised once the running ones have ended. `models` is the run's model access,
    handed to each selector built; `answers` the answer stage, when the run has one.
    """
    worlds = Worlds(units, config, models)
    slots = asyncio.Semaphore(max(1, in_flight or config.concurrency))
    running: set[asyncio.Task[None]] = set()
    fatal: list[BaseException] = []

    async def one(unit: Unit) -> None:
        try:
            if stop is not None and stop.is_set():
                return  # scheduled before the stop: no world is built for it
            rows = await play_unit(worlds.acquire(unit), unit, worlds.selector(unit), judges,
                                   on_turn, stop, answers)
        except StopRequested:
            pass
        except asyncio.CancelledError:
            if stop is None or not stop.is_set():
                raise
            # cancelled by `_cancel_after_stop`: a stopped unit writes no rows
        except Exception as exc:  # one broken unit must not cost the others
            on_error(unit, exc)
        else:
            try:
                on_rows(unit, rows)
            except BaseException as exc:  # rows that cannot be kept end the run
                fatal.append(exc)
        finally:
            slots.release()
            try:
                worlds.release(unit)
            except Exception as exc:  # a temp folder that will not go: say so, go on
                warnings.warn(f"could not clean up after {unit.key}: {exc}", stacklevel=1)

    ticker = None if every is None else asyncio.create_task(_every(*every))
    watcher = None if stop is None else asyncio.create_task(_cancel_after_stop(stop, running))
    try:
        for unit in units:
            await slots.acquire()
            if fatal or (stop is not None and stop.is_set()):
                slots.release()
                break
            task = asyncio.create_task(one(unit))
            running.add(task)
            task.add_done_callback(running.discard)
        while running:
            await asyncio.gather(*running)
    finally:
        for task in (ticker, watcher):
            if task is not None:
                task.cancel()
        worlds.close()
    if fatal:
        raise fatal[0]


async def _cancel_after_stop(stop: threading.Event, running: set[asyncio.Task[None]]) -> None:
    """Once `stop` is set, give the units in flight `STOP_GRACE_S` to end (the door sends
    no new call, so they end at their call in flight), then cancel the rest: a server
    that takes a minute per answer must not hold the run that long."""
    while not stop.is_set():
        await asyncio.sleep(STOP_POLL_S)
    if running:
        await asyncio.wait(set(running), timeout=STOP_GRACE_S)
    for task in set(running):
        task.cancel()


async def _every(seconds: float, call: Callable[[], None]) -> None:
    while True:
        await asyncio.sleep(seconds)
        call()
