"""The fast frontmatter reader against the full YAML parser, shape by shape.

`read_block` may answer only what `parse_yaml` answers: the same mapping (same
types, same order, `-0.0` and NaN included), or `YAML_ERROR` exactly when the parser
raises. Blocks are generated from the shapes it reads (quoted strings with escapes,
one-line flows, block scalars, folded plain lines, block sequences, comments) mixed
with the near misses that mean something else to YAML. `_load_mapping` as a whole
(fast reader, parser, and the quoting retry) is held against the parser-only
version it replaced, and the scan's one-read path against the line reader.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memeval.memdir.frontmatter import (
    FRONTMATTER_RE,
    _load_mapping,
    frontmatter_span,
    parse_frontmatter,
    quote_problematic_values,
    shared_frontmatter,
)
from memeval.memdir.readfile import read_file_in_range
from memeval.memdir.simple_frontmatter import YAML_ERROR, read_block
from memeval.memdir.text import JS_SPACE_CLASS
from memeval.memdir.yaml12 import YamlError, _split_flow_then_colon, parse_yaml, retries_rewritten

SLOW = settings(max_examples=1500, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def parsed(block: str) -> object:
    try:
        value = parse_yaml(block)
    except YamlError:
        return YAML_ERROR
    return value if isinstance(value, dict) else {}


def load_reference(block: str) -> dict:
    """`_load_mapping` before the fast reader: the parser, then the quoting retry."""
    for text in (block, quote_problematic_values(block)):
        got = parsed(text)
        if got is not YAML_ERROR:
            return got
    return {}


def same(a: object, b: object) -> bool:
    # repr tells 1 from 1.0 and True, -0.0 from 0.0, and shows NaN equal to itself.
    return type(a) is type(b) and repr(a) == repr(b)


WORDS = ["run", "the", "tests", "Zebra", "café", "日本", "x1", "a-b", "it's", "a,b", "50%",
         "e@x", "C++", "x/y", "a:b", "wait...", "42", "-1", "0x1F", "0o17", "1e3", ".5",
         ".inf", ".NaN", "true", "False", "null", "~", "yes", "2024-01-01", "12:30", "#",
         "a #b", "x: y", "end:", "&a", "*a", "!t", "|", ">", "%", "@", "`", "[a]", "{b}",
         "'", '"', "\\", "-", "?", ":", ",", "", " "]
ODD = ["\t", "\r", "\u00a0", "\u2028", "\ufeff", "\x85", "\x00", "\U00100000", "..."]
ESCAPES = ["\\\\", '\\"', "\\n", "\\t", "\\/", "\\ ", "\\x41", "\\u00e9", "\\0", "\\q", "\\"]
KEYS = ["name", "description", "type", "tags", "null", "true", "Yes", "1", "_x", "a-b",
        "key with space", "-k", "k", "description"]


def blocks(word: st.SearchStrategy[str], keys: list[str], seps: list[str],
           extra_lines: list[str]) -> st.SearchStrategy[str]:
    """Frontmatter blocks whose lines take the shapes `read_block` knows, built from
    `word`s, with the given keys, key separators and other lines mixed in."""
    words = st.lists(word, max_size=5).map(" ".join)
    dq_body = st.lists(word | st.sampled_from(ESCAPES), max_size=5).map("".join)
    sq_body = st.lists(word | st.just("''"), max_size=5).map("".join)
    scalar = words | dq_body.map(lambda b: f'"{b}"') | sq_body.map(lambda b: f"'{b}'")
    flow_seq = st.lists(scalar, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
    flow_map = st.lists(st.tuples(scalar, st.sampled_from([": ", ":", " : ", ": "]), scalar),
                        max_size=3).map(
        lambda kvs: "{" + ", ".join("".join(kv) for kv in kvs) + "}")
    tail = st.sampled_from(["", "", " ", " # note", "#x", " x", " : y", ": y", " ]", ",",
                            " 'z'"])
    inline = st.tuples(scalar | flow_seq | flow_map, tail).map("".join)
    indent = st.sampled_from(["", " ", "  ", "   ", "    "])
    body_line = st.tuples(indent, words).map("".join) | st.just("") | st.just("  ")
    block_scalar = st.tuples(
        st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", "|2", "> #c", "|x", "|  "]),
        st.lists(body_line, max_size=5)).map(
        lambda t: t[0] + "".join("\n" + line for line in t[1]))
    seq_items = st.tuples(
        st.sampled_from(["", "  ", " "]),
        st.lists(st.tuples(st.sampled_from(["- ", "-", "-  "]), scalar), min_size=1,
                 max_size=3)).map(lambda t: "".join(f"\n{t[0]}{d}{item}" for d, item in t[1]))
    folded_plain = st.tuples(words, st.lists(st.tuples(indent | st.just(""), words),
                                             min_size=1, max_size=3)).map(
        lambda t: t[0] + "".join(f"\n{i}{w}" for i, w in t[1]))
    value = inline | block_scalar | seq_items | folded_plain | st.sampled_from(["", " # c"])
    key_line = st.tuples(st.sampled_from(keys), st.sampled_from(seps), value).map("".join)
    line = key_line | st.sampled_from(extra_lines) if extra_lines else key_line
    return st.tuples(st.lists(line, max_size=6).map("\n".join), st.booleans()).map(
        lambda t: t[0] + ("\n" if t[1] else ""))


# Anything goes: odd characters, odd keys, tabs, directives, stray lines.
block = blocks(st.sampled_from(WORDS) | st.sampled_from(ODD), KEYS,
               [": ", ":", ":  ", " : ", ":\t"],
               ["", "# comment", "  ", "  indented", "- item", "...", "%YAML 1.2",
                "just text"])
# What memory files mostly hold: ordinary keys and characters, the shapes above.
# Words that mostly keep a line readable, so the reader's answers get exercised.
TAME = ["run", "the", "Zebra", "café", "日本", "x1", "a-b", "42", "-1", "-0", "true", "null",
        "1e3", ".inf", "a,b", "it's", "x/y", "a:b", "C++", "50%", "e@x", "a#b", "0o17"]
common_block = blocks(st.sampled_from(TAME) | st.sampled_from(WORDS),
                      ["name", "description", "type", "tags", "meta"], [": "],
                      ["", "# comment"])


def check(text: str) -> bool:
    """Assert the reader agrees with the parser; True if it answered."""
    fast = read_block(text)
    if fast is None:
        return False
    assert same(fast, parsed(text)), (text, fast, parsed(text))
    return True


@SLOW
@given(block)
def test_every_answer_is_the_parsers_on_mixed_blocks(text):
    check(text)


@SLOW
@given(common_block)
def test_every_answer_is_the_parsers_on_common_shapes(text):
    check(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block | common_block)
def test_load_mapping_gives_what_the_parser_and_the_retry_gave(text):
    _load_mapping.cache_clear()
    assert same(_load_mapping(text), load_reference(text))


def test_the_reader_answers_for_the_shapes_it_is_for():
    """Not a correctness check (the properties are): that the fast path is taken for
    what memory files hold, so a change that makes it step aside shows up here."""
    blocks = [
        'name: "db"\ndescription: "run \\"it\\" now: ok" # c\ntype: \'feedback\'\n',
        "description: 'it''s ok'\ntags: [a, 'b, c', \"d\"]\nmeta: {owner: x, n: 2}\n",
        "description: >-\n  folded\n  text\n\n  para\ntype: user\n",
        "description: |\n  literal\n    kept\nrelated:\n  - a.md\n  - 'b.md'\n",
        "description: plain words\n  folded on\n\n  two lines\nitems:\n- x\n- y\n",
        "# c\ndescription: 42\nttl: -0\nx: .nan\n",
        "description: Note: colon\n", "description: [WIP] x\n", "description: 'it's'\n",
        'description: "a "b" c"\n', "description: x\ndescription: y\n", "description: @x\n",
        "description: |+\n  kept\n\n\ntype: user\n", "description: >+\n  a\n  b\n\n",
        "description: |-\n  a\n\n  b\n\n", "description: >\n\n  a\n\n\n  b\n",
    ]
    for text in blocks:
        assert check(text), text
    assert read_block("description: Note: colon\n") is YAML_ERROR


@pytest.mark.parametrize("text", [
    "description: [a, b]: c\nother: x: y\n", "description: {a: b}: c\nother: x: y\n",
    "description: {a: b} : c\n", "description: [a]:\nx: [b] y\n",
])
def test_errors_the_parser_rewrites_are_left_to_it(text):
    # `[a]: b` fails once, then the parser reads it rewritten: not a plain error.
    assert read_block(text) is None
    _load_mapping.cache_clear()
    assert same(_load_mapping(text), load_reference(text))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", ": ", ":", "[", "]", "{", "}", "[a]", "{a: b}", " ",
                                  "\t", "\n", ",", "'", '"', "#"]), max_size=12).map("".join))
def test_a_rewrite_is_only_ever_found_after_a_closing_bracket_and_colon(text):
    assert retries_rewritten(text) == (_split_flow_then_colon(text) != text)


texts = st.text(st.sampled_from(list("-- \n\r\t\u2028\ufeffab:")), max_size=40)


@settings(max_examples=2000, deadline=None)
@given(texts)
@example("---\n\n\nx\n---\n")
@example("---  \n \nx---")
@example("--- \u2028\n\u3000\nx\n---\nbody")
@example("---\n---")
def test_the_block_is_found_where_the_regex_finds_it(text):
    m = FRONTMATTER_RE.match(text)
    span = frontmatter_span(text)
    assert span == (None if m is None else m.span(1))
    if m is not None:
        assert parse_frontmatter(text)[1] == text[m.end():]


lines = st.lists(st.sampled_from(["---", "--- ", "description: x", "a: b", "", "\r", "x---",
                                  "\ufeff---", "type: user\r", "\u2028"]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(lines, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_the_one_read_path_sees_the_first_30_lines_as_the_line_reader(tmp_path_factory,
                                                                     parts, eol, bom):
    text = ("\ufeff" if bom else "") + eol.join(parts)
    path = tmp_path_factory.mktemp("f") / "m.md"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    from memeval.memdir.scan import _read_frontmatter

    expected = shared_frontmatter(read_file_in_range(os.fspath(path), 30).content)
    assert shared_frontmatter(text, max_lines=30) == expected
    meta, _ = _read_frontmatter(os.fspath(path))
    assert meta == expected


def quote_line_by_line(text: str) -> str:
    """`quote_problematic_values` as it was written first: one line at a time."""
    simple_line = re.compile(rf"([a-zA-Z_-]+):{JS_SPACE_CLASS}+([^\n\r\u2028\u2029]+)")
    out = []
    for line in text.split("\n"):
        m = simple_line.fullmatch(line)
        if m:
            key, value = m.group(1), m.group(2)
            quoted = (value.startswith('"') and value.endswith('"')) or (
                value.startswith("'") and value.endswith("'"))
            if not quoted and re.search(r"[{}\[\]*&#!|>%@`]|: ", value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


@settings(max_examples=3000, deadline=None)
@given(st.text(st.sampled_from(list("ab_-:  \n\r\t\v\u2028\u00a0\ufeff'\"\\#[{*@`|>"))
               , max_size=30))
def test_quoting_the_whole_text_at_once_is_quoting_each_line(text):
    assert quote_problematic_values(text) == quote_line_by_line(text)


@pytest.mark.parametrize("text", [
    "---\ndescription: " + "x" * 9000 + "\ntype: user\n---\nbody\n",  # one read is not enough
    "---\ndescription: " + "é" * 5000 + "\n---\n",  # a character cut by the first read
    "---\n" + "".join(f"k{i}: b\n" for i in range(28)) + "---\n" + "y" * 9000,  # ends on line 30
    "---\n" + "".join(f"k{i}: b\n" for i in range(29)) + "---\n",  # on line 31: none
    "\ufeff---\r\ndescription: crlf\r\n---\r\n",
])
def test_the_one_read_path_agrees_with_the_line_reader_on_big_and_odd_files(tmp_path, text):
    from memeval.memdir.scan import _read_frontmatter

    path = tmp_path / "m.md"
    path.write_text(text, encoding="utf-8")
    _load_mapping.cache_clear()
    expected = shared_frontmatter(read_file_in_range(os.fspath(path), 30).content)
    meta, _ = _read_frontmatter(os.fspath(path))
    assert meta == expected
    assert (meta != {}) == (text.count("\n", 0, text.rfind("---")) < 30)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block | common_block)
def test_a_block_the_scan_defers_never_raises(text):
    """The scan parses a `_deferrable` block only if it is among the 200 newest; that
    is the eager scan only if building its header can never raise."""
    from memeval.memdir.scan import _deferrable, _header

    _load_mapping.cache_clear()
    if _deferrable(text):
        _header("a.md", "/m/a.md", 0.0, text)
