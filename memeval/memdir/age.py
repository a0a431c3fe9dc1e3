"""How old a memory is, and the header line that tells the model so.

The staleness paragraph is prose: ours by default, replaceable through the
`template` arguments (a jinja2 template receiving `days`). Its first sentence,
`This memory is <N> days old. `, is the system's fixed machine part.
"""

from __future__ import annotations

import functools
import math
import time

import jinja2

DAY_MS = 86_400_000

# Our wording; the system's opening sentence is kept exactly.
STALENESS_TEMPLATE = (
    "This memory is {{ days }} days old. "
    "It records what was true when it was written, not how things stand now: "
    "statements about how the code behaves and file:line references may no longer hold. "
    "Check them against the current code before presenting them as fact."
)

_ENV = jinja2.Environment(autoescape=False, keep_trailing_newline=True)


def wall_clock_ms() -> float:
    """The wall clock in milliseconds, as `Date.now()`."""
    return float(math.floor(time.time() * 1000))


def memory_age_days(mtime_ms: float, now_ms: float | None = None) -> int:
    """Whole days since `mtime_ms`, never negative (future mtimes count as today)."""
    now = wall_clock_ms() if now_ms is None else now_ms
    return max(0, math.floor((now - mtime_ms) / DAY_MS))


def memory_age(mtime_ms: float, now_ms: float | None = None) -> str:
    """`today`, `yesterday` or `<N> days ago`."""
    days = memory_age_days(mtime_ms, now_ms)
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def memory_freshness_text(
    mtime_ms: float, now_ms: float | None = None, *, template: str | None = None
) -> str:
    """The staleness paragraph for memories two or more days old, else `""`."""
    days = memory_age_days(mtime_ms, now_ms)
    if days <= 1:
        return ""
    return _compiled(template or STALENESS_TEMPLATE).render(days=days)


@functools.lru_cache(maxsize=16)
def _compiled(template: str) -> jinja2.Template:
    # Compiling costs milliseconds and every surfaced memory needs the paragraph.
    return _ENV.from_string(template)


def memory_header(
    path: str, mtime_ms: float, now_ms: float | None = None, *, template: str | None = None
) -> str:
    """`Memory (saved today): <path>:`, `... yesterday ...`, or staleness + `Memory: <path>:`."""
    staleness = memory_freshness_text(mtime_ms, now_ms, template=template)
    if staleness:
        return f"{staleness}\n\nMemory: {path}:"
    return f"Memory (saved {memory_age(mtime_ms, now_ms)}): {path}:"
