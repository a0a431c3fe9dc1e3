"""Frontmatter blocks: where the block is, the quoting retry, and the scan's one read.

The scan reads a file's first 30 lines with one read (`_read_block`); what it parses
must be what the line reader's first 30 lines give. The quoting retry rewrites the
whole text at once and must equal quoting it line by line. A block the scan defers
(past the 200 newest) must be one whose header can never raise.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memeval.memdir.frontmatter import (
    FRONTMATTER_RE,
    frontmatter_of,
    frontmatter_span,
    load_mapping,
    parse_frontmatter,
    quote_problematic_values,
)
from memeval.memdir.readfile import read_file_in_range
from memeval.memdir.text import JS_SPACE_CLASS
from memeval.memdir.yaml12 import _split_flow_then_colon, retries_rewritten

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
    """Frontmatter blocks whose lines take the shapes memory files hold, built from
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
TAME = ["run", "the", "Zebra", "café", "日本", "x1", "a-b", "42", "-1", "-0", "true", "null",
        "1e3", ".inf", "a,b", "it's", "x/y", "a:b", "C++", "50%", "e@x", "a#b", "0o17"]
common_block = blocks(st.sampled_from(TAME) | st.sampled_from(WORDS),
                      ["name", "description", "type", "tags", "meta"], [": "],
                      ["", "# comment"])


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


def scanned_frontmatter(path) -> dict:
    """The mapping the scan parses from the block its one read found."""
    from memeval.memdir.scan import _read_block

    block, _ = _read_block(os.fspath(path))
    return {} if block is None else load_mapping(block)


lines = st.lists(st.sampled_from(["---", "--- ", "description: x", "a: b", "", "\r", "x---",
                                  "\ufeff---", "type: user\r", "\u2028"]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(lines, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_the_one_read_path_sees_the_first_30_lines_as_the_line_reader(tmp_path_factory,
                                                                     parts, eol, bom):
    text = ("\ufeff" if bom else "") + eol.join(parts)
    path = tmp_path_factory.mktemp("f") / "m.md"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    expected = frontmatter_of(read_file_in_range(os.fspath(path), 30).content)
    assert frontmatter_of(text, max_lines=30) == expected
    assert scanned_frontmatter(path) == expected


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
    path = tmp_path / "m.md"
    path.write_text(text, encoding="utf-8")
    expected = frontmatter_of(read_file_in_range(os.fspath(path), 30).content)
    meta = scanned_frontmatter(path)
    assert meta == expected
    assert (meta != {}) == (text.count("\n", 0, text.rfind("---")) < 30)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block | common_block)
def test_a_block_the_scan_defers_never_raises(text):
    """The scan parses a `_deferrable` block only if it is among the 200 newest; that
    is the eager scan only if building its header can never raise."""
    from memeval.memdir.scan import _deferrable, _header

    if _deferrable(text):
        _header("a.md", "/m/a.md", 0.0, text)
