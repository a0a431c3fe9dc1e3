"""Collecting located problems while walking a scenario's YAML nodes.

Small typed readers (`string`, `number`, `instant`, ...) that return a usable default
and record an issue instead of raising, so one pass finds every mistake in a file.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from memeval.scenarios._yaml import Node
from memeval.scenarios.schema import ScenarioIssue

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def closest(word: str, options: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, options: Iterable[str]) -> str:
    best = closest(word, options)
    return f" (did you mean {best!r}?)" if best else ""


def to_ms(instant: datetime) -> float:
    """Milliseconds since the epoch, computed without float drift for whole microseconds."""
    return ((instant - _EPOCH) // timedelta(microseconds=1)) / 1000


def parse_instant(value: Any) -> datetime:
    """A UTC datetime from an ISO-8601 string (a bare date means midnight UTC).

    Raises:
        ValueError: with a message saying how to write the value instead.
    """
    if isinstance(value, datetime):
        instant = value
    elif isinstance(value, date):
        instant = datetime(value.year, value.month, value.day)
        return instant.replace(tzinfo=UTC)
    elif isinstance(value, str):
        text = value.strip()
        try:
            instant = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"{value!r} is not an ISO-8601 time; write e.g. 2026-11-30T12:00:00Z"
            ) from None
        if _DATE_ONLY.match(text):
            return instant.replace(tzinfo=UTC)
    else:
        raise ValueError(f"expected an ISO-8601 time such as 2026-11-30T12:00:00Z, "
                         f"got {type(value).__name__} {value!r}")
    if instant.tzinfo is None:
        raise ValueError(f"{value!r} has no timezone; add Z for UTC "
                         "(2026-11-30T12:00:00Z) or an offset (+02:00)")
    return instant.astimezone(UTC)


MAX_LISTED_ISSUES = 50  # a file with more problems is not a scenario; the rest are counted


class Checker:
    """Collects issues for one file while the loader walks it: the first
    `MAX_LISTED_ISSUES`, and a count of the rest."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.issues: list[ScenarioIssue] = []
        self.unlisted = 0

    @property
    def full(self) -> bool:
        return len(self.issues) >= MAX_LISTED_ISSUES

    def error(self, line: int | None, field: str, message: str) -> None:
        if self.full:
            self.unlisted += 1
        else:
            self.issues.append(ScenarioIssue(self.file, line, field, message))

    def reported(self) -> list[ScenarioIssue]:
        """The issues to show: the listed ones, then one line counting the rest."""
        if not self.unlisted:
            return list(self.issues)
        return [*self.issues, ScenarioIssue(
            self.file, None, "", f"… and {self.unlisted} more problems, not listed; fix "
            f"the first {MAX_LISTED_ISSUES} and load the file again")]

    def keys(self, node: Node, known: tuple[str, ...], field: str) -> None:
        for key, line in node.key_lines.items():
            if key not in known:
                if self.full:  # no hint to compute for a line nobody will see
                    self.unlisted += 1
                    continue
                hint = did_you_mean(key, known) or f" (known keys: {', '.join(known)})"
                self.error(line, join(field, key), f"unknown key {key!r}{hint}")

    def mapping(self, node: Node | None, field: str, what: str) -> bool:
        if node is None or node.is_map:
            return True
        self.error(node.line, field, f"must be a mapping of {what}, "
                                     f"got {kind(node)}")
        return False

    def string(self, node: Node | None, field: str, *, required: bool = False,
               default: str | None = None, allow_numbers: bool = False) -> str | None:
        if node is None or node.value is None:
            if required:
                line = node.line if node is not None else None
                self.error(line, field, "is required")
            return default
        if isinstance(node.value, str):
            return node.value
        if allow_numbers and isinstance(node.value, int | float) and \
                not isinstance(node.value, bool):
            return str(node.value)
        self.error(node.line, field, f"must be a string, got {kind(node)}; quote it")
        return default

    def boolean(self, node: Node | None, field: str, default: bool) -> bool:
        if node is None:
            return default
        if isinstance(node.value, bool):
            return node.value
        self.error(node.line, field, f"must be true or false, got {kind(node)}")
        return default

    def number(self, node: Node | None, field: str, default: float, *,
               minimum: float | None = None, maximum: float | None = None,
               why_maximum: str = "") -> float:
        """A finite number within the bounds; `why_maximum` explains the upper one."""
        if node is None:
            return default
        value = node.value
        # An int may be too large for a float (10**400): compared, never converted.
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not math.isfinite(value)):
            self.error(node.line, field, f"must be a number, got {_short(kind(node))}")
            return default
        if minimum is not None and value < minimum:
            self.error(node.line, field, f"must be >= {minimum:g}, got {_short(str(value))}")
            return default
        if maximum is not None and value > maximum:
            self.error(node.line, field, f"{_short(str(value))} is too large; give at most "
                                         f"{maximum:.15g}{why_maximum}")
            return default
        return float(value)

    def instant(self, node: Node, field: str) -> datetime | None:
        try:
            return parse_instant(node.value)
        except ValueError as exc:
            self.error(node.line, field, str(exc))
            return None

    def string_list(self, node: Node | None, field: str) -> list[tuple[str, int]]:
        """Strings with their lines; a single string or a non-list is an error."""
        if node is None or node.value is None:
            return []
        if not node.is_seq:
            example = node.value if isinstance(node.value, str) else "a.md, b.md"
            self.error(node.line, field, f"must be a list, got {kind(node)}; "
                                         f"write [{example}]")
            return []
        out: list[tuple[str, int]] = []
        for index, item in enumerate(node.value):
            text = self.string(item, f"{field}[{index}]")
            if text is not None:
                out.append((text, item.line))
        return out


def _short(text: str, limit: int = 40) -> str:
    """A value for a message: a 400-digit number is shown by its start."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_:-]+")


def join(field: str, key: str) -> str:
    if not key.isprintable():  # a NUL or control character must not reach the terminal
        key = key.encode("unicode_escape").decode("ascii")
    part = key if _PLAIN_KEY.fullmatch(key) else f"[{key}]"
    if not field:
        return part
    return f"{field}{part}" if part.startswith("[") else f"{field}.{part}"


def kind(node: Node) -> str:
    value = node.value
    if node.is_map:
        return "a mapping"
    if node.is_seq:
        return "a list"
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"
