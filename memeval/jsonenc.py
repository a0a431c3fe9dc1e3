"""The JSON a run writes and reads dozens of times a turn, at C speed.

Three kinds of text. Model-request keys (the response cache's) must never change
spelling, so `canonical_json` is exactly `json.dumps` with its options, from an
encoder built once and reused (a test holds them together). Payload addresses and
memo keys are `canonical_key`, orjson's sorted text: one spelling per value within
a version. Stored lines (`results.jsonl`, `payloads.jsonl`, `summary.json`) only have
to read back the same, so they are written and read with orjson, several times
faster; whatever orjson refuses or could misread falls back to the stdlib, so values
and errors stay json's. As everywhere in memeval's files, a non-finite number is
stored as null: JSON has no NaN, and tools other than Python's reject the `NaN` token.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json import encoder as _std
from typing import Any

import orjson


def refuse(value: Any) -> Any:
    """The `default` of an encoder that takes JSON's own types only: json's error."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encoder(*, sort_keys: bool = False, ensure_ascii: bool = True,
            separators: tuple[str, str] = (", ", ": "),
            default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """`lambda value: json.dumps(value, **options)` for these options, built once."""
    item_separator, key_separator = separators
    make = getattr(_std, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        slow = json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                                separators=separators, default=default)
        return slow.encode
    string = _std.encode_basestring_ascii if ensure_ascii else _std.encode_basestring
    encode_c = make(None, default or refuse, string, None, key_separator, item_separator,
                    sort_keys, False, True)

    def encode(value: Any) -> str:
        if isinstance(value, str):  # the C encoder takes containers and scalars alike,
            return string(value)  # but a bare string is quicker this way
        return "".join(encode_c(value, 0))

    return encode


canonical_json = encoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
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
    """What `json.dumps(default=str)` writes for what orjson hands back: a float
    subclass (numpy's) as its number, a tuple subclass (a NamedTuple) as its list,
    anything else as its `str`."""
    if isinstance(value, float):
        return float(value)
    return list(value) if isinstance(value, tuple) else str(value)


# For the values orjson refuses. ASCII-only, so a lone surrogate (a file name that is
# not UTF-8, as the OS hands it over; a model's escaped `\ud800`) is written as its
# escape, which reads back as the same text, and the line stays valid UTF-8.
_stdlib_line = encoder(sort_keys=True, default=str)


def _finite(value: Any) -> Any:
    """`value` with non-finite floats as None, as orjson writes them: for the stdlib,
    which would write `NaN` (the rare values orjson refuses)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def dump_line(value: Any) -> bytes:
    """`value` as one line of a JSON-lines file, newline included: compact, sorted
    keys, UTF-8, unknown types as their `str`. What orjson refuses (an integer past
    64 bits, a key that is not text) is written by the stdlib instead."""
    try:
        return orjson.dumps(value, default=_as_number_or_text,
                            option=_SORTED | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (_stdlib_line(_finite(value)) + "\n").encode("ascii")


def dump_pretty(value: Any) -> bytes:
    """`value` indented by two, keys sorted, for the files people open (summary,
    config); unknown types as their `str`, as `dump_line`."""
    try:
        return orjson.dumps(value, default=_as_number_or_text,
                            option=_SORTED | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        text = json.dumps(_finite(value), indent=2, sort_keys=True, default=str)
        return (text + "\n").encode("ascii")


# orjson reads an integer past 64 bits as a float, silently; json keeps it exact. A
# line where 19 digits follow what may start a number (`[`, `,`, `:`, `-`, white space,
# the line's start) may hold one, and goes to json. Digits inside strings rarely
# match (the hex of hashes follows a letter or a quote): when they do, only slower.
_NUMBER_MARKS = bytes.maketrans(b"0123456789[,:- \t\r\n", b"0" * 10 + b"|" * 8)
_LONG_INTEGER = b"|" + b"0" * 19


def _may_hold_long_integer(raw: bytes | bytearray) -> bool:
    marked = raw.translate(_NUMBER_MARKS)
    return _LONG_INTEGER in marked or marked.startswith(_LONG_INTEGER[1:])


def decode_line(raw: bytes | bytearray | str) -> Any:
    """`json.loads(raw)` for one line of a JSON-lines file, at orjson's speed. Anything
    orjson refuses (NaN, lone surrogates, UTF-16, a byte-order mark, invalid JSON)
    or might read otherwise (long integers) goes to `json.loads`, so values and errors
    are json's own; only nesting between json's recursion limit and orjson's (about
    1 000 to 1 024 levels) reads here where json raises RecursionError."""
    if isinstance(raw, str) or _may_hold_long_integer(raw):
        return json.loads(raw)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
