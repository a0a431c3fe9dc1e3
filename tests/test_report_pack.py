"""The report's packed data: encoded piece by piece, byte for byte the plain JSON."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memeval.report._html import _pieces, pack_json, unpack_json

ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                 allow_infinity=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=30)


@given(values)
def test_pieces_join_to_what_the_streaming_encoder_writes(value) -> None:
    assert "".join(_pieces(value, ENCODER)) == "".join(ENCODER.iterencode(value))


@given(st.dictionaries(st.integers() | st.booleans(), scalars, max_size=4))
def test_keys_that_json_must_convert_are_left_to_the_encoder(value) -> None:
    assert "".join(_pieces(value, ENCODER)) == "".join(ENCODER.iterencode(value))
    assert unpack_json(str(pack_json(value))) == json.loads(json.dumps(value))
