"""Frontmatter parsing with the system's own rules, as a python-frontmatter handler.

Where Claude Code differs from python-frontmatter's YAML handler: the block ends at
the first `---` anywhere (even mid-line), whitespace is JavaScript's, the YAML is
1.2 as the JavaScript `yaml` package reads it, a failed parse is retried once with
risky plain values quoted, and anything that is not a mapping is an empty mapping.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from frontmatter.default_handlers import BaseHandler

from memeval.memdir.simple_frontmatter import simple_mapping
from memeval.memdir.text import JS_SPACE_CLASS
from memeval.memdir.yaml12 import YamlError, parse_yaml

# `^---\s*\n([\s\S]*?)---\s*\n?` with JavaScript's `\s`.
FRONTMATTER_RE = re.compile(rf"---{JS_SPACE_CLASS}*\n([\s\S]*?)---{JS_SPACE_CLASS}*\n?")
# A top-level `key: value` line the retry may quote (JS `.` excludes line terminators).
_SIMPLE_LINE_RE = re.compile(rf"([a-zA-Z_-]+):{JS_SPACE_CLASS}+([^\n\r\u2028\u2029]+)")
# Characters that make a plain value risky in YAML, or a `: ` inside it.
_SPECIAL_RE = re.compile(r"[{}\[\]*&#!|>%@`]|: ")


def quote_problematic_values(text: str) -> str:
    """Double-quote plain `key: value` lines whose value YAML would misread."""
    out: list[str] = []
    for line in text.split("\n"):
        m = _SIMPLE_LINE_RE.fullmatch(line)
        if m:
            key, value = m.group(1), m.group(2)
            quoted = (value.startswith('"') and value.endswith('"')) or (
                value.startswith("'") and value.endswith("'")
            )
            if not quoted and _SPECIAL_RE.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


def _as_mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class MemoryFrontmatterHandler(BaseHandler):  # type: ignore[misc]
    """python-frontmatter handler that follows Claude Code's boundary and retry rules."""

    FM_BOUNDARY = re.compile(r"^---", re.MULTILINE)
    START_DELIMITER = "---"
    END_DELIMITER = "---"

    def detect(self, text: str) -> bool:
        return FRONTMATTER_RE.match(text) is not None

    def split(self, text: str) -> tuple[str, str]:
        m = FRONTMATTER_RE.match(text)
        if m is None:
            raise ValueError("no frontmatter")
        return m.group(1), text[m.end() :]

    def load(self, fm: str, **kwargs: Any) -> dict[str, Any]:
        # A copy: callers own their mapping, the cache keeps the pristine one (strings
        # are immutable, so a mapping of only strings needs no deep copy).
        mapping = _load_mapping(fm)
        if all(type(value) is str for value in mapping.values()):
            return dict(mapping)
        return copy.deepcopy(mapping)

    def export(self, metadata: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError("memeval only reads frontmatter")


@functools.lru_cache(maxsize=8192)
def _load_mapping(fm: str) -> dict[str, Any]:
    """The parse is a pure function of the block's text, and a session rescans the same
    files every turn: caching by text keeps repeated scans from re-running YAML."""
    simple = simple_mapping(fm)
    if simple is not None:  # plain `key: words` lines: the parser could only agree
        return simple
    try:
        return _as_mapping(parse_yaml(fm))
    except YamlError:
        pass
    try:
        return _as_mapping(parse_yaml(quote_problematic_values(fm)))
    except YamlError:
        # Like the system: unparseable frontmatter is empty, the file stays a candidate.
        return {}


HANDLER = MemoryFrontmatterHandler()


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
