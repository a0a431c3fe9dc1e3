"""YAML as the JavaScript `yaml` package (2.x, YAML 1.2 core schema) reads frontmatter.

ruamel.yaml does the tokenizing (it speaks YAML 1.2); we build values from its events
ourselves, because the rules that decide what a description becomes differ from
every Python loader: core-schema scalars only (`yes`, `2024-01-01`, `012` stay what
1.2 says), numbers as JavaScript doubles, a duplicate key is an error, more than one
document is an error, and mappings turn into plain string-keyed objects.
"""

from __future__ import annotations

import base64
import io
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml import events as ev
from ruamel.yaml.error import YAMLError as _RuamelError

from memeval.errors import MemevalError
from memeval.memdir._ruamel_scanner import TabTolerantScanner
from memeval.memdir.jsvalue import JsDate, JsMap, JsSet


class YamlError(MemevalError):
    """The frontmatter text is not YAML the system would accept."""


_NULL = re.compile(r"(?:~|[Nn]ull|NULL)?")
_BOOL = re.compile(r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE)")
_INT_OCT = re.compile(r"0o[0-7]+")
_INT = re.compile(r"[-+]?[0-9]+")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT_NAN = re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)")
_FLOAT_EXP = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)")

_TAG = "tag:yaml.org,2002:"

# ruamel reads some characters differently from the JavaScript parser: it breaks lines
# at NEL, LS, PS and a lone CR (YAML 1.2 and `yaml` 2.x break only at LF and CRLF), and
# it rejects C0/C1 controls and noncharacters that `yaml` keeps as content. They are
# swapped for stand-ins while ruamel reads, and swapped back in values. Stand-ins live
# in a whole plane the text does not use (16, 15, or an unassigned one), so the swap
# is always reversible.
_FOREIGN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]|\r(?!\n)"
)
_STANDIN_PLANES = (0x100000, 0xF0000, 0x40000, 0x50000, 0x60000, 0x70000)


def _hide(text: str) -> tuple[str, int]:
    used = {ord(ch) & ~0xFFFF for ch in text if ord(ch) > 0xFFFF}
    base = next((p for p in _STANDIN_PLANES if p not in used), 0x80000)
    return _FOREIGN.sub(lambda m: chr(base + ord(m.group(0))), text), base


def _show(text: str, base: int) -> str:
    return "".join(chr(ord(ch) - base) if base <= ord(ch) < base + 0x10000 else ch for ch in text)


def _as_js_number(value: float) -> int | float:
    """A JavaScript double, shown as an int when it is integral (as JSON prints it)."""
    if (
        math.isfinite(value)
        and value == int(value)
        and not (value == 0 and math.copysign(1, value) < 0)
    ):
        return int(value)
    return value


def _int_from(text: str, base: int) -> int | float:
    try:
        return _as_js_number(float(int(text, base)))
    except OverflowError:
        return math.inf if not text.startswith("-") else -math.inf


def resolve_plain(text: str) -> Any:
    """The core-schema value of an untagged plain scalar."""
    if _NULL.fullmatch(text):
        return None
    if _BOOL.fullmatch(text):
        return text[0] in "tT"
    if _INT_OCT.fullmatch(text):
        return _int_from(text[2:], 8)
    if _INT.fullmatch(text):
        value = _int_from(text, 10)
        if value == 0 and text.startswith("-"):
            return -0.0
        return value
    if _INT_HEX.fullmatch(text):
        return _int_from(text[2:], 16)
    if _FLOAT_NAN.fullmatch(text):
        if text[-3:].lower() == "nan":
            return math.nan
        return -math.inf if text[0] == "-" else math.inf
    if _FLOAT_EXP.fullmatch(text) or _FLOAT.fullmatch(text):
        return _as_js_number(float(text))
    return text


_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:(?:t|T|[ \t]+)([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2}(\.[0-9]+)?)"
    r"(?:[ \t]*(Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?"
)


def _timestamp(text: str) -> JsDate:
    """`!!timestamp` as `yaml` resolves it (Date.UTC, then the zone offset)."""
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        raise YamlError(f"!!timestamp expects a date, starting with yyyy-mm-dd: {text!r}")
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    hour, minute = int(m[4] or 0), int(m[5] or 0)
    second = float(m[6] or 0)
    millis = int((m[7] + "00")[1:4]) if m[7] else 0
    # Date.UTC lets fields overflow into the next unit: count from the month's first day.
    months = year * 12 + (month - 1)
    y, mo = divmod(months, 12)
    try:
        first = datetime(y, mo + 1, 1, tzinfo=UTC)
    except ValueError:
        return JsDate(math.nan)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    ms = (first - epoch) // timedelta(milliseconds=1)
    ms += (day - 1) * 86_400_000 + hour * 3_600_000 + minute * 60_000
    ms += int(second) * 1000 + millis
    zone = m[8]
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        parts = [int(p) for p in zone[1:].split(":")]
        minutes = parts[0] * 60 + parts[1] if len(parts) > 1 else parts[0]
        # yaml's quirk: a sexagesimal value under 30 is taken as hours.
        if minutes < 30:
            minutes *= 60
        ms -= sign * minutes * 60_000
    return JsDate(float(ms))


def _resolve_tagged(tag: str, text: str) -> Any:
    """A scalar with an explicit tag; unknown tags fall back to the string."""
    if tag in ("!", _TAG + "str"):
        return text
    tests = {
        _TAG + "null": (_NULL,),
        _TAG + "bool": (_BOOL,),
        _TAG + "int": (_INT_OCT, _INT, _INT_HEX),
        _TAG + "float": (_FLOAT_NAN, _FLOAT_EXP, _FLOAT),
    }.get(tag)
    if tests is None:
        if tag == _TAG + "timestamp":
            return _timestamp(text)
        if tag == _TAG + "binary":
            # Node decodes `!!binary` into a Buffer; base64 decoding there is lenient.
            cleaned = re.sub(r"[^A-Za-z0-9+/]", "", text)
            return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))
        return text
    if any(t.fullmatch(text) for t in tests):
        return resolve_plain(text)
    # `yaml` only warns when a core tag does not fit its value, and keeps the string.
    return text


def _key_string(key: Any) -> str:
    """How a mapping key becomes a JavaScript object property name."""
    from memeval.memdir.jsvalue import js_string

    if key is None:
        return ""
    if isinstance(key, dict):
        return "[object Object]"
    return js_string(key)


def _key_identity(key: Any) -> tuple[str, Any]:
    """What the `yaml` package compares when it rejects duplicate keys."""
    if isinstance(key, float) and math.isnan(key):
        return ("nan", None)
    if isinstance(key, list | dict):
        return ("obj", id(key))
    return (type(key).__name__ if not isinstance(key, int | float) else "num", key)


def parse_yaml(text: str) -> Any:
    """Parse one YAML document the way `yaml.parse` does with default options.

    Raises:
        YamlError: on a syntax error, a duplicate key, or more than one document.
    """
    try:
        return _parse_once(text)
    except YamlError:
        rewritten = _split_flow_then_colon(text)
        if rewritten == text:
            raise
    return _parse_once(rewritten)


def _parse_once(text: str) -> Any:
    try:
        return _parse_events(text)
    except YamlError:
        raise
    except (RecursionError, IndexError, KeyError, AttributeError, TypeError, ValueError) as exc:
        # A parser corner we did not foresee must cost one file its frontmatter, not
        # the scan: report it as invalid YAML.
        raise YamlError(f"invalid YAML ({type(exc).__name__}: {exc})") from exc


def retries_rewritten(text: str) -> bool:
    """Whether `parse_yaml`, when `text` fails, retries it rewritten (so a failure of
    `text` alone does not settle the result)."""
    if _FLOW_THEN_COLON.search(text) is None:
        return False  # only a closed flow collection followed by `:` is ever rewritten
    return _split_flow_then_colon(text) != text


_FLOW_THEN_COLON = re.compile(r"[\]}][ \t]*:")


# `key: [a, b]: c` — `yaml` 2.x reads the flow collection as the value and `: c` as a
# further pair of the same mapping with a null key; ruamel rejects the line.
_FLOW_VALUE_LINE = re.compile(r"([ ]*)([^\s#\[\]{}'\"][^:#]*?):[ \t]+([\[{].*)")


def _split_flow_then_colon(text: str) -> str:
    out: list[str] = []
    for line in text.split("\n"):
        m = _FLOW_VALUE_LINE.fullmatch(line)
        end = _flow_end(m.group(3)) if m else -1
        if m and end > 0:
            tail = m.group(3)[end:]
            after = re.fullmatch(r"[ \t]*:(?:[ \t]+(.*))?", tail)
            if after is not None:
                indent, key, flow = m.group(1), m.group(2), m.group(3)[:end]
                out.append(f"{indent}{key}: {flow}")
                out.append(f"{indent}~: {after.group(1) or ''}".rstrip())
                continue
        out.append(line)
    return "\n".join(out)


def _flow_end(text: str) -> int:
    """Index just past the flow collection opening `text`, or -1 if it does not close."""
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


# A collection's children, as `yaml` counts aliases over its document nodes: a scalar,
# an alias (`("*", anchor)`), or a nested collection (a tuple of its children).
_Child = Any
_SCALAR = "s"
MAX_ALIAS_COUNT = 100  # `yaml` 2.x's default `maxAliasCount`
MAX_FLOW_DEPTH = 1000  # deeper flow nesting costs the ruamel scanner quadratic time


class _AliasBudget:
    """`yaml`'s guard against alias expansion attacks (`Alias.toJS`): each resolution
    of an anchor counts, and once `count × aliasCount` of an anchor passes 100 the
    document is refused ("Excessive alias count")."""

    def __init__(self) -> None:
        self.nodes: dict[str, _Child] = {}
        self.count: dict[str, int] = {}
        self.alias_count: dict[str, int] = {}

    def anchored(self, anchor: str, node: _Child) -> None:
        # A repeated anchor name starts afresh, as a new source node.
        self.nodes[anchor] = node
        self.count[anchor] = 0
        self.alias_count[anchor] = 0

    def _alias_count(self, node: _Child) -> int:
        if node == _SCALAR:
            return 1
        if isinstance(node, tuple) and len(node) == 2 and node[0] == "*":
            source = node[1]
            return self.count.get(source, 0) * self.alias_count.get(source, 0)
        best = 0
        for child in node:
            best = max(best, self._alias_count(child))
        return best

    def resolve(self, anchor: str) -> None:
        self.count[anchor] += 1
        if self.alias_count[anchor] == 0:
            self.alias_count[anchor] = self._alias_count(self.nodes[anchor])
        if self.count[anchor] * self.alias_count[anchor] > MAX_ALIAS_COUNT:
            raise YamlError("Excessive alias count indicates a resource exhaustion attack")


def _flow_depth(text: str) -> int:
    """Deepest run of unclosed `[`/`{`, quotes ignored: an upper bound, cheap to take."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _parse_events(text: str) -> Any:
    if _flow_depth(text) > MAX_FLOW_DEPTH:
        # The JavaScript parser reads such nesting in linear time; ruamel would take
        # minutes, so past this depth the file counts as invalid YAML (memeval's limit).
        raise YamlError(f"flow collections nested deeper than {MAX_FLOW_DEPTH}")
    if not text.endswith("\n"):
        # `yaml` ends a block scalar at the end of input as if a line break followed
        # (`|` keeps its final newline); ruamel does not, unless one is there.
        text += "\n"
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Scanner = TabTolerantScanner
    try:
        hidden, base = _hide(text)
        events = list(yaml.parse(io.StringIO(hidden)))
    except _RuamelError as exc:
        raise YamlError(f"invalid YAML: {exc}") from exc
    except (ValueError, TypeError) as exc:  # ruamel raises these on a few odd inputs
        raise YamlError(f"invalid YAML: {exc}") from exc
    docs = sum(1 for e in events if isinstance(e, ev.DocumentStartEvent))
    if docs > 1:
        raise YamlError("more than one YAML document")
    anchors: dict[str, Any] = {}
    stack: list[Any] = []
    # For mappings: [dict, pending_key, seen_key_identities]
    result: list[Any] = []
    budget = _AliasBudget()

    def add(value: Any, anchor: str | None, child: _Child = _SCALAR) -> None:
        if anchor:
            anchors[anchor] = value
            budget.anchored(anchor, child)
        if stack:
            stack[-1][-1].append(child)
        if not stack:
            result.append(value)
            return
        top = stack[-1]
        if isinstance(top, list) and top and top[0] == "seq":
            top[1].append(value)
            return
        frame = top
        if frame[2] is _NO_KEY:
            ident = _key_identity(value)
            if ident in frame[3]:
                raise YamlError(f"duplicate key: {_key_string(value)}")
            frame[3].add(ident)
            frame[2] = value
        else:
            frame[1][_key_string(frame[2])] = value
            frame[2] = _NO_KEY

    for event in events:
        if isinstance(event, ev.ScalarEvent):
            implicit_plain = event.implicit[0] if event.implicit else False
            tag = str(event.tag) if event.tag is not None else None
            if tag == "!":
                value = event.value
            elif event.style is None and (tag is None or implicit_plain):
                value = resolve_plain(event.value)
            elif tag is not None and not _is_implicit_tag(event):
                value = _resolve_tagged(_expand_tag(tag), event.value)
            else:
                value = event.value
            add(value, event.anchor)
        elif isinstance(event, ev.SequenceStartEvent):
            seq: list[Any] = []
            if _expand_tag(str(event.tag or "")) == _TAG + "omap":
                seq = _OmapList()
            if event.anchor:
                anchors[event.anchor] = seq
            stack.append(["seq", seq, event.anchor, []])
        elif isinstance(event, ev.SequenceEndEvent):
            frame = stack.pop()
            value = frame[1]
            if isinstance(value, _OmapList):
                # `!!omap` on a sequence of single-pair mappings becomes a JavaScript Map.
                omap = JsMap()
                for item in value:
                    if isinstance(item, dict):
                        omap.update(item)
                value = omap
            add(value, None, tuple(frame[-1]))
            if frame[2]:
                anchors[frame[2]] = value
                budget.anchored(frame[2], tuple(frame[-1]))
        elif isinstance(event, ev.MappingStartEvent):
            mapping: dict[str, Any] = {}
            if _expand_tag(str(event.tag or "")) == _TAG + "set":
                mapping = JsSet()
            if event.anchor:
                anchors[event.anchor] = mapping
            stack.append(["map", mapping, _NO_KEY, set(), event.anchor, []])
        elif isinstance(event, ev.MappingEndEvent):
            frame = stack.pop()
            add(frame[1], None, tuple(frame[-1]))
            if frame[4]:
                budget.anchored(frame[4], tuple(frame[-1]))
        elif isinstance(event, ev.AliasEvent):
            if event.anchor not in anchors:
                raise YamlError(f"unknown alias: {event.anchor}")
            budget.resolve(event.anchor)
            add(anchors[event.anchor], None, ("*", event.anchor))
    if not result:
        return None
    return _restore_breaks(result[0], base)


def _restore_breaks(value: Any, base: int) -> Any:
    if isinstance(value, str):
        return _show(value, base)
    if isinstance(value, list):
        return [_restore_breaks(v, base) for v in value]
    if isinstance(value, dict):
        restored = {_show(k, base): _restore_breaks(v, base) for k, v in value.items()}
        return type(value)(restored) if type(value) is not dict else restored
    return value


class _OmapList(list):  # type: ignore[type-arg]
    """Items of a `!!omap` sequence until it ends."""


class _NoKey:
    pass


_NO_KEY = _NoKey()


def _is_implicit_tag(event: ev.ScalarEvent) -> bool:
    return bool(event.implicit and event.implicit[0])


def _expand_tag(tag: str) -> str:
    if tag.startswith("!!"):
        return _TAG + tag[2:]
    return tag
