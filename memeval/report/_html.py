"""The template environment and the one safe way to put data into a page.

Templates autoescape every variable. Data for the page's script goes into a
`<script type="application/json">` block, where the only danger is text that closes
the block or opens a comment (`</script>`, `<!--`); escaping `<`, `>` and `&` as
JSON unicode escapes rules that out while `JSON.parse` still reads the same text.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import math
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from memeval.jsonenc import json_safe, refuse

# Forbids every fetch: no network, no frames, no forms, no base URL. Inline style and
# script are the page's own; data: images are the only images allowed.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'")

_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


# Bidirectional controls reorder text on screen: a name with U+202E can pose as
# another. Every string the page shows has them replaced by a visible marker.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_bidi(value: Any) -> Any:
    """Strings (also inside lists and dicts) with bidi controls shown as `⟨U+202E⟩`."""
    if isinstance(value, str):
        return _BIDI.sub(lambda m: f"⟨U+{ord(m.group(0)):04X}⟩", value) \
            if _BIDI.search(value) else value
    if isinstance(value, dict):
        return {visible_bidi(k): visible_bidi(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_bidi(v) for v in value]
    return value


def script_json(data: Any) -> Markup:
    """`data` as JSON that is safe inside a `<script type="application/json">` block."""
    text = _page_json(data)
    for raw, escaped in _JSON_ESCAPES:  # str.replace: much faster than translate on MBs
        text = text.replace(raw, escaped)
    return Markup(text)


def _page_json(data: Any) -> str:
    return json.dumps(visible_bidi(json_safe(data)), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False, default=str)


def pack_json(data: Any) -> Markup:
    """`data` as `{"gz": "<base64 of gzipped JSON>"}`, for a `<script
    type="application/json">` block the page decompresses itself (`M.readPacked`).

    Turn data is highly repetitive (the same keys, verdicts and numbers in every
    view), so it packs about tenfold: what keeps a LoCoMo-sized report under 10 MB.
    Base64 has no character that could close the block. The JSON is encoded and
    compressed piece by piece, never held whole; bidi controls are made visible in
    the encoded text (they can only occur inside its strings), and data holding
    numpy values takes the slower path through `json_safe`. `mtime=0` keeps the page
    byte-identical for identical data.
    """
    buffer = io.BytesIO()
    try:
        _gzip_json(data, buffer)
    except (TypeError, ValueError):  # numpy (or NaN the stdlib met): clean a copy first
        buffer = io.BytesIO()
        _gzip_json(json_safe(data), buffer)
    return Markup(json.dumps({"gz": base64.b64encode(buffer.getvalue()).decode("ascii")}))


def _gzip_json(data: Any, buffer: io.BytesIO) -> None:
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as out:
        pending: list[bytes] = []
        size = 0
        for chunk in _pieces(data):
            pending.append(chunk)
            size += len(chunk)
            if size > 1 << 16:
                out.write(_visible_bidi_utf8(b"".join(pending)))
                pending, size = [], 0
        out.write(_visible_bidi_utf8(b"".join(pending)))


# `_BIDI` in UTF-8: a lead byte never continues another character, so a match is
# always a whole character. Looked for one literal prefix at a time (a fast scan
# each; the alternation is tried at every byte, seven times slower on a page's data).
_BIDI_UTF8_PARTS = (rb"\xe2\x80[\x8e\x8f\xaa-\xae]", rb"\xe2\x81[\xa6-\xa9]", rb"\xd8\x9c")
_BIDI_UTF8_SEARCHES = tuple(re.compile(part).search for part in _BIDI_UTF8_PARTS)
_BIDI_UTF8 = re.compile(b"|".join(_BIDI_UTF8_PARTS))


def _visible_bidi_utf8(data: bytes) -> bytes:
    """`visible_bidi` of UTF-8 text."""
    if not any(search(data) for search in _BIDI_UTF8_SEARCHES):
        return data
    return _BIDI_UTF8.sub(lambda m: f"⟨U+{ord(m.group(0).decode()):04X}⟩".encode(), data)


# ASCII-only: a lone surrogate orjson refuses goes as its escape, which the page's
# JSON.parse reads as the same text.
_STDLIB = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def _encode(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON: orjson's, NaN as null (what `json_safe` makes of
    it); what orjson refuses (a long integer, a key that is not text) the stdlib
    writes, raising what it raises (numpy, NaN) for `pack_json` to clean."""
    try:
        return orjson.dumps(value, default=refuse)
    except TypeError:  # escaped, bidi controls would pass the scan of the text: mark them
        return _STDLIB.encode(visible_bidi(value)).encode("ascii")


def _pieces(value: Any, depth: int = 2) -> Iterator[bytes]:
    """`_encode(value)` in pieces: each value below the top `depth` levels of
    containers is encoded in one call, so a report's payload (a dict of tables) goes
    a turn view (a few KB) at a time and the whole is never held at once."""
    if depth and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        yield b"{"
        for i, (key, item) in enumerate(value.items()):
            yield (b"," if i else b"") + _encode(key) + b":"
            yield from _pieces(item, depth - 1)
        yield b"}"
    elif depth and isinstance(value, list | tuple):
        yield b"["
        for i, item in enumerate(value):
            if i:
                yield b","
            yield from _pieces(item, depth - 1)
        yield b"]"
    else:
        yield _encode(value)


def unpack_json(block: str) -> Any:
    """The data of a block written by `pack_json` (or by `script_json`): for tests and
    tools that read a report."""
    data = json.loads(block)
    if isinstance(data, dict) and set(data) == {"gz"}:
        return json.loads(gzip.decompress(base64.b64decode(data["gz"])).decode("utf-8"))
    return data


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table cell; undefined values show as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_ci(row: dict[str, Any], metric: str, digits: int = 3) -> str:
    low, high = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
    if low is None or high is None or any(
            isinstance(x, float) and math.isnan(x) for x in (low, high)):
        return ""
    return f"[{low:.{min(digits, 2)}f}, {high:.{min(digits, 2)}f}]"


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("memeval.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("j2", "html"), default=True),
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        finalize=visible_bidi,
    )
    env.filters["fmt"] = fmt
    env.filters["script_json"] = script_json
    env.filters["pack_json"] = pack_json
    env.globals["fmt_ci"] = fmt_ci
    env.globals["CSP"] = CSP
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
