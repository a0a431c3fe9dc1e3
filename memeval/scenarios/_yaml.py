"""YAML with line numbers, read with YAML 1.2 scalar rules.

Errors must name the line of the offending value, so the loader works on the node
tree (libyaml's composer, fast enough for 10 000-file scenarios) instead of plain
Python objects. Scalars are resolved by the YAML 1.2 core schema rather than
PyYAML's 1.1 rules, so `no` stays a string, `010` stays ten and a date stays text
until the loader parses it on purpose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # libyaml is ~10x faster on large generated scenarios; pure Python also works
    from yaml._yaml import CParser

    class _Composer(CParser):  # type: ignore[misc, valid-type]
        """libyaml's composer without PyYAML's tag resolution: scalars are resolved
        below by YAML 1.2 rules and tags are never read, while guessing each node's
        YAML 1.1 tag is a third of composing."""

        def resolve(self, kind: type, value: Any, implicit: Any) -> str:
            return ""

        def descend_resolver(self, parent: Any, index: Any) -> None:
            return None

        def ascend_resolver(self) -> None:
            return None

    _Loader: type = _Composer
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True,
         "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")
MAX_DEPTH = 64  # scenarios nest about 6 deep; more is a mistake or an attack
MAX_ALIAS_EXPANSION = 1_000_000  # characters (and values) aliases may add; a scenario
#                                  needs few aliases, and a bomb of them multiplies rows


@dataclass(slots=True)
class Node:
    """One YAML value and the 1-based line it starts on.

    `value` is a `dict[str, Node]` for mappings (keys as written), a `list[Node]` for
    sequences, else a Python scalar. `key_lines` gives each mapping key's line.
    """

    value: Any
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_seq(self) -> bool:
        return isinstance(self.value, list)


class YamlSyntaxError(Exception):
    """The text is not YAML (or repeats a key); carries the 1-based line."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _scalar(node: yaml.ScalarNode) -> Any:
    text = node.value
    if node.style:  # quoted or block scalars are always strings
        return text
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT10.match(text):
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


class _Converter:
    """Nodes to `Node`s, each YAML node once.

    Aliases point at an already composed node; converting it once and sharing the
    result keeps alias bombs (`&a [*b, *b, ...]` nested) linear, and a node met again
    while it is still being converted is a recursive alias, which a scenario never needs.
    """

    def __init__(self) -> None:
        self.done: dict[int, Node] = {}
        self.active: set[int] = set()
        self.weight: dict[int, int] = {}  # by YAML node: its size written out in full
        self._sizes: dict[int, int] = {}  # the same, by converted Node
        self.expanded = 0  # what aliases would add if every one were written out

    def convert(self, node: yaml.Node, depth: int = 0) -> Node:
        line = node.start_mark.line + 1
        key = id(node)
        if key in self.done:
            self.expanded += self.weight[key]
            if self.expanded > MAX_ALIAS_EXPANSION:
                raise YamlSyntaxError(line, "the value anchored here (&name) is used "
                                      "through so many aliases (*name) that, with the "
                                      "others, aliases repeat it past "
                                      f"{MAX_ALIAS_EXPANSION:,} characters; write the "
                                      "values out, or use fewer aliases")
            return self.done[key]
        if key in self.active:
            raise YamlSyntaxError(line, "a recursive alias (an anchor used inside itself); "
                                  "write the value out")
        if depth > MAX_DEPTH:
            raise YamlSyntaxError(line, f"nested deeper than {MAX_DEPTH} levels")
        self.active.add(key)
        try:
            result = self._convert(node, line, depth)
        finally:
            self.active.discard(key)
        self.done[key] = result
        self.weight[key] = self._sizes[id(result)] = self._size(result)
        return result

    def _size(self, node: Node) -> int:
        """One per value plus its text, every alias under it written out (children are
        converted first)."""
        value = node.value
        if isinstance(value, dict):
            return 1 + sum(len(k) + self._sizes[id(v)] for k, v in value.items())
        if isinstance(value, list):
            return 1 + sum(self._sizes[id(v)] for v in value)
        return 1 + (len(value) if isinstance(value, str) else 0)

    def _convert(self, node: yaml.Node, line: int, depth: int) -> Node:
        if isinstance(node, yaml.ScalarNode):
            return Node(_scalar(node), line)
        if isinstance(node, yaml.SequenceNode):
            return Node([self.convert(item, depth + 1) for item in node.value], line)
        if isinstance(node, yaml.MappingNode):
            items: dict[str, Node] = {}
            key_lines: dict[str, int] = {}
            for key_node, value_node in node.value:
                key_line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    raise YamlSyntaxError(key_line, "a mapping key must be a plain value")
                key = str(key_node.value)
                if key == "<<":
                    raise YamlSyntaxError(key_line, "merge keys (<<) are not supported")
                if key in items:
                    raise YamlSyntaxError(
                        key_line, f"key {key!r} appears twice (first on line "
                        f"{key_lines[key]}); keep one")
                items[key] = self.convert(value_node, depth + 1)
                key_lines[key] = key_line
            return Node(items, line, key_lines)
        raise YamlSyntaxError(line, f"unsupported YAML node {type(node).__name__}")


def _syntax_fix(text: str, line: int | None) -> str:
    """The likeliest fix for a syntax error on `line`."""
    lines = text.split("\n")
    here = lines[line - 1] if line and line <= len(lines) else ""
    if "\t" in here[: len(here) - len(here.lstrip())] or (line and "\t" in "".join(
            ln[: len(ln) - len(ln.lstrip())] for ln in lines[max(line - 2, 0):line])):
        return "indent with spaces, not tabs"
    return ("close every [ { and quote on that line, and quote values that hold ': ' "
            "or ' #'")


def parse(text: str) -> Node | None:
    """Parse one YAML document into `Node`s; `None` for an empty document."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise YamlSyntaxError(line, f"not valid YAML: {problem}; {_syntax_fix(text, line)}"
                              ) from exc
    except yaml.reader.ReaderError as exc:
        # Not text YAML can read (a NUL, a control character, a binary file).
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        raise YamlSyntaxError(line, f"not valid YAML: character {exc.character!r} is not "
                              "allowed; save the scenario as plain UTF-8 text") from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(None, f"not valid YAML: {exc}") from exc
    except RecursionError:
        raise YamlSyntaxError(None, "not valid YAML: nested too deeply") from None
    return None if root is None else _Converter().convert(root)
