"""The frontmatter fast path reads exactly what the YAML 1.2 parser reads, or steps aside.

`simple_mapping` skips the parser for blocks of plain `key: words` lines. It is
only allowed to answer when its answer is the parser's: every block it accepts is
checked against `parse_yaml`, over generated blocks that mix safe lines with the
things YAML reads differently (numbers, booleans, null, dates, comments, quotes,
colons, indicators, tabs, odd characters, repeated keys).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.memdir.frontmatter import parse_frontmatter
from memeval.memdir.simple_frontmatter import read_block, simple_mapping
from memeval.memdir.yaml12 import YamlError, parse_yaml


def parsed(block: str) -> object:
    try:
        value = parse_yaml(block)
    except YamlError:
        return "yaml error"
    return value if isinstance(value, dict) else {}


LEADS = ["run", "the", "tests", "Zebra", "café", "naïve", "日本", "x1", "a-b", "it's"]
WORDS = [*LEADS, "a,b", "50%", "e-mail@host", "C++", "x/y", "[a]", "{b}", "a:b", "wait...",
         "42", "true", "null"]
RISKY = ["yes", "no", "on", "null", "Null", "~", "true", "FALSE", "1", "-1", "0x1F",
         "0o17", "1e3", ".5", ".inf", ".NaN", "2024-01-01", "12:30", "# note", "a #b",
         "'q'", '"q"', "x: y", "end:", "- item", "? k", "&a", "*a", "!tag", "|", ">",
         "%", "@x", "`x`", "[a, b]", "{a: b}", "\t", "\r", "\u00a0", "\u2028", "\ufeff",
         "\x85", "\x00", "---", "...", "\\", "", " "]
KEYS = ["name", "description", "type", "null", "true", "Yes", "1", "_x", "a-b", "__proto__",
        "key with space", "-k", "k"]

value = st.lists(st.sampled_from(WORDS + RISKY), max_size=6).map(" ".join) | st.text(
    st.sampled_from(list("abZ0 _-.:#'\"!&*|>%@`,[]{}?~\t\r\\é")), max_size=10)
line = (st.tuples(st.sampled_from(KEYS), st.sampled_from([": ", ":  ", ":", ":\t", " : "]),
                  value).map("".join)
        | st.just("") | value | st.tuples(st.sampled_from(["  ", "\t", "- "]), value)
        .map("".join))
block = st.tuples(st.lists(line, max_size=5).map("\n".join), st.booleans()).map(
    lambda t: t[0] + ("\n" if t[1] else ""))
# What memory files mostly hold: a few keys, each with words starting with a letter.
words = st.tuples(st.sampled_from(LEADS), st.lists(st.sampled_from(WORDS), max_size=7)).map(
    lambda t: " ".join([t[0], *t[1]]))
simple_block = st.lists(
    st.tuples(st.sampled_from(["name", "description", "type", "owner"]), words),
    min_size=1, max_size=4, unique_by=lambda kv: kv[0],
).map(lambda pairs: "".join(f"{k}: {v}\n" for k, v in pairs))


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block)
def test_an_accepted_block_reads_as_the_parser_reads_it(text):
    fast = simple_mapping(text)
    if fast is not None:
        assert fast == parsed(text)


@settings(max_examples=300, deadline=None)
@given(simple_block)
def test_plain_word_lines_take_the_fast_path_and_agree(text):
    fast = simple_mapping(text)
    assert fast is not None
    assert fast == parsed(text)


@pytest.mark.parametrize("block", [
    "description: 42", "description: true", "description: null", "description: Null",
    "description: ~", "description: 2024-01-01", "description: 1e3", "description: .inf",
    "description: a # comment", "description: 'quoted'", 'description: "quoted"',
    "description: note: colon", "description: ends:", "description: - dash",
    "description: [a, b]", "description: {a: b}", "description: &anchor x",
    "description: *alias", "description: !tag x", "description: |", "description: >",
    "description: x\t", "description: trailing ", "description:\tx", "  description: x",
    "description: x\n  continued", "name: a\nname: b", "true: x", "null: x",
    "description: a\u2028b", "description: a\u00a0b", "description: a\x85b",
    "description: a\ufeffb", "", "\n\n", "- a\n- b", "just text",
])
def test_what_yaml_reads_otherwise_is_read_as_the_parser_does_or_left_to_it(block):
    fast = simple_mapping(block)
    assert fast is None or fast == parsed(block)


@pytest.mark.parametrize("block", [
    "description: &anchor x", "description: !tag x", "description: |", "description: >",
    "description: x\t", "description:\tx", "  description: x", "true: x", "null: x",
    "description: a\u2028b", "description: a\u00a0b", "description: a\x85b",
    "description: a\ufeffb", "- a\n- b", "just text", "description: - dash",
    'description: "a\\x41"', "description: [a, [b]]", "description: 'a\n  b'",
    "description: {a:b}", "description: [a, b,]",
])
def test_what_the_fast_reader_does_not_know_goes_to_the_parser(block):
    assert read_block(block) is None


def test_parse_frontmatter_gives_the_same_for_a_simple_and_a_parsed_file():
    simple = "---\nname: db\ndescription: run the tests against a real db\ntype: feedback\n---\n"
    # The same values, but quoted, so the parser has to read them.
    quoted = ('---\nname: "db"\ndescription: "run the tests against a real db"\n'
              'type: "feedback"\n---\n')
    assert simple_mapping("name: db\ndescription: run the tests against a real db\n"
                          "type: feedback\n") is not None
    assert parse_frontmatter(simple) == parse_frontmatter(quoted)
