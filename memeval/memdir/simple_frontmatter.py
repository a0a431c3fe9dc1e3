"""Frontmatter in the shapes people write, read without the full YAML parser.

The full parser (ruamel's pure-Python scanner plus our event builder) costs about a
millisecond a file, where listing, stat and reading a file cost about ten
microseconds (docs/performance.md, the scan section). Most frontmatter is a
handful of top-level `key: value` lines whose values take a few common shapes:
plain words (maybe folded over indented lines, maybe with a `# comment`), single-
or double-quoted strings on one line, one-line flow sequences and mappings of such
scalars, `|`/`>` block scalars, and block sequences of such scalars. For those the
value YAML 1.2 reads is certain, and so is the error for a few malformed lines
people write (`description: Note: x`, `[WIP] x`, `'it's x'`, a repeated key).

`read_block` answers only when it is sure, with the parser's mapping or
`YAML_ERROR`; anything else — tabs, odd characters, anchors, tags, multi-line
quotes or flows, nesting, explicit indentation, keys that read as non-strings — is
`None`, and the caller runs the parser. The property tests hold every answer
against `parse_yaml`.
"""

from __future__ import annotations

import re
from typing import Any

from memeval.memdir.yaml12 import resolve_plain, retries_rewritten

YAML_ERROR: Any = type("YamlErrorMark", (), {"__repr__": lambda _self: "YAML_ERROR"})()
"""The parser would raise `YamlError` on this block (a definite syntax error)."""

# A key of a few ASCII word characters; anything fancier goes to the parser.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SINGLE = re.compile(r"'((?:[^']|'')*)'")
# Escapes whose meaning is not in doubt; `\x`, `\u` and friends go to the parser.
_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", " ": " "}
_ESCAPE = re.compile(r"\\(.)")
# Characters that may not start a plain scalar in block context, or mean more there.
_PLAIN_START_BAD = frozenset("-?:,[]{}#&*!|>'\"%@` ")
# A plain scalar resolves to something other than itself only if it starts with one
# of these, or is one of the core schema's null and boolean words.
_MAYBE_NOT_STRING = frozenset("~-+.0123456789")
_NULL_OR_BOOL = frozenset({"null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
                           "FALSE"})
_ERROR_START = frozenset("@`%*")  # reserved indicators, a directive sign, an alias
_MEMORY_KEYS = frozenset({"name", "description", "type"})  # the spec's fields: valid keys


def _resolve(text: str) -> Any:
    """`resolve_plain`, without its regexes for the text it cannot change."""
    if text and text[0] not in _MAYBE_NOT_STRING and text not in _NULL_OR_BOOL:
        return text
    if text.isdigit() and text.isascii() and len(text) <= _EXACT_DIGITS:
        return int(text)  # a decimal a double holds exactly: the number itself
    return resolve_plain(text)


_EXACT_DIGITS = 15  # every decimal of up to 15 digits is exactly a JavaScript double
# A backslash before anything but the escapes `_ESCAPES` knows (or the second half of
# `\\`: then the block goes to the parser, which is only slower).
_UNKNOWN_ESCAPE = re.compile(r'\\[^\\"/nt ]|\\\Z')


def _escaped(m: re.Match[str]) -> str:
    return _ESCAPES[m.group(1)]


def _unescape(body: str) -> str | None:
    if "\\" not in body:
        return body
    if body.count("\\") == body.count('\\"'):
        # Only `\"` (what the retry's quoting writes): the body is a run of pairs, so
        # no backslash before one of these is itself escaped.
        return body.replace('\\"', '"')
    if _UNKNOWN_ESCAPE.search(body) is not None:
        return None
    return _ESCAPE.sub(_escaped, body)


def _tail(rest: str) -> Any:
    """What follows a complete value on its line: True if only blanks or a comment,
    YAML_ERROR if more content, None if unsure."""
    if not rest:
        return True
    stripped = rest.lstrip(" ")
    if not stripped:
        return True
    if stripped[0] == "#":
        return True if rest[0] == " " else None  # `"a"#b`: the parser's own error
    if stripped[0] == ":":
        return None  # maybe `[a]: b`, which the parser rewrites and retries
    return YAML_ERROR


def _quoted(value: str) -> tuple[Any, str] | None:
    """A one-line quoted scalar at the start of `value`: (string, rest of the line)."""
    if value[0] == '"':
        m = _DOUBLE.match(value)
        if m is None:
            return None
        text = _unescape(m.group(1))
        if text is None:
            return None
    else:
        m = _SINGLE.match(value)
        if m is None:
            return None
        text = m.group(1).replace("''", "'")
    return text, value[m.end():]


# One scalar of a one-line flow collection and what ends it: a double- or single-
# quoted string, or a plain scalar with no indicator anywhere and none leading.
_FLOW_SCALAR = re.compile(
    r' *(?:"((?:[^"\\]|\\.)*)"|\'((?:[^\']|\'\')*)\'|'
    r'([^\-?:,\[\]{}#&*!|>\'"%@`\s][^,\[\]{}#:\'"]*?)) *([,\]}]|: )')


# A flow scalar with no `,` `:` `#` or quote inside: a plain word, or a quoted one
# without escapes.
_FLOW_WORD = (r"""(?:[^\-?:,\[\]{}#&*!|>'"%@`\s][^,\[\]{}#:'"]*"""
              r"""|"[^"\\,:#\[\]{}]*" *|'[^',:#\[\]{}]*' *)""")
# A flow body of such scalars (the commonest), checked in one go: it splits at every
# `,`, and a mapping's pair at its one `:`.
_PLAIN_SEQ_BODY = re.compile(rf" *{_FLOW_WORD}(?:, *{_FLOW_WORD})*")
_PLAIN_MAP_BODY = re.compile(rf" *{_FLOW_WORD}: +{_FLOW_WORD}(?:, *{_FLOW_WORD}: +{_FLOW_WORD})*")


def _flow_word(word: str) -> Any:
    word = word.strip(" ")
    return word[1:-1] if word[0] == '"' or word[0] == "'" else _resolve(word)


def _plain_flow(value: str) -> tuple[Any, str] | None:
    """`_flow` for a body of plain scalars only; None for any other body."""
    end = value.find("]" if value[0] == "[" else "}")
    if end < 0:
        return None
    body = value[1:end]
    if value[0] == "[":
        if _PLAIN_SEQ_BODY.fullmatch(body) is None:
            return None
        items: list[Any] = []
        for item in body.split(","):
            word = item.strip(" ")
            first = word[0]
            # `_flow_word`, inline: the commonest item is a word that stays a string.
            if first == '"' or first == "'":
                items.append(word[1:-1])
            elif first not in _MAYBE_NOT_STRING and word not in _NULL_OR_BOOL:
                items.append(word)
            else:
                items.append(_resolve(word))
        return items, value[end + 1:]
    if _PLAIN_MAP_BODY.fullmatch(body) is None:
        return None
    mapping: dict[str, Any] = {}
    for pair in body.split(","):
        k, _, v = pair.partition(":")
        key = _flow_word(k)
        if type(key) is not str or key in mapping:
            return None
        mapping[key] = _flow_word(v)
    return mapping, value[end + 1:]


def _flow(value: str) -> tuple[Any, str] | None:
    """A one-line flow sequence or mapping of scalars: (value, rest of the line)."""
    got = _plain_flow(value)
    if got is not None:
        return got
    close = "]" if value[0] == "[" else "}"
    is_map = close == "}"
    items: list[Any] = []
    pos = 1
    if value[1:].lstrip(" ").startswith(close):
        pos = value.index(close, 1) + 1
        return ({} if is_map else []), value[pos:]
    while True:
        m = _FLOW_SCALAR.match(value, pos)
        if m is None:
            return None
        double, single, plain, end = m.groups()
        if double is not None:
            item = _unescape(double)
            if item is None:
                return None
        elif single is not None:
            item = single.replace("\'\'", "\'")
        else:
            item = _resolve(plain)
        items.append(item)
        pos = m.end()
        # A mapping alternates key `: ` value `,`; a sequence has only `,`.
        if (end == ": ") != (is_map and len(items) % 2 == 1):
            return None
        if end in "]}":
            if end != close:
                return None
            break
    if not is_map:
        return items, value[pos:]
    mapping: dict[str, Any] = {}
    for k, v in zip(items[::2], items[1::2], strict=True):
        if type(k) is not str or k in mapping:
            return None
        mapping[k] = v
    return mapping, value[pos:]


def _is_blank(line: str) -> bool:
    return not line or line.isspace()


def _plain_piece(text: str) -> bool:
    """Whether one line of a plain scalar holds nothing YAML reads as structure."""
    return ": " not in text and not text.endswith(":") and " #" not in text


def _block_scalar(header: str, lines: list[str], i: int) -> tuple[str, int] | None:
    """A `|`/`>` block scalar whose header is on line `i`: (value, next line)."""
    style = header[0]
    rest = header[1:]
    chomp = ""
    if rest[:1] in ("-", "+"):
        chomp, rest = rest[0], rest[1:]
    if rest and (rest[0] != " " or not (rest.isspace() or rest.lstrip(" ")[0] == "#")):
        return None
    n = len(lines)
    j = i + 1
    leading = 0
    while j < n and not lines[j]:
        leading += 1
        j += 1
    if j >= n:
        return None
    first = lines[j]
    indent = len(first) - len(first.lstrip(" "))
    if indent == 0:
        return None  # an empty block scalar: rare, left to the parser
    texts: list[str] = []
    while j < n:
        line = lines[j]
        if line:
            if line.isspace():
                return None  # a blank line holding spaces: its meaning needs care
            spaces = len(line) - len(line.lstrip(" "))
            if spaces == 0:
                break
            if spaces < indent:
                return None  # less indented but not at the margin
            if style == ">" and spaces > indent:
                return None  # more-indented lines fold differently
            line = line[indent:]
        texts.append(line)
        j += 1
    trailing = 0
    while texts and not texts[-1]:
        texts.pop()
        trailing += 1
    if style == "|":
        body = "\n".join(texts)
    else:
        parts: list[str] = []
        blanks = -1  # no line seen yet
        for text in texts:
            if not text:
                blanks += 1
                continue
            if blanks >= 0:
                parts.append("\n" * blanks if blanks else " ")
            parts.append(text)
            blanks = 0
        body = "".join(parts)
    body = "\n" * leading + body
    if chomp == "-":
        value = body
    elif chomp == "+":
        value = body + "\n" + "\n" * trailing
    else:
        value = body + "\n"
    return value, j


def _plain(value: str, lines: list[str], i: int) -> tuple[Any, int]:
    """A plain scalar starting `value` on line `i`, folded over indented lines:
    (value or YAML_ERROR or None, next line)."""
    hash_at = value.find(" #")
    text = value if hash_at < 0 else value[:hash_at]
    text = text.rstrip(" ")
    if not _plain_piece(text):
        return YAML_ERROR, i + 1  # `a: b` on one line: a mapping where none may start
    n = len(lines)
    j = i + 1
    if hash_at >= 0 or j >= n or not lines[j] or lines[j][0] != " ":
        if j < n and lines[j] and lines[j][0] == " " and not lines[j].isspace():
            return None, j
        return _resolve(text), j
    pieces = [text]
    blanks = 0
    while j < n:
        line = lines[j]
        if _is_blank(line):
            blanks += 1
            j += 1
            continue
        if line[0] != " ":
            break
        piece = line.strip(" ")
        if piece[0] in "#-?:" or not _plain_piece(piece):
            return None, j
        pieces.append("\n" * blanks if blanks else " ")
        pieces.append(piece)
        blanks = 0
        j += 1
    return _resolve("".join(pieces)), j


def _block_sequence(lines: list[str], i: int) -> tuple[list[Any], int] | None:
    """`- item` lines after a bare `key:` on line `i - 1`: (items, next line)."""
    first = lines[i]
    indent = len(first) - len(first.lstrip(" "))
    dash = " " * indent + "- "
    items: list[Any] = []
    n = len(lines)
    j = i
    while j < n:
        line = lines[j]
        if not line.startswith(dash):
            if not line or (line[0] != " " and line[0] != "-"):
                break  # a blank line, or the next key (or comment) at the margin
            return None
        item = line[len(dash):].lstrip(" ")
        if not item or (item[0] in _PLAIN_START_BAD and item[0] not in "\"'"):
            return None
        if item[0] in "\"'":
            got = _quoted(item)
            if got is None or _tail(got[1]) is not True:
                return None
            items.append(got[0])
        else:
            hash_at = item.find(" #")
            text = (item if hash_at < 0 else item[:hash_at]).rstrip(" ")
            if ": " in text or text[-1] == ":":  # not `_plain_piece(text)`: ` #` is cut
                return None
            if text[0] in _MAYBE_NOT_STRING or text in _NULL_OR_BOOL:
                items.append(_resolve(text))
            else:
                items.append(text)  # `_resolve(text)`, inline: a word stays a string
        j += 1
    return items, j


def read_block(block: str) -> Any:
    """The mapping `parse_yaml(block)` gives (as a mapping: `{}` for an empty
    document or a non-mapping), `YAML_ERROR` when it would raise, or None when not
    sure."""
    got = _read(block)
    if got is YAML_ERROR and retries_rewritten(block):
        return None  # the parser tries again with a rewritten text: let it
    return got


def _read(block: str) -> Any:
    if "\t" in block or "\r" in block or not block.replace("\n", "").isprintable():
        return None
    lines = block.split("\n")
    if not lines[-1]:
        lines.pop()
    out: dict[str, Any] = {}
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        i += 1  # from here on, `i` is the next line
        if not line or line[0] == "#":
            continue
        if line[0] == " ":
            if line.isspace():
                continue
            return None
        key, sep, value = line.partition(": ")
        if not sep:
            if line[-1] != ":":
                return None
            key = line[:-1]
        if key not in _MEMORY_KEYS and (key in _NULL_OR_BOOL or _KEY.fullmatch(key) is None):
            return None  # a key YAML reads as null or a boolean: left to the parser
        if key in out:
            return YAML_ERROR  # the parser refuses a repeated key
        value = value.lstrip(" ")
        if not value or value[0] == "#":
            if i < n and lines[i] and (lines[i][0] == " " or lines[i][0] == "-"):
                if lines[i].lstrip(" ").startswith("- "):
                    got_seq = _block_sequence(lines, i)
                    if got_seq is None:
                        return None
                    out[key], i = got_seq
                    continue
                if not lines[i].isspace():
                    return None
            out[key] = None
            continue
        first = value[0]
        if first not in _PLAIN_START_BAD and (i == n or lines[i][:1] != " "):
            # The commonest value: plain words on one line, maybe a comment after.
            hash_at = value.find(" #")
            text = (value if hash_at < 0 else value[:hash_at]).rstrip(" ")
            if ": " in text or text[-1] == ":":
                return YAML_ERROR  # `a: b` on one line: a mapping where none may start
            # `_resolve(text)`, inline (`first` starts `text` too: it is no space).
            out[key] = (text if first not in _MAYBE_NOT_STRING and text not in _NULL_OR_BOOL
                        else _resolve(text))
            continue
        if first == '"' or first == "'":
            end = value.find(first, 1)
            if end > 0 and value[end + 1:end + 2] != first and "\\" not in value[:end]:
                # No escape inside: the string is what the quotes hold.
                tail = _tail(value[end + 1:])
                if tail is not True:
                    return tail
                out[key] = value[1:end]
                continue
        if first in "\"'[{":  # a quoted string or a one-line flow, then only a comment
            got = _quoted(value) if first == '"' or first == "'" else _flow(value)
            if got is None:
                return None
            tail = _tail(got[1])
            if tail is not True:
                return tail
            out[key] = got[0]
        elif first == "|" or first == ">":
            got_block = _block_scalar(value, lines, i - 1)
            if got_block is None:
                return None
            out[key], i = got_block
        elif first in _ERROR_START:
            return YAML_ERROR
        elif first in _PLAIN_START_BAD and not (first == "-" and value[1:2] not in ("", " ")):
            return None  # `-1` is a plain scalar, `- x` a sequence where none may start
        else:
            plain, i = _plain(value, lines, i - 1)
            if plain is None or plain is YAML_ERROR:
                return plain
            out[key] = plain
    return out


def simple_mapping(block: str) -> dict[str, Any] | None:
    """The mapping YAML reads from `block`, or None when `read_block` is not sure or
    the block is not valid YAML."""
    got = read_block(block)
    return None if got is YAML_ERROR else got
