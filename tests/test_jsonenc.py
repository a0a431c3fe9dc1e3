"""Stored lines read back as `json.loads` reads them, keys spell one value one way, and
one rule says which numbers JSON cannot hold."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memeval.jsonenc import (
    canonical_json,
    canonical_key,
    decode_line,
    dump_line,
    dump_pretty,
    finite,
    json_safe,
)
from memeval.log import payload_hash

clean = json_safe

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)

def test_canonical_json_is_json_dumps_with_sorted_keys_and_no_spaces() -> None:
    value = {"b": [1, 2.5, None], "a": "é"}
    assert canonical_json(value) == '{"a":"é","b":[1,2.5,null]}'
    with pytest.raises(TypeError, match="date is not JSON serializable"):
        canonical_json({"when": date(2026, 12, 4)})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), None, "0.5",
                                   np.float64("nan"), [1.0]])
def test_a_value_that_is_not_a_finite_number_is_missing(value: Any) -> None:
    assert finite(value) is None


@pytest.mark.parametrize("value", [0, 1, 0.25, np.float64(0.5), np.int64(3), True])
def test_a_finite_number_is_its_float(value: Any) -> None:
    assert finite(value) == float(value)


def test_every_reader_of_numbers_uses_the_one_rule() -> None:
    """Infinity is missing on the page, in the charts and in the gate as in the files
    (the report's cells once kept it, and its charts drew it)."""
    from memeval.report import _charts, _turns
    from memeval.scoring import gate

    assert _turns._num(float("inf")) is None and _turns._num(0.123456) == 0.1235
    assert _turns._cost(float("-inf")) is None
    assert gate.finite is finite and _charts.finite is finite
    assert json_safe({"a": (float("inf"), np.float64(0.5)), 1: np.int64(2)}) == {
        "a": [None, 0.5], "1": 2}


def _outcome(read: Any, raw: bytes | str) -> tuple[str, str]:
    """What a reader makes of `raw`: its value as canonical text, or its error."""
    try:
        return "value", json.dumps(read(raw), sort_keys=True)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
        return type(exc).__name__, str(exc)


@given(value=json_values, ascii_only=st.booleans(), compact=st.booleans())
def test_a_written_line_reads_back_as_json_loads_reads_it(value: Any, ascii_only: bool,
                                                          compact: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only,
                      separators=(",", ":") if compact else None) + "\n"
    for raw in (line, line.encode(), dump_line(value)):
        assert _outcome(decode_line, raw) == _outcome(json.loads, raw)


long_integers = st.integers(min_value=2**63 - 5, max_value=2**70) | st.integers(
    min_value=-(2**70), max_value=-(2**63) + 5)


@given(value=st.recursive(long_integers | json_values, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                          max_leaves=8))
def test_integers_past_64_bits_stay_exact(value: Any) -> None:
    def text(read: Any) -> str:
        return json.dumps(read, sort_keys=True)

    assert text(decode_line(dump_line(value))) == text(clean(value))  # infinity as null
    assert text(decode_line(json.dumps(value, separators=(",", ":")).encode())) == text(value)


@given(value=json_values | st.floats())
@example(value=[-(2**63) - 1, float("inf"), {"n": float("nan")}])  # orjson refuses: the stdlib
def test_dump_line_is_one_sorted_line_that_reads_back_with_nan_as_null(value: Any) -> None:
    raw = dump_line(value)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert decode_line(raw) == json.loads(json.dumps(clean(value), sort_keys=True))
    assert json.loads(dump_pretty(value)) == json.loads(json.dumps(clean(value)))
    if isinstance(value, dict):
        assert list(decode_line(raw)) == sorted(value)


def test_dump_line_writes_numpy_as_numbers_and_other_types_as_their_text() -> None:
    value = {"when": date(2026, 12, 4), "tag": Path("a/b"), "share": np.float64(0.25),
             "count": np.int64(3), "big": 2**80, "keys": {1: "one", 2: "two"}}
    expected = json.loads(json.dumps(json_safe(value), default=str, sort_keys=False))
    assert decode_line(dump_line(value)) == expected
    assert decode_line(dump_pretty(value)) == expected


def test_a_text_with_a_lone_surrogate_is_kept_in_valid_utf8() -> None:
    value = {"path": "memdir/\udcff.md", "é": "\ud800"}  # a file name not in UTF-8; a
    for raw in (dump_line(value), dump_pretty(value)):  # model's escaped half of a pair
        raw.decode("utf-8")  # the file stays readable by every tool
        assert decode_line(raw) == value


class Point(NamedTuple):
    x: int
    y: int


def test_a_named_tuple_is_stored_as_its_list_and_keyed_alike() -> None:
    assert decode_line(dump_line({"p": Point(1, 2)})) == {"p": [1, 2]}
    assert json.loads(dump_pretty(Point(1, 2))) == [1, 2]
    assert payload_hash(Point(1, 2)) == payload_hash([1, 2])  # one address, one stored form


@given(value=json_values, other=json_values)
def test_canonical_keys_are_equal_exactly_when_canonical_json_is(value: Any, other: Any) -> None:
    """... of the values as stored: infinity is null there, as in the key."""
    assert (canonical_key(value) == canonical_key(other)) == (
        canonical_json(clean(value)) == canonical_json(clean(other)))
    assert canonical_key(value) == canonical_key(json.loads(canonical_json(value)))


@pytest.mark.parametrize("raw", [
    b"", b"\n", b"  {\"a\": 1}\n", b"{\"a\": 1} junk\n", b"{\"a\": 1}{}\n", b"{\"a\": \n",
    b"\xef\xbb\xbf{\"a\": 1}\n", b"\xff\xfe{}\n", b"{\"a\": \"\xc3\"}\n", b"[NaN, -Infinity]\n",
    b"{\"a\": 1, \"a\": 2}\n", b"123 \t\r\n", "{\"a\": 1}".encode("utf-16-le"),
    "[1, 2]\n".encode("utf-32-le"), "{\"a\": 1}\n".encode("utf-16"), b"\"a\x00\"\n",
    b"1\x0c\n", b"{\"a\": 1}\x0b\n", "1\u2028\n".encode(), b"1\xc2\xa0\n", "1\u3000", "2\x1c",
    bytearray(b"[1]\n"),
])
def test_odd_lines_get_json_loads_own_value_or_error(raw: bytes | str) -> None:
    assert _outcome(decode_line, raw) == _outcome(json.loads, raw)
