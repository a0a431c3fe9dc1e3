"""Link targets of an index: the one-pattern reading of simple indexes must give
exactly what the CommonMark parser gives, and everything else must be parsed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.startup import markdown
from memeval.startup.markdown import link_hrefs, parsed_link_hrefs

# Characters that could start or shape some construct, next to plain ones, and whole
# constructs: autolinks, raw HTML, code spans, escapes, entities, images.
_TRICKY = list("[]()<>`\\!*_&#;:/.-+~ \t|=\"'é😀\x00a")
_ATOMS = ["<http://x.io>", "<a:b>", "<m@x.io>", "<b>", "`", "\\", "&#91;", "&rbrack;",
          "![i](j.md)", "[k](l.md)", "](z.md)", "abc", "  "]
_text = st.lists(st.sampled_from(_TRICKY + _ATOMS), max_size=6).map("".join)
_destination = st.one_of(
    st.text(alphabet=st.sampled_from(list("abz09._/-")), min_size=1, max_size=10),
    st.text(alphabet=st.sampled_from(list(_TRICKY) + list("abz09")), max_size=10),
)


@st.composite
def entry(draw: st.DrawFn, bullets: tuple[str, ...] = ("- ", "* ", "+ ", "-", "1. ", "  - ",
                                                         "    - ", "-\t")) -> str:
    bullet = draw(st.sampled_from(bullets))
    return f"{bullet}[{draw(_text)}]({draw(_destination)}){draw(_text)}"


_other_line = st.one_of(
    st.just(""), st.just("   "), st.just("```"), st.just("~~~"), st.just("---"),
    st.just("==="), st.just("<div>"), st.just("<!-- note -->"), st.just("> quoted"),
    st.just("[ref]: refd.md"), st.just("- [ref]"), st.just("    indented [a](b.md)"),
    _text.map(lambda t: "# " + t), _text.map(lambda t: "####### " + t), _text,
)
_line = st.one_of(entry(), entry(), entry(), _other_line)


@settings(max_examples=600, deadline=None)
@given(st.lists(_line, max_size=8))
def test_the_pattern_reads_what_the_parser_reads(lines: list[str]) -> None:
    content = "\n".join(lines)
    assert link_hrefs(content) == parsed_link_hrefs(content)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(entry(("- ", "* ", "+ ")), st.just(""),
                          _text.map(lambda t: "## " + t)), max_size=4))
def test_indexes_of_entries_and_headings_read_alike(lines: list[str]) -> None:
    content = "\n".join(lines)
    assert link_hrefs(content) == parsed_link_hrefs(content)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="a `\\<>:/!*&#()", max_size=6), st.sampled_from(["b.md", "./c/d.md"]),
       st.text(alphabet="a `\\<>:/!*&#()", max_size=6))
def test_one_entry_reads_alike_whatever_its_title_and_hook(title: str, destination: str,
                                                           hook: str) -> None:
    content = f"- [{title}]({destination}){hook}"
    assert link_hrefs(content) == parsed_link_hrefs(content)


def _parser_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(content: str) -> list[object]:
        raise AssertionError(f"parsed: {content!r}")

    monkeypatch.setattr(markdown, "lex", refuse)


def test_an_index_as_the_memory_tool_writes_it_is_not_parsed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    content = ("# Memory\n\n- [DB notes](notes/db.md) — the replica lags *a bit*\n"
               "- [Style](style_guide.md) — tabs & spaces (tabs win)\n")
    expected = parsed_link_hrefs(content)
    _parser_refused(monkeypatch)
    assert link_hrefs(content) == expected == ["notes/db.md", "style_guide.md"]


@pytest.mark.parametrize("content", [
    "```\n- [a](hidden.md)\n```",  # inside a fence: no link at all
    "<div>\n- [a](raw.md)",  # an HTML block swallows the entry
    "- [a `](b.md)` c](d.md)",  # a code span outranks the brackets
    "- [a](b.md) <c.md>",  # an autolink beside the entry
    "- [a](%C3%A9.md)",  # a destination the parser normalizes
    "- [a](b.md)\n[ref]: c.md",  # a reference definition
    "- [a\\](b.md)",  # an escaped bracket
])
def test_anything_else_is_parsed(content: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = parsed_link_hrefs(content)
    _parser_refused(monkeypatch)
    with pytest.raises(AssertionError, match="parsed"):
        link_hrefs(content)
    monkeypatch.undo()
    assert link_hrefs(content) == expected
