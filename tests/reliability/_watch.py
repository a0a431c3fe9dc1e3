"""Watching what the code under test opens, and bounding how long it may take.

`sys.addaudithook` sees every `open` (builtins, `io`, `os.open`) and every folder
listing, whoever calls it, so a test can prove a path was never touched without
trusting the code's own account. Hooks cannot be removed, so one is installed per
process and records only while a `watch_opens()` block is active on this thread.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_state = threading.local()
_installed = False
_install_lock = threading.Lock()

# Events that read a file or list a folder (PEP 578 / the audit events table).
_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})


def _hook(event: str, args: tuple[object, ...]) -> None:
    trigger = getattr(_state, "trigger", None)
    if trigger is not None and event == "open" and args:
        _state.trigger = None  # once, and not for the opens the trigger itself makes
        trigger(args[0])
    log = getattr(_state, "log", None)
    if log is None or event not in _EVENTS or not args:
        return
    target = args[0]
    if isinstance(target, int) or target is None:  # fds carry no path
        return
    with contextlib.suppress(TypeError, ValueError):  # not a path: nothing to record
        log.append((event, os.fsdecode(target)))  # type: ignore[arg-type]


def _install() -> None:
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextmanager
def watch_opens() -> Iterator[list[tuple[str, str]]]:
    """Collect `(event, path)` for every open/listing made on this thread in the block."""
    _install()
    log: list[tuple[str, str]] = []
    _state.log = log
    try:
        yield log
    finally:
        _state.log = None


@contextmanager
def before_first_open(action: Callable[[], None], *, suffix: str = ".md") -> Iterator[None]:
    """Run `action` once, just before the first file ending in `suffix` is opened on
    this thread: a change "during the scan" without depending on how it reads."""
    _install()

    def fire(target: object) -> None:
        if isinstance(target, str | bytes | os.PathLike) and os.fsdecode(target).endswith(
                suffix):
            action()
        else:
            _state.trigger = fire  # not yet: wait for the next open

    _state.trigger = fire
    try:
        yield
    finally:
        _state.trigger = None


def opened_files(log: list[tuple[str, str]]) -> set[str]:
    """Real paths of the files opened (listings left out)."""
    return {os.path.realpath(path) for event, path in log if event == "open"}


def touched(log: list[tuple[str, str]]) -> set[str]:
    """Real paths of everything opened or listed."""
    return {os.path.realpath(path) for _, path in log}


# Python itself (lazy imports, plugin discovery) reads these; the code under test
# does not choose to, so they are not counted as "outside the memdir".
_INTERPRETER_ROOTS = tuple(sorted({os.path.realpath(p) for p in (
    sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path) if p and os.path.isdir(p)}))


def outside(paths: set[str], root: Path) -> set[str]:
    """Paths that are neither in `root` nor part of the interpreter and its packages."""
    return {p for p in paths if not inside(p, root)
            and not any(p == r or p.startswith(r + os.sep) for r in _INTERPRETER_ROOTS)}


def inside(path: str, root: Path | str) -> bool:
    real_root = os.path.realpath(root)
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def run_python(code: str, *, timeout: float, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter; a hang becomes a TimeoutExpired after
    `timeout` seconds (the child is killed), never a stuck test run."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env, check=False)
