"""JavaScript value semantics for parsed YAML: truthiness and `String(value)`.

The system reads `frontmatter.description || null` and prints it with a template
literal, so a description that YAML parsed as a number, list or mapping reaches the
model the way JavaScript stringifies it. Parsed YAML here is plain Python data:
`str`, `bool`, `int`/`float` (JavaScript has only doubles), `None`, `list`, `dict`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class JsDate:
    """A JavaScript `Date` (YAML `!!timestamp`): milliseconds since the epoch."""

    ms: float

    def iso(self) -> str:
        """`Date.prototype.toISOString()` (what JSON shows)."""
        return js_iso_string(self.ms)


MAX_DATE_MS = 8.64e15  # ECMAScript's time value range: ±100 000 000 days
_YEAR_10000_MS = 253_402_300_800_000  # 10000-01-01T00:00:00Z: four-digit years below


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day count from 1970-01-01."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month, day


def js_iso_string(ms: float) -> str:
    """`new Date(ms).toISOString()`: whole milliseconds truncated toward zero, UTC,
    six-digit signed years outside 0000-9999. Pure arithmetic: the C library's
    calendar would count leap seconds under a `right/` time zone.

    Raises:
        ValueError: outside the range of a JavaScript Date (JavaScript's RangeError).
    """
    if not 0 <= ms < _YEAR_10000_MS and (not math.isfinite(ms) or abs(ms) > MAX_DATE_MS):
        raise ValueError(f"invalid time value: {ms!r}")
    days, rest = divmod(int(ms), 86_400_000)  # int() truncates toward zero, as TimeClip
    return (f"{_iso_date(days)}T{rest // 3_600_000:02d}:{rest // 60_000 % 60:02d}:"
            f"{rest // 1000 % 60:02d}.{rest % 1000:03d}Z")


@functools.lru_cache(maxsize=4096)
def _iso_date(days: int) -> str:
    """`YYYY-MM-DD` of a day count from 1970-01-01 (a memdir's files share few days)."""
    year, month, day = _civil_from_days(days)
    y = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    return f"{y}-{month:02d}-{day:02d}"


class JsMap(dict):  # type: ignore[type-arg]
    """A JavaScript `Map` (YAML `!!omap`); String() gives `[object Map]`."""


class JsSet(dict):  # type: ignore[type-arg]
    """A JavaScript `Set` (YAML `!!set`), members as keys; String() gives `[object Set]`."""


def js_number_str(value: float | int) -> str:
    """`Number.prototype.toString()` (ECMAScript Number::toString, radix 10)."""
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr() is the shortest round-trip form, the same digits ECMAScript asks for.
    _, digit_tuple, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exp, int)
    k = len(digits)
    # n: position of the decimal point relative to the first digit.
    n = exp + len(digit_tuple)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        esign = "+" if e >= 0 else "-"
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mant}e{esign}{abs(e)}"
    return sign + body


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: `""`, `0`, `NaN`, `false` and `null` are falsy."""
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, int | float):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    return True


def js_string(value: Any) -> str:
    """`String(value)` for values parsed from YAML."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_str(value)
    if isinstance(value, JsDate):
        # Date's String() is in the local zone; the reference ran with TZ=UTC.
        if not math.isfinite(value.ms) or abs(value.ms) > MAX_DATE_MS:
            return "Invalid Date"
        try:
            moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=int(value.ms))
        except OverflowError:  # years outside 1-9999: not worth JavaScript's exact format
            return "Invalid Date"
        return moment.strftime("%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)")
    if isinstance(value, JsMap):
        return "[object Map]"
    if isinstance(value, JsSet):
        return "[object Set]"
    if isinstance(value, bytes):
        # A YAML `!!binary` value is a Node Buffer, whose String() decodes it as UTF-8.
        return value.decode("utf-8", "replace")
    if isinstance(value, list | tuple):
        # Array.prototype.join: null and undefined elements become empty strings.
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"
