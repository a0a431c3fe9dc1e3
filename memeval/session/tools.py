"""The main model's tool uses, as far as recall cares (SPEC §2.5, §2.8).

Two things come from them: the *recently used tools* the selector is told about, and
the *read-file state* (files the model read, wrote or edited), which keeps a memory
the model already has from being surfaced again.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.memdir.nodepath import expand_path
from memeval.memdir.readfile import node_mtime_ms

# Claude Code 2.1.88's own tools whose successful use puts a file into its read-file
# state; nothing else does.
FILE_STATE_TOOLS: frozenset[str] = frozenset({"Read", "Write", "Edit", "NotebookEdit"})

# Names from other agents' logs (and an older tool) that memeval can also count, behind
# the `extra_file_tools` compat switch; the real system ignores them.
EXTRA_FILE_STATE_TOOLS: frozenset[str] = frozenset(
    {"MultiEdit", "read_file", "write_file", "edit_file"}
)


@dataclass(frozen=True)
class ToolEvent:
    """One tool use of the main model, since the previous human turn.

    Args:
        tool: the tool's name (`Bash`, `Read`, an MCP tool name, ...).
        ok: `True` for a result without error, `False` for an error result, `None`
            for a use that has no result (yet); such a use never counts as success.
        path: the file the tool read, wrote or edited, when it has one; relative
            paths are taken from the session's cwd.
    """

    tool: str
    ok: bool | None = True
    path: str | None = None

    @classmethod
    def coerce(cls, value: ToolEvent | Mapping[str, Any] | str) -> ToolEvent:
        """Accept a ToolEvent, a scenario dict (`{tool, ok, path}`) or a bare tool name."""
        if isinstance(value, ToolEvent):
            return value
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, Mapping):
            unknown = set(value) - {"tool", "ok", "path"}
            if "tool" not in value or not isinstance(value["tool"], str) or unknown:
                raise MemevalError(
                    f"tool event {dict(value)!r}: needs a string 'tool' and only the keys "
                    "tool, ok, path (e.g. {tool: Read, ok: true, path: src/app.py})"
                )
            ok = value.get("ok", True)
            if ok is not None and not isinstance(ok, bool):
                raise MemevalError(
                    f"tool event {dict(value)!r}: 'ok' must be true, false or null"
                )
            path = value.get("path")
            return cls(value["tool"], ok, None if path is None else str(path))
        raise MemevalError(
            f"tool event {value!r}: expected a mapping like {{tool: Bash, ok: true}}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "ok": self.ok, "path": self.path}


def coerce_tool_events(
    events: Iterable[ToolEvent | Mapping[str, Any] | str],
) -> tuple[ToolEvent, ...]:
    return tuple(ToolEvent.coerce(e) for e in events)


def recent_successful_tools(events: Sequence[ToolEvent]) -> tuple[str, ...]:
    """Tools with at least one result and no error result in the window, most recent
    first, each once. Claude Code walks the window backwards and keeps a tool at its
    most recent use that has a result; a single error anywhere excludes it."""
    failed: set[str] = set()
    succeeded: dict[str, None] = {}  # insertion-ordered set
    for event in reversed(events):
        if event.ok is None:
            continue
        if event.ok:
            succeeded.setdefault(event.tool, None)
        else:
            failed.add(event.tool)
    return tuple(tool for tool in succeeded if tool not in failed)


def file_state_entries(
    events: Iterable[ToolEvent], cwd: Path, home: Path, *, extra_tools: bool = False
) -> list[tuple[str, ToolEvent]]:
    """`(expanded path, event)` for each successful file tool use; these paths go into
    the read-file state. A path the tools would refuse (a NUL byte) is left out.

    Args:
        events: the window's tool uses, in order.
        cwd: what relative paths are taken from.
        home: what `~` means.
        extra_tools: also count `EXTRA_FILE_STATE_TOOLS` (memeval's extension).
    """
    tools = FILE_STATE_TOOLS | EXTRA_FILE_STATE_TOOLS if extra_tools else FILE_STATE_TOOLS
    entries = []
    for event in events:
        if event.tool in tools and event.ok is True and event.path:
            try:
                entries.append((normalize_path(event.path, cwd, home), event))
            except ValueError:
                continue
    return entries


def normalize_path(path: str | os.PathLike[str], cwd: Path, home: Path) -> str:
    """The key the file tools give a path: trimmed (JS whitespace), `~` expanded,
    absolute against `cwd`, lexically normalized (no symlinks resolved), NFC."""
    return expand_path(os.fspath(path), cwd, home)


def tool_timestamp(path: str) -> float:
    """The timestamp a tool read gives its entry: the file's mtime in whole ms, or 0
    when the file cannot be stat'ed (a scenario may name files it never wrote)."""
    try:
        return float(math.floor(node_mtime_ms(os.stat(path))))
    except (OSError, ValueError):
        return 0.0
