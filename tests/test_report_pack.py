"""The report's packed data: encoded piece by piece, it reads back as the data."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memeval.report._html import _pieces, _visible_bidi_utf8, pack_json, unpack_json, visible_bidi

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                 allow_infinity=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=30)


def plain(value):
    """What JSON makes of `value` (tuples become lists, keys become text)."""
    return json.loads(json.dumps(value))


@given(values)
def test_pieces_join_to_the_json_of_the_value(value) -> None:
    assert json.loads(b"".join(_pieces(value))) == plain(value)
    assert unpack_json(str(pack_json(value))) == plain(value)


@given(st.dictionaries(st.integers() | st.booleans(), scalars, max_size=4))
def test_keys_that_json_must_convert_are_left_to_the_encoder(value) -> None:
    assert unpack_json(str(pack_json(value))) == plain(value)


def test_long_integers_numpy_and_non_finite_numbers_come_through_as_clean_makes_them() -> None:
    data = {"big": [2**70, -(2**64)], "np": [np.float64(0.5), np.int64(7)],
            "undefined": [math.nan, math.inf], "nested": {"rows": [{"x": math.nan}]}}
    assert unpack_json(str(pack_json(data))) == {
        "big": [2**70, -(2**64)], "np": [0.5, 7], "undefined": [None, None],
        "nested": {"rows": [{"x": None}]}}


bidi = st.sampled_from(["\u061c", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069"])


@given(st.lists(st.text(max_size=5) | bidi, max_size=8).map("".join))
def test_bidi_controls_are_shown_alike_in_encoded_text(text: str) -> None:
    assert _visible_bidi_utf8(text.encode()) == visible_bidi(text).encode()


def test_a_lone_surrogate_reaches_the_page_escaped_with_bidi_controls_still_shown() -> None:
    """orjson refuses a lone surrogate; the stdlib then writes the piece, escaped, and
    the bidi controls in it are marked as they are everywhere else on the page."""
    data = {"turns": [{"raw": "bad \ud800 name \u202e.md", "n": 2**70}]}
    assert unpack_json(str(pack_json(data))) == {
        "turns": [{"raw": "bad \ud800 name ⟨U+202E⟩.md", "n": 2**70}]}
