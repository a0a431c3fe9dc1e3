"""JavaScript string semantics that the system under test relies on.

Claude Code measures strings in UTF-16 code units and trims with JavaScript's
whitespace set; Python's `len()`, `str.strip()` and `\\s` disagree on both, so every
caller goes through these helpers.
"""

from __future__ import annotations

# ECMAScript WhiteSpace + LineTerminator: what `trim()` removes and `\s` matches.
# Unlike Python it includes U+FEFF and excludes U+0085 and U+001C..U+001F.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# A regex character class equal to JavaScript's `\s`.
JS_SPACE_CLASS = (
    "[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
)


def utf16_len(text: str) -> int:
    """Length as JavaScript's `String.prototype.length` reports it (UTF-16 code units)."""
    # Characters above U+FFFF take two units; lone surrogates (possible after a
    # JS-style slice) take one, like any BMP character. Encoding runs in C, where a
    # loop over the characters was the hottest line of a scan.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(text: str, start: int, end: int | None = None) -> str:
    """`text.slice(start, end)` with JavaScript's UTF-16 indices.

    A cut through a surrogate pair leaves a lone surrogate, as it does in JavaScript.
    """
    units = text.encode("utf-16-le", "surrogatepass")
    lo = 2 * start
    hi = len(units) if end is None else 2 * end
    return units[lo:hi].decode("utf-16-le", "surrogatepass")


def utf16_last_index_of(text: str, needle: str, from_index: int) -> int:
    """`text.lastIndexOf(needle, fromIndex)` for a one-unit BMP needle, in UTF-16 units."""
    prefix = utf16_slice(text, 0, from_index + 1)
    idx = prefix.rfind(needle)
    if idx < 0:
        return -1
    return utf16_len(prefix[:idx])


def js_trim(text: str) -> str:
    """`String.prototype.trim()`."""
    return text.strip(JS_WHITESPACE)


def js_is_space(ch: str) -> bool:
    """Whether JavaScript's `\\s` matches the character."""
    return ch in JS_WHITESPACE


def utf8_len(text: str) -> int:
    """`Buffer.byteLength(text, 'utf8')`: a lone surrogate counts 3 bytes (as U+FFFD)."""
    return len(text.encode("utf-8", "surrogatepass"))
