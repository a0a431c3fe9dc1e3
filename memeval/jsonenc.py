"""JSON encoders built once and reused, for the encodes a run makes per turn.

`json.dumps` builds a new encoder on every call: with `sort_keys` or `separators` that
is about half the cost of encoding a small mapping, and a run hashes and writes dozens
of such mappings a turn. The text is exactly what `json.dumps` gives for the same
options (a test holds them together); only circular references go unchecked (a
RecursionError rather than json's ValueError), which rows and payloads cannot have.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _std
from typing import Any


def _refuse(value: Any) -> Any:
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
    encode_c = make(None, default or _refuse, string, None, key_separator, item_separator,
                    sort_keys, False, True)

    def encode(value: Any) -> str:
        if isinstance(value, str):  # the C encoder takes containers and scalars alike,
            return string(value)  # but a bare string is quicker this way
        return "".join(encode_c(value, 0))

    return encode


canonical_json = encoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""One spelling per JSON value: sorted keys, no spaces, UTF-8 kept. What payload
hashes and model-request keys are taken of."""


_scan_once = json.JSONDecoder().scan_once


def decode_line(raw: bytes | bytearray | str) -> Any:
    """`json.loads(raw)` for one line of a JSON-lines file, a third of its cost on the
    lines a run writes: the C scanner is called directly, skipping the encoding sniff
    and the wrapper calls. Anything it does not take cleanly (leading space, trailing
    data, invalid JSON) goes to `json.loads`, so values and errors are json's own."""
    try:
        text = raw.decode() if isinstance(raw, bytes | bytearray) else raw
        value, end = _scan_once(text, 0)
    except (StopIteration, ValueError):  # not UTF-8 (json.loads also reads UTF-16 and
        return json.loads(raw)  # UTF-32), or not JSON: json's own answer or error
    if end != len(text) and text[end:].strip(" \t\n\r"):  # JSON's whitespace only
        return json.loads(raw)
    return value
