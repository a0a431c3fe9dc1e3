"""Token-level passes over instruction files: HTML comment removal and `@include` paths.

Claude Code lexes each file once with `marked` (GFM off) and runs both passes on the
same tokens. We use markdown-it-py's CommonMark parser, whose block structure matches
on the points that matter (HTML block type 2, code fences and spans, list items), and
we reproduce marked's raw-text behaviour where the two libraries differ (see the
comments on `_list_text` and `_following_blank_lines`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from memeval.memdir.nodepath import expand_path as node_expand_path
from memeval.memdir.text import JS_SPACE_CLASS, JS_WHITESPACE, js_trim

_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
# `@` at a line start or after whitespace, then a path where `\ ` escapes a space;
# whitespace is JavaScript's `\s` (U+FEFF yes; U+0085 and U+001C-U+001F no).
_NOT_SPACE_OR_BACKSLASH = "[^" + JS_SPACE_CLASS[1:-1] + "\\\\]"
_INCLUDE = re.compile(
    rf"(?:^|{JS_SPACE_CLASS})@((?:{_NOT_SPACE_OR_BACKSLASH}|\\ )+)")
_PUNCTUATION_START = re.compile(r"^[#%^&*()]+")
_PATH_START = re.compile(r"^[a-zA-Z0-9._-]")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # text_join would glue backslash escapes into the neighbouring text; marked keeps an
    # escape as its own token, which ends an `@path` there, so we keep them apart too.
    return MarkdownIt("commonmark").disable("text_join")


# mdurl fills its encode cache lazily and publishes it before it is complete, so two
# threads lexing links at once (concurrent sessions of a run) can crash; parse one at a time.
_PARSE_LOCK = threading.Lock()


def lex(content: str) -> list[Token]:
    """Block tokens of `content` (CRLF already normalized by the caller)."""
    with _PARSE_LOCK:
        return _parser().parse(content)


# A line no other construct can start on: an index entry as the memory tool writes it,
# `- [Title](notes/db.md) — hook`, an ATX heading or blank, with no `[`, `]`, `<`,
# backtick or backslash beyond the entry's own link (the characters that open links,
# images, autolinks, raw HTML, code spans and escapes), and a destination that
# markdown-it's link normalization leaves as it is.
_PLAIN = r"[^\[\]<`\\\n]*"
_SIMPLE_LINE = re.compile(
    rf"[-*+] \[{_PLAIN}\]\(([A-Za-z0-9._-][A-Za-z0-9._/-]*)\){_PLAIN}"
    rf"|#{{1,6}}(?: {_PLAIN})?|[ \t]*")


def link_hrefs(content: str) -> list[str]:
    """The `href` of every link in `content` (newlines normalized), in order, exactly
    as the CommonMark parser gives them.

    An index made only of simple lines (see `_SIMPLE_LINE`) is read with one pattern:
    no block there can hold or swallow another, and each entry's link is the only
    inline construct on its line. The parser takes about 70 µs a line, and every
    world of a run asks this of its index. Anything else is parsed.
    """
    hrefs = []
    for line in content.split("\n"):
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return parsed_link_hrefs(content)
        if match[1]:
            hrefs.append(match[1])
    return hrefs


def parsed_link_hrefs(content: str) -> list[str]:
    """`link_hrefs` by a full parse, for every input."""
    return [href for token in lex(content) for child in token.children or ()
            if child.type == "link_open" and isinstance(href := child.attrGet("href"), str)]


def normalize_newlines(content: str) -> str:
    """marked's lexer turns CRLF and lone CR into LF before tokenizing."""
    return content.replace("\r\n", "\n").replace("\r", "\n")


def _is_closed_comment(raw: str) -> bool:
    trimmed = raw.lstrip(JS_WHITESPACE)
    return trimmed.startswith("<!--") and "-->" in trimmed


def _split_lines(content: str) -> list[str]:
    # Only LF ends a line here: str.splitlines would also split on \x0b, \u2028, ...
    parts = content.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _following_blank_lines(lines: list[str], end: int) -> int:
    # marked's HTML block swallows the run of `\n` after it (not lines holding spaces),
    # so removing a comment also removes the empty lines that follow it.
    while end < len(lines) and lines[end] == "\n":
        end += 1
    return end


def paragraph_continuations(tokens: list[Token], lines: list[str]) -> set[int]:
    """Indices of top-level HTML blocks that marked reads as paragraph text.

    CommonMark lets an HTML block interrupt a paragraph after up to three spaces of
    indentation; marked (GFM off), the parser Claude Code uses, only at column 0. So a
    block that starts on the line right after a paragraph (or after such a
    continuation) with an indented first line is, to marked, more of that paragraph:
    inline HTML, never stripped.
    """
    continued: set[int] = set()
    paragraph_end: int | None = None  # the line a marked paragraph would run into
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        start, end = token.map
        if token.type == "paragraph_open":
            paragraph_end = end
        elif (token.type == "html_block" and start == paragraph_end
              and lines[start][:1] in (" ", "\t")):
            continued.add(index)
            paragraph_end = end
        elif token.type != "inline":
            paragraph_end = None
    return continued


def strip_html_comments(content: str, tokens: list[Token] | None = None) -> str:
    """`content` without block-level HTML comments.

    A top-level HTML block that starts with `<!--` and contains `-->` is removed, except
    for any text left beside the comment on its lines (`<!-- note --> Use bun` keeps
    ` Use bun`). Inline comments (inside a paragraph, including an indented comment
    line right under paragraph text, see `paragraph_continuations`), comments nested
    in lists or quotes, and unclosed `<!--` are kept, as in Claude Code.

    Args:
        content: file text after frontmatter removal, newlines normalized.
        tokens: `lex(content)` when the caller already has it.
    """
    if "<!--" not in content:
        return content
    tokens = lex(content) if tokens is None else tokens
    lines = _split_lines(content)
    inline = paragraph_continuations(tokens, lines)
    out: list[str] = []
    cursor = 0
    for index, token in enumerate(tokens):
        if token.type != "html_block" or token.level != 0 or token.map is None:
            continue
        if index in inline:
            continue
        start, end = token.map
        raw = "".join(lines[start:end])
        if not _is_closed_comment(raw):
            continue
        end = _following_blank_lines(lines, end)
        raw = "".join(lines[start:end])
        out.append("".join(lines[cursor:start]))
        residue = _COMMENT_SPAN.sub("", raw)
        if js_trim(residue):
            out.append(residue)
        cursor = end
    out.append("".join(lines[cursor:]))
    return "".join(out)


def _text_runs(tokens: list[Token]) -> Iterator[str]:
    """The text marked would scan for `@paths`: prose, never code, comments stripped."""
    containers: list[str] = []
    previous = ""
    for token in tokens:
        opener, previous = previous, token.type
        if token.nesting == 1 and token.type in ("list_item_open", "blockquote_open"):
            containers.append(token.type)
        elif token.nesting == -1 and token.type in ("list_item_close", "blockquote_close"):
            containers.pop()
        # Fences and indented code have no inline children, so they are never scanned.
        if token.type == "html_block":
            yield from _comment_residue(token.content)
            continue
        if token.type != "inline":
            continue
        in_list_item = bool(containers) and containers[-1] == "list_item_open"
        if in_list_item and opener == "paragraph_open":
            yield from _list_text(token)
        yield from _inline_text(token.children or [])


def _inline_text(children: list[Token]) -> Iterator[str]:
    """Runs of inline text as marked's text tokens would hold them.

    marked merges plain text across soft line breaks, keeps entities and non-escape
    backslashes as written, and gives a real escape (`\\_`) its own token, which
    ends the run; markdown-it splits all of those, so we stitch them back.
    """
    run: list[str] = []
    for child in children:
        if child.type == "text":
            run.append(child.content)
        elif child.type == "softbreak":
            run.append("\n")
        elif child.type == "text_special" and not _is_real_escape(child):
            run.append(child.markup)
        else:
            if run:
                yield "".join(run)
                run = []
            if child.type == "html_inline":
                yield from _comment_residue(child.content)
    if run:
        yield "".join(run)


def _is_real_escape(token: Token) -> bool:
    return token.info == "escape" and token.content != token.markup


def _list_text(token: Token) -> Iterator[str]:
    # Inside list items marked makes a block "text" token and scans its raw source as
    # well as its inline children; the raw source still holds code spans, so an
    # `@path` inside backticks in a list item is found. Reproduced on purpose.
    yield token.content


def _comment_residue(raw: str) -> Iterator[str]:
    # HTML other than a closed comment is skipped whole; a comment's leftovers count.
    if _is_closed_comment(raw):
        residue = _COMMENT_SPAN.sub("", raw)
        if js_trim(residue):
            yield residue


def _is_include_path(path: str) -> bool:
    if path.startswith(("./", "~/")):
        return True
    if path.startswith("/"):
        return path != "/"
    return (
        not path.startswith("@")
        and _PUNCTUATION_START.match(path) is None
        and _PATH_START.match(path) is not None
    )


def expand_path(path: str, base_dir: Path, home: Path) -> Path:
    """An include target as an absolute, normalized (NFC) path, the way the tools
    expand paths (`memeval.memdir.nodepath.expand_path`).

    Args:
        path: the text after `@`, fragment removed, `\\ ` unescaped.
        base_dir: folder of the including file (its symlink target's folder).
        home: what `~` means.
    """
    return Path(node_expand_path(path, base_dir, home))


def include_paths(tokens: list[Token], base_dir: Path, home: Path) -> list[Path]:
    """Absolute include targets in first-seen order, each once.

    Args:
        tokens: `lex()` of the file's content after frontmatter removal.
        base_dir: folder of the including file, relative targets start there.
        home: what `~/` means.
    """
    found: dict[Path, None] = {}
    for text in _text_runs(tokens):
        for match in _INCLUDE.finditer(text):
            path = match.group(1).split("#", 1)[0]
            if not path:
                continue
            path = path.replace("\\ ", " ")
            if _is_include_path(path):
                found.setdefault(expand_path(path, base_dir, home), None)
    return list(found)
