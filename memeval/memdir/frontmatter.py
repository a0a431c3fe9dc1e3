"""Frontmatter parsing with the system's own rules, as a python-frontmatter handler.

Where Claude Code differs from python-frontmatter's YAML handler: the block ends at
the first `---` anywhere (even mid-line), whitespace is JavaScript's, the YAML is
1.2 as the JavaScript `yaml` package reads it, a failed parse is retried once with
risky plain values quoted, and anything that is not a mapping is an empty mapping.
"""

from __future__ import annotations

import re
from typing import Any

from frontmatter.default_handlers import BaseHandler

from memeval.memdir.readfile import first_lines
from memeval.memdir.text import JS_SPACE_CLASS, JS_WHITESPACE
from memeval.memdir.yaml12 import YamlError, parse_yaml

# `^---\s*\n([\s\S]*?)---\s*\n?` with JavaScript's `\s`.
FRONTMATTER_RE = re.compile(rf"---{JS_SPACE_CLASS}*\n([\s\S]*?)---{JS_SPACE_CLASS}*\n?")
_JS_SPACES = re.compile(f"{JS_SPACE_CLASS}*")


def frontmatter_span(text: str) -> tuple[int, int] | None:
    """Where `FRONTMATTER_RE.match(text)` finds the block: (start, end) of group 1,
    found with `find` rather than the regex's lazy scan (a third of a scan's time)."""
    if text.startswith("---\n") and text[4:5] not in JS_WHITESPACE:
        newline = 3  # the usual opening line; the run of spaces is that one `\n`
    else:
        if not text.startswith("---"):
            return None
        run_end = _JS_SPACES.match(text, 3).end()
        # `\s*` is greedy: the opening line ends at the run's last `\n`.
        newline = text.rfind("\n", 3, run_end)
        if newline < 0:
            return None
    close = text.find("---", newline + 1)
    if close < 0:
        return None
    return newline + 1, close


# Top-level `key: value` lines the retry may quote (JS `.` excludes line terminators),
# found in the whole text at once: a line is what `split("\n")` gives, so the spaces
# after the colon (JavaScript's `\s`) may not run into the next line.
_SIMPLE_LINES_RE = re.compile(
    r"^([a-zA-Z_-]+):" + JS_SPACE_CLASS.replace("\\n", "") + r"+([^\n\r\u2028\u2029]+)$",
    re.MULTILINE)
# Characters that make a plain value risky in YAML, or a `: ` inside it.
_SPECIAL = r"[{}\[\]*&#!|>%@`]|: "
_SPECIAL_RE = re.compile(_SPECIAL)
# The lines of `_SIMPLE_LINES_RE` whose value holds one (a lookahead over the value):
# the only lines `_quote_line` may change, so the others cost no call.
_RISKY_LINES_RE = re.compile(
    _SIMPLE_LINES_RE.pattern.replace(
        "+([", rf"+(?=[^\n\r\u2028\u2029]*?(?:{_SPECIAL}))([", 1), re.MULTILINE)


def quote_problematic_values(text: str) -> str:
    """Double-quote plain `key: value` lines whose value YAML would misread."""
    return _RISKY_LINES_RE.sub(_quote_line, text)


def _quote_line(m: re.Match[str]) -> str:
    key, value = m.group(1, 2)
    quoted = (value.startswith('"') and value.endswith('"')) or (
        value.startswith("'") and value.endswith("'")
    )
    if not quoted and _SPECIAL_RE.search(value):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'{key}: "{escaped}"'
    return m.group(0)


def _as_mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class MemoryFrontmatterHandler(BaseHandler):  # type: ignore[misc]
    """python-frontmatter handler that follows Claude Code's boundary and retry rules."""

    FM_BOUNDARY = re.compile(r"^---", re.MULTILINE)
    START_DELIMITER = "---"
    END_DELIMITER = "---"

    def detect(self, text: str) -> bool:
        return frontmatter_span(text) is not None

    def split(self, text: str) -> tuple[str, str]:
        span = frontmatter_span(text)
        if span is None:
            raise ValueError("no frontmatter")
        start, close = span
        return text[start:close], text[_JS_SPACES.match(text, close + 3).end():]

    def load(self, fm: str, **kwargs: Any) -> dict[str, Any]:
        return load_mapping(fm)

    def export(self, metadata: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError("memeval only reads frontmatter")


def load_mapping(fm: str) -> dict[str, Any]:
    """The mapping a frontmatter block holds, with the system's retry and fallbacks."""
    first = _attempt(fm)
    if first is not _FAILED:
        return first
    quoted = quote_problematic_values(fm)
    if quoted == fm:
        return {}  # the retry would read the very same text
    second = _attempt(quoted)
    # Like the system: unparseable frontmatter is empty, the file stays a candidate.
    return {} if second is _FAILED else second


_FAILED: Any = object()


def _attempt(text: str) -> Any:
    """`_as_mapping(parse_yaml(text))`, or `_FAILED` where that raises `YamlError`."""
    try:
        return _as_mapping(parse_yaml(text))
    except YamlError:
        return _FAILED


HANDLER = MemoryFrontmatterHandler()


def frontmatter_of(text: str, *, max_lines: int | None = None) -> dict[str, Any]:
    """The frontmatter mapping of `text`'s first `max_lines` lines (all without a
    limit; `{}` without a leading `---` block).

    With `max_lines`, `text` is what `read_file_in_range` would have read lines from
    (BOM and `\\r` included), the whole file or any prefix holding that many lines.
    """
    block = frontmatter_block(text, max_lines=max_lines)
    return {} if block is None else load_mapping(block)


def frontmatter_block(text: str, *, max_lines: int | None = None) -> str | None:
    """The block `frontmatter_of(text, max_lines=...)` parses, or None where it
    gives `{}` without parsing (so a caller can decide when to parse)."""
    if max_lines is not None:
        if "\r" in text:
            text = first_lines(text, max_lines)
        else:
            if text.startswith("\ufeff"):
                text = text[1:]
            span = frontmatter_span(text)
            # The block is in the first lines if its closing `---` is.
            if span is None or text.count("\n", 0, span[1] + 3) >= max_lines:
                return None
            return text[span[0]:span[1]]
    span = frontmatter_span(text)
    return None if span is None else text[span[0]:span[1]]


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split `text` into (frontmatter mapping, content after the block).

    Text without a leading `---` block gives `({}, text)`.
    """
    # python-frontmatter's own `loads` strips the text first, which would accept a
    # block the system rejects (leading blank lines); so we drive the handler directly.
    try:
        fm, content = HANDLER.split(text)
    except ValueError:
        return {}, text
    return HANDLER.load(fm), content
