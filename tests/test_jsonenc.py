"""The reused encoders write exactly what `json.dumps` writes with the same options, and
the line decoder reads exactly what `json.loads` reads."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.jsonenc import decode_line, encoder

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)

OPTIONS: list[dict[str, Any]] = [
    {},
    {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":")},
    {"sort_keys": True, "ensure_ascii": False, "default": str},
]


@pytest.mark.parametrize("options", OPTIONS)
@given(value=json_values)
def test_the_text_is_json_dumps_text(options: dict[str, Any], value: Any) -> None:
    assert encoder(**options)(value) == json.dumps(value, **options)


def test_an_unknown_type_is_refused_unless_a_default_converts_it() -> None:
    with pytest.raises(TypeError, match="date is not JSON serializable"):
        encoder()({"when": date(2026, 12, 4)})
    assert encoder(default=str)({"when": date(2026, 12, 4)}) == '{"when": "2026-12-04"}'


def test_non_finite_floats_are_written_as_json_dumps_writes_them() -> None:
    value = [float("nan"), float("inf"), -float("inf")]
    assert encoder()(value) == json.dumps(value) == "[NaN, Infinity, -Infinity]"


def test_without_the_c_accelerator_the_text_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import json.encoder as std

    value = {"b": [1, 2.5, None], "a": "é"}
    options = OPTIONS[1]
    monkeypatch.setattr(std, "c_make_encoder", None)
    assert encoder(**options)(value) == json.dumps(value, **options) == '{"a":"é","b":[1,2.5,null]}'


def _outcome(read: Any, raw: bytes | str) -> tuple[str, str]:
    """What a reader makes of `raw`: its value as canonical text, or its error."""
    try:
        return "value", json.dumps(read(raw), sort_keys=True)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
        return type(exc).__name__, str(exc)


@given(value=json_values, ascii_only=st.booleans())
def test_a_written_line_reads_back_as_json_loads_reads_it(value: Any, ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only) + "\n"
    for raw in (line, line.encode()):
        assert _outcome(decode_line, raw) == _outcome(json.loads, raw)


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
