"""JavaScript string and number semantics (expected values printed by Node 20)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.memdir.jsvalue import (
    JsDate,
    JsMap,
    JsSet,
    js_iso_string,
    js_number_str,
    js_string,
    js_truthy,
)
from memeval.memdir.text import js_trim, utf8_len, utf16_last_index_of, utf16_len, utf16_slice


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (123.456, "123.456"),
        (0.1, "0.1"),
        (1.5e-7, "1.5e-7"),
        (2**53 + 1, "9007199254740992"),
        (100, "100"),
        (1.0, "1"),
        (-0.0, "0"),
        (1e300, "1e+300"),
        (5e-324, "5e-324"),
        (0.000001, "0.000001"),
        (1234567890123456789012, "1.2345678901234568e+21"),
        (-1.5e-10, "-1.5e-10"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1 / 3, "0.3333333333333333"),
        (123e-20, "1.23e-18"),
        (2**70, "1.1805916207174113e+21"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (float("nan"), "NaN"),
    ],
)
def test_numbers_print_as_javascript_prints_them(value: float, text: str) -> None:
    assert js_number_str(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([1, [2, None], {}], "1,2,,[object Object]"),
        ({"a": 1}, "[object Object]"),
        (True, "true"),
        ([], ""),
        (b"hello", "hello"),
        (JsMap(a=1), "[object Map]"),
        (JsSet(a=None), "[object Set]"),
        (JsDate(1704067200000.0), "Mon Jan 01 2024 00:00:00 GMT+0000 (Coordinated Universal Time)"),
    ],
)
def test_values_stringify_as_javascript(value: object, text: str) -> None:
    assert js_string(value) == text


@pytest.mark.parametrize("value", [None, False, 0, -0.0, float("nan"), ""])
def test_falsy_values(value: object) -> None:
    assert not js_truthy(value)


@pytest.mark.parametrize("value", [[], {}, "0", " ", float("inf"), True, b""])
def test_truthy_values(value: object) -> None:
    assert js_truthy(value)


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert utf16_len("a😀é") == 4
    assert len("a😀é") == 3


def test_utf16_slice_can_split_a_surrogate_pair_like_javascript() -> None:
    assert utf16_slice("a😀b", 0, 2) == "a\ud83d"
    assert utf16_len("a\ud83d") == 2
    assert utf16_last_index_of("ab\ncd\n", "\n", 4) == 2
    assert utf16_last_index_of("😀\nx", "\n", 5) == 2


def test_trim_is_javascripts_not_pythons() -> None:
    # U+FEFF is JS whitespace; U+0085 and U+001C..U+001F are only Python whitespace.
    assert js_trim("\ufeff x \u3000") == "x"
    assert js_trim("\x85x\x1c") == "\x85x\x1c"
    assert "\x85x\x1c".strip() == "x"


def test_utf8_length_counts_lone_surrogates_as_replacement_characters() -> None:
    assert utf8_len("é😀") == 6
    assert utf8_len("\ud83d") == 3


@pytest.mark.parametrize(
    ("ms", "iso"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1.5, "1969-12-31T23:59:59.999Z"),
        (1787189118172.9998, "2026-08-20T01:25:18.172Z"),
        (253402300800000, "+010000-01-01T00:00:00.000Z"),
        (-62198755200000, "-000001-01-01T00:00:00.000Z"),
        (8.64e15, "+275760-09-13T00:00:00.000Z"),
        (-62135596800001, "0000-12-31T23:59:59.999Z"),
        (253402300799999.9, "9999-12-31T23:59:59.999Z"),
        (951782400000.5, "2000-02-29T00:00:00.000Z"),
    ],
)
def test_iso_strings_match_date_to_iso_string(ms: float, iso: str) -> None:
    assert js_iso_string(ms) == iso


@given(st.floats(min_value=-1e13, max_value=253402300799999.0))
def test_iso_strings_follow_the_proleptic_calendar(ms: float) -> None:
    # The C library's calendar (file dates) and the day count (any date) agree.
    t = int(ms)
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=t)
    assert js_iso_string(ms) == f"{moment:%Y-%m-%dT%H:%M:%S}.{t % 1000:03d}Z"


def test_iso_string_outside_the_date_range_is_an_error() -> None:
    with pytest.raises(ValueError, match="invalid time value"):
        js_iso_string(8.64e15 + 1)


def test_iso_strings_ignore_a_leap_second_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Under a `right/` zone the C library counts leap seconds (27 by 2026); Date does not.
    import time

    monkeypatch.setenv("TZ", "right/UTC")
    time.tzset()
    try:
        assert js_iso_string(1767225600000) == "2026-01-01T00:00:00.000Z"
    finally:
        monkeypatch.undo()
        time.tzset()
