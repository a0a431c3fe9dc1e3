"""The encoded-length helpers agree with the per-character definitions they replaced."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memeval.memdir.text import utf8_len, utf16_len

# Any code point, lone surrogates included (a JS-style slice can leave one).
_TEXT = st.text(st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                          st.characters(codec=None)))


def _old_utf16_len(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _old_utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "replace")) + 2 * sum(
        1 for ch in text if 0xD800 <= ord(ch) <= 0xDFFF
    )


@given(_TEXT)
def test_utf16_len_matches_the_per_character_count(text: str) -> None:
    assert utf16_len(text) == _old_utf16_len(text)


@given(_TEXT)
def test_utf8_len_matches_the_per_character_count(text: str) -> None:
    assert utf8_len(text) == _old_utf8_len(text)


def test_lone_surrogates_and_astral_characters() -> None:
    # JS: "\ud800".length === 1, "😀".length === 2; Buffer.byteLength counts a lone
    # surrogate as U+FFFD, 3 bytes.
    assert utf16_len("\ud800") == 1
    assert utf16_len("a\U0001f600") == 3
    assert utf8_len("\udfff") == 3
    assert utf8_len("a\U0001f600\u00e9") == 7
