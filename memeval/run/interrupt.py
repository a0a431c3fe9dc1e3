"""Ctrl-C and SIGTERM during a run: the first asks it to stop, the second ends it at once.

A run is many independent units (a turn, or a stretch of turns, see
`memeval.run.evaluate`). On the first signal no new unit starts and the model door
sends no new call (`ModelAccess.stop_calls_on`); running units stop at their next
turn boundary or call (the rows of a stopped unit are not written, and every answer
it was paid for is in the response cache, so the resume pays nothing twice); calls
still in flight a few seconds later are cancelled (`runner.STOP_GRACE_S`), so a slow
server cannot hold the run; finished units stay on disk. A second signal
exits immediately: rows are fsynced within half a second of their unit ending, and
the answers of any that were not are in the cache.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from memeval.errors import STOPPED_CALL, MemevalError

__all__ = ["EXIT_INTERRUPTED", "STOPPED_CALL", "RunInterrupted", "StopRequested",
           "stop_on_signals"]

EXIT_INTERRUPTED = 130  # the shell's code for a run ended by SIGINT


class StopRequested(MemevalError):
    """Raised inside a unit at a turn boundary once a stop was asked for."""


class RunInterrupted(MemevalError):
    """The run stopped early on a signal; finished units are on disk."""

    def __init__(self, done: int, left: int) -> None:
        super().__init__(f"interrupted: {done} unit(s) written, {left} left to run")
        self.done, self.left = done, left


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event set by the first SIGINT/SIGTERM; the second exits with code 130.

    Handlers are installed only in the main thread (elsewhere, as under some test
    runners, the event simply never fires from a signal).
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            sys.stderr.write("\nmemeval: stopped at once; units finished more than half a second "
                             "ago are on disk, and the answers of the rest are cached.\n")
            os._exit(EXIT_INTERRUPTED)
        stop.set()
        sys.stderr.write(f"\nmemeval: {signal.Signals(signum).name} — no new model call is "
                         "sent; calls in flight get a few seconds; press Ctrl-C again to "
                         "stop at once.\n")

    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
