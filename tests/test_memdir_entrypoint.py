"""MEMORY.md index truncation at startup (SPEC §4.3)."""

from __future__ import annotations

import pytest

from memeval.memdir import (
    MAX_ENTRYPOINT_BYTES,
    format_file_size,
    truncate_entrypoint_content,
    utf16_len,
)

WARNING = "\n\n> WARNING: MEMORY.md is "


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (1280, "1.3KB"),  # toFixed rounds the exact half up; Python's format would say 1.2
        (1331, "1.3KB"),
        (25000, "24.4KB"),
        (30000, "29.3KB"),
        (1048576, "1MB"),
        (1572864, "1.5MB"),
        (1073741824, "1GB"),
        (10291, "10KB"),
    ],
)
def test_file_sizes(size: int, text: str) -> None:
    assert format_file_size(size) == text


def _index(lines: int, width: int = 20) -> str:
    return "\n".join(f"- [m{i}](m{i}.md) " + "x" * width for i in range(lines))


def test_small_index_is_only_trimmed() -> None:
    got = truncate_entrypoint_content("\ufeff\n" + _index(3) + "\n\n")
    assert got.content == _index(3)
    assert (got.line_count, got.was_line_truncated, got.was_byte_truncated) == (3, False, False)


def test_empty_index() -> None:
    got = truncate_entrypoint_content(" \n\t")
    assert (got.content, got.line_count, got.byte_count) == ("", 1, 0)


def test_exactly_200_lines_is_not_truncated() -> None:
    assert not truncate_entrypoint_content(_index(200)).was_line_truncated


def test_250_lines_keeps_200_and_names_the_line_reason() -> None:
    got = truncate_entrypoint_content(_index(250))
    body, _, warning = got.content.partition(WARNING)
    assert body == _index(200)
    assert warning.startswith("250 lines (limit: 200). ")
    assert got.was_line_truncated and not got.was_byte_truncated


def test_30000_units_in_120_lines_cuts_at_a_line_end_and_names_the_size() -> None:
    raw = _index(120, width=240)
    got = truncate_entrypoint_content(raw)
    body, _, warning = got.content.partition(WARNING)
    assert got.byte_count == utf16_len(raw) > 25_000
    assert utf16_len(body) <= MAX_ENTRYPOINT_BYTES
    assert raw.startswith(body + "\n")
    assert warning.startswith(
        f"{format_file_size(got.byte_count)} (limit: 24.4KB) — index entries are too long. "
    )


def test_both_limits_name_both() -> None:
    got = truncate_entrypoint_content(_index(300, width=200))
    assert got.was_line_truncated and got.was_byte_truncated
    assert got.content.partition(WARNING)[2].startswith(
        f"300 lines and {format_file_size(got.byte_count)}. "
    )


def test_one_huge_line_is_cut_hard_and_may_split_a_surrogate_pair() -> None:
    raw = "a" + "😀" * 13_000  # 26 001 units, no newline
    got = truncate_entrypoint_content(raw)
    body = got.content.partition(WARNING)[0]
    assert utf16_len(body) == MAX_ENTRYPOINT_BYTES
    assert body.endswith("\ud83d")  # JavaScript's slice cuts inside the pair


def test_size_cut_uses_the_last_newline_else_cuts_hard() -> None:
    raw = "x\n" + "y" * 26_000
    body = truncate_entrypoint_content(raw).content.partition(WARNING)[0]
    assert body == "x"
    raw = "y" * 26_000 + "\nx"
    body = truncate_entrypoint_content(raw).content.partition(WARNING)[0]
    assert body == "y" * 25_000


def test_units_not_bytes_decide_the_size_limit() -> None:
    raw = "é" * 24_000  # 48 000 UTF-8 bytes but 24 000 units
    assert not truncate_entrypoint_content(raw).was_byte_truncated


def test_warning_wording_is_replaceable() -> None:
    got = truncate_entrypoint_content(_index(201), warning_template="\n!{{ reason }}|{{ name }}")
    assert got.content.endswith("\n!201 lines (limit: 200)|MEMORY.md")
