"""Frontmatter made only of `key: plain words` lines, read without a YAML parser.

Most memory files' frontmatter is a few lines like `description: run tests against
a real db`. For such text YAML 1.2 can only give a mapping of those very strings, so
the full parser (milliseconds a file) is skipped. Anything that might mean more —
quotes, a leading indicator, `#`, `: `, a tab, odd characters, a value that reads as
null or a boolean, a repeated key, indentation — is left to the parser.
"""

from __future__ import annotations

import re

from memeval.memdir.yaml12 import resolve_plain

# A key of a few ASCII word characters, `: `, then a value starting with a letter and
# ending without whitespace (plain scalars lose trailing blanks; we do not guess).
_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}): +([^\W\d_](?:.*\S)?)")
# What could end, comment or re-type a plain scalar, or that YAML reads differently.
_RISKY = re.compile(r"#|: |:\Z")
# A plain scalar starting with a letter resolves to something other than a string only
# as null or a boolean (`null`, `True`, ...); those are at most this long.
_LONGEST_NON_STRING = 5


def _plain_string(text: str) -> bool:
    """Whether YAML's core schema reads this letter-initial plain scalar as itself."""
    return len(text) > _LONGEST_NON_STRING or resolve_plain(text) == text


def simple_mapping(block: str) -> dict[str, str] | None:
    """The mapping YAML would read from `block`, or None when it is not that simple."""
    out: dict[str, str] = {}
    for line in block.split("\n"):
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, value = m.group(1), m.group(2)
        if (key in out or _RISKY.search(value) or not value.isprintable()
                or not _plain_string(value)
                or (key[0] != "_" and not _plain_string(key))):
            return None
        out[key] = value
    return out or None
