"""ruamel's YAML scanner, taught to accept tabs where the JavaScript `yaml` 2.x does.

Kept apart from `yaml12` because it subclasses ruamel internals: when ruamel's
scanner changes (pyproject pins it below its next minor version), this is the one
file to check. `yaml12` uses the class and nothing else from here.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import tokens as _tokens
from ruamel.yaml.scanner import Scanner as _RuamelScanner
from ruamel.yaml.scanner import ScannerError

_END_SPACE_TAB = " \n\0\t\r\x85\u2028\u2029"


class TabTolerantScanner(_RuamelScanner):  # type: ignore[misc]
    """ruamel's scanner, with tabs accepted as separation the way `yaml` 2.x does.

    The JavaScript parser allows tabs anywhere except as indentation; ruamel rejects a
    tab wherever a token may start (`key:\tvalue`, `value\t` at the line end).
    """

    def scan_to_next_token(self) -> None:
        reader = self.reader
        if reader.index == 0 and reader.peek() == "\ufeff":
            reader.forward()
        while True:
            while True:
                ch = reader.peek()
                if ch == " " or (ch == "\t" and self._tab_is_separation()):
                    reader.forward()
                else:
                    break
            if reader.peek() == "#":
                while reader.peek() not in "\n\0\r":
                    reader.forward()
            if self.scan_line_break():
                if not self.flow_level:
                    self.allow_simple_key = True
                else:
                    self._check_flow_line_indent()
            else:
                return

    def _check_flow_line_indent(self) -> None:
        """`yaml` rejects flow content continued at or left of the enclosing block's
        indentation (`- [a,` / `b]`); closing brackets and comments may sit anywhere."""
        reader = self.reader
        offset = 0
        while reader.peek(offset) == " ":
            offset += 1
        if reader.peek(offset) in "]}#\r\n\0":
            return
        if self.indent >= 0 and offset <= self.indent:
            raise ScannerError(
                "while scanning a flow collection",
                None,
                "continuation line is not indented",
                reader.get_mark(),
            )

    def _tab_is_separation(self) -> bool:
        if self.flow_level:
            return True
        buf: str = self.reader.buffer
        pos: int = self.reader.pointer
        start = buf.rfind("\n", 0, pos) + 1
        if buf[start:pos].strip(" \t"):
            return True  # after content on this line: separation, not indentation
        # Whitespace-only so far: fine if nothing but a comment or the line end follows.
        end = pos
        while end < len(buf) and buf[end] in " \t":
            end += 1
        return end >= len(buf) or buf[end] in "\n\r#\0"

    def _rest_is_blank(self) -> bool:
        """Whether the current line holds only spaces, tabs and maybe a comment."""
        buf: str = self.reader.buffer
        end = self.reader.pointer
        while end < len(buf) and buf[end] in " \t":
            end += 1
        return end >= len(buf) or buf[end] in "\n\r\0#"

    def scan_flow_scalar_breaks(self, double: Any, start_mark: Any) -> Any:
        """ruamel's version, plus `yaml`'s rule that a quoted scalar's continuation
        lines in block context are indented deeper than the enclosing block."""
        reader = self.reader
        chunks: list[str] = []
        while True:
            prefix = reader.prefix(3)
            if prefix in ("---", "...") and reader.peek(3) in _END_SPACE_TAB:
                raise ScannerError(
                    "while scanning a quoted scalar",
                    start_mark,
                    "found unexpected document separator",
                    reader.get_mark(),
                )
            spaces = 0
            while reader.peek() == " ":
                reader.forward()
                spaces += 1
            line_has_more = reader.peek() not in "\r\n\0"
            if not self.flow_level and line_has_more and spaces <= max(self.indent, 0):
                raise ScannerError(
                    "while scanning a quoted scalar",
                    start_mark,
                    "continuation line is not indented",
                    reader.get_mark(),
                )
            while reader.peek() in " \t":
                reader.forward()
            if reader.peek() in "\r\n":
                chunks.append(self.scan_line_break())
            else:
                return chunks

    def scan_tag(self) -> Any:
        """ruamel's version, with a tab accepted after the tag like a space."""
        reader = self.reader
        start_mark = reader.get_mark()
        ch = reader.peek(1)
        short_handle = "!"
        if ch == "!":
            short_handle = "!!"
            reader.forward()
            ch = reader.peek(1)
        if ch == "<":
            handle = None
            reader.forward(2)
            suffix = self.scan_tag_uri("tag", start_mark)
            if reader.peek() != ">":
                raise ScannerError(
                    "while parsing a tag",
                    start_mark,
                    f"expected '>' but found {reader.peek()!r}",
                    reader.get_mark(),
                )
            reader.forward()
        elif ch in _END_SPACE_TAB:
            if short_handle == "!!":
                raise ScannerError(
                    "while scanning a tag", start_mark, "empty tag suffix", reader.get_mark()
                )
            handle = None
            suffix = short_handle
            reader.forward()
        else:
            length = 1
            use_handle = False
            while ch not in "\0 \t\r\n":
                if ch == "!":
                    use_handle = True
                    break
                length += 1
                ch = reader.peek(length)
            if use_handle:
                handle = self.scan_tag_handle("tag", start_mark)
            else:
                handle = short_handle
                reader.forward()
            suffix = self.scan_tag_uri("tag", start_mark)
            if not suffix or any(c in "[]{},!" for c in suffix):
                # A shorthand tag's characters exclude flow indicators (YAML 1.2 ns-tag-char).
                raise ScannerError(
                    "while scanning a tag",
                    start_mark,
                    f"invalid tag suffix {suffix!r}",
                    reader.get_mark(),
                )
        if reader.peek() not in "\0 \t\r\n":
            raise ScannerError(
                "while scanning a tag",
                start_mark,
                f"expected ' ', but found {reader.peek()!r}",
                reader.get_mark(),
            )
        return _tokens.TagToken((handle, suffix), start_mark, reader.get_mark())

    def scan_flow_scalar(self, style: Any) -> Any:
        """ruamel's version, plus `yaml`'s rule that a comment after a quoted scalar
        needs whitespace before its `#`."""
        token = super().scan_flow_scalar(style)
        if self.reader.peek() == "#":
            raise ScannerError(
                "while scanning a quoted scalar",
                token.start_mark,
                "a comment must be separated from the scalar by whitespace",
                self.reader.get_mark(),
            )
        return token

    def scan_block_scalar_indicators(self, start_mark: Any) -> Any:
        """ruamel's version, with a tab allowed after the indicators."""
        reader = self.reader
        chomping: bool | None = None
        increment: int | None = None
        for _ in range(2):
            ch = reader.peek()
            if ch in "+-" and chomping is None:
                chomping = ch == "+"
                reader.forward()
            elif ch in "0123456789" and increment is None:
                if ch == "0":
                    raise ScannerError(
                        "while scanning a block scalar",
                        start_mark,
                        "expected indentation indicator in the range 1-9, but found 0",
                        reader.get_mark(),
                    )
                increment = int(ch)
                reader.forward()
        if reader.peek() not in "\0 \t\r\n":
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected chomping or indentation indicators, but found {reader.peek()!r}",
                reader.get_mark(),
            )
        return chomping, increment

    def scan_block_scalar_ignored_line(self, start_mark: Any) -> Any:
        """ruamel's version, with tabs allowed after the block scalar's header."""
        reader = self.reader
        while reader.peek() in " \t":
            reader.forward()
        if reader.peek() == "#":
            while reader.peek() not in "\n\0\r":
                reader.forward()
        if reader.peek() not in "\n\0\r":
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected a comment or a line break, but found {reader.peek()!r}",
                reader.get_mark(),
            )
        self.scan_line_break()
        return None

    def scan_block_scalar_breaks(self, indent: int) -> Any:
        """ruamel's version, plus `yaml`'s rule that a tab inside a block scalar's
        indentation is an error, even on an otherwise empty line."""
        reader = self.reader
        chunks: list[str] = []
        end_mark = reader.get_mark()
        while reader.column < indent and reader.peek() == " ":
            reader.forward()
        self._reject_tab_in_block_indent(indent)
        while reader.peek() in "\r\n":
            chunks.append(self.scan_line_break())
            end_mark = reader.get_mark()
            while reader.column < indent and reader.peek() == " ":
                reader.forward()
            self._reject_tab_in_block_indent(indent)
        return chunks, end_mark

    def _reject_tab_in_block_indent(self, indent: int) -> None:
        if self.reader.column < indent and self.reader.peek() == "\t":
            raise ScannerError(
                "while scanning a block scalar",
                None,
                "found a tab in the indentation",
                self.reader.get_mark(),
            )

    def scan_plain_spaces(self, indent: Any, start_mark: Any) -> Any:
        """ruamel's version with tabs accepted wherever it accepts spaces."""
        reader = self.reader
        chunks: list[str] = []
        length = 0
        while reader.peek(length) in " \t":
            length += 1
        whitespaces = reader.prefix(length)
        reader.forward(length)
        ch = reader.peek()
        if ch in "\r\n":
            line_break = self.scan_line_break()
            self.allow_simple_key = True
            prefix = reader.prefix(3)
            if prefix in ("---", "...") and reader.peek(3) in _END_SPACE_TAB:
                return None
            breaks = []
            while reader.peek() in " \t\r\n":
                if reader.peek() == "\t" and reader.column == 0 and not self._rest_is_blank():
                    raise ScannerError(
                        "while scanning a plain scalar",
                        start_mark,
                        "found a tab as indentation",
                        reader.get_mark(),
                    )
                if reader.peek() in " \t":
                    reader.forward()
                else:
                    breaks.append(self.scan_line_break())
                    prefix = reader.prefix(3)
                    if prefix in ("---", "...") and reader.peek(3) in _END_SPACE_TAB:
                        return None
            if line_break != "\n":
                chunks.append(line_break)
            elif not breaks:
                chunks.append(" ")
            chunks.extend(breaks)
        elif whitespaces:
            chunks.append(whitespaces)
        return chunks
