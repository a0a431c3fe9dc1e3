"""The JSON memeval writes and reads, and the one rule for numbers JSON cannot hold.

Three kinds of text. Model-request keys (the response cache's) must never change
spelling, so `canonical_json` is `json.dumps` with fixed options. Payload addresses
and memo keys are `canonical_key`, orjson's sorted text: one spelling per value
within a version. Stored lines (`results.jsonl`, `payloads.jsonl`, `summary.json`)
are written with orjson (the stdlib where orjson refuses a value) and read with the
stdlib. A number that is not finite is missing (`finite`, `json_safe`): stored as
null, as JSON has no NaN and tools other than Python's reject the `NaN` token.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import orjson


def refuse(value: Any) -> Any:
    """The `default` of an encoder that takes JSON's own types only: json's error."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


canonical_json = functools.partial(json.dumps, sort_keys=True, ensure_ascii=False,
                                   separators=(",", ":"))
"""One spelling per JSON value: sorted keys, no spaces, UTF-8 kept, as `json.dumps`
spells them. What model-request keys are taken of."""


# Sorted keys, as the stdlib writer sorted them (so "h" stays first in a payload
# line); dataclasses and dates go to the default, as json would send them.
_SORTED = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
           | orjson.OPT_PASSTHROUGH_DATETIME)


def canonical_key(value: Any) -> str | bytes:
    """`value`'s sorted-key compact JSON, several times cheaper to take than
    `canonical_json`: orjson's, or the canonical text where orjson refuses (a long
    integer, a key that is not text). Equal keys mean equal canonical text (for plain
    JSON values, the converse too). NaN, infinity and null share a key, as they share
    their stored form. What payload addresses and the compaction's memo are taken of."""
    try:
        return orjson.dumps(value, option=_SORTED, default=refuse)
    except TypeError:
        return canonical_json(value)


def _as_number_or_text(value: Any) -> Any:
    """What orjson hands back, as `json_safe` makes it: a float subclass or a numpy
    scalar as its number, a tuple subclass (a NamedTuple) as its list, anything else as
    its `str` (as `json.dumps(default=str)` writes it)."""
    if isinstance(value, float):
        return float(value)
    if isinstance(value, tuple):
        return list(value)
    return value.item() if hasattr(value, "item") else str(value)


def finite(value: Any) -> float | None:
    """The one NaN rule: a number that is not finite (NaN, infinity), or no number at
    all, is missing (None); any other number comes back as a float. JSON has no NaN,
    and tools other than Python's reject the `NaN` token."""
    if value is None or isinstance(value, str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


_PLAIN = frozenset({str, int, bool, type(None)})  # JSON as they are: most of a summary


def json_safe(value: Any) -> Any:
    """`value` made plain JSON by the rule of `finite`, all the way down: non-finite
    floats become None, numpy scalars their Python value, mapping keys text."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, float):
        return finite(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return json_safe(value.item())
    return value


def dump_line(value: Any) -> bytes:
    """`value` as one line of a JSON-lines file, newline included: compact, sorted
    keys, UTF-8, unknown types as their `str`. What orjson refuses (an integer past
    64 bits, a key that is not text) is written by the stdlib instead."""
    try:
        return orjson.dumps(value, default=_as_number_or_text,
                            option=_SORTED | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(json_safe(value), sort_keys=True, default=str) + "\n").encode("ascii")


def dump_pretty(value: Any) -> bytes:
    """`value` indented by two, keys sorted, for the files people open (summary,
    config); unknown types as their `str`, as `dump_line`."""
    try:
        return orjson.dumps(value, default=_as_number_or_text,
                            option=_SORTED | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        text = json.dumps(json_safe(value), indent=2, sort_keys=True, default=str)
        return (text + "\n").encode("ascii")


def decode_line(raw: bytes | bytearray | str) -> Any:
    """One line of a JSON-lines file (or a whole JSON file) read back: `json.loads`,
    which keeps long integers exact (orjson would read them as floats)."""
    return json.loads(raw)
