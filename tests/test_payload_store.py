"""The payload store's content addresses: remembered hashes are the hashes."""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from memeval.log import PayloadStore, payload_hash

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, -0.0]),
                    st.text(max_size=8))
items = st.one_of(
    st.text(max_size=30),
    st.dictionaries(st.text(max_size=4), scalars, max_size=4),
    st.lists(scalars, max_size=3),
    st.text(min_size=2_100, max_size=2_200),  # past the memo's length bound
)


@given(st.lists(items, min_size=1, max_size=8))
@example(['{"a":1}', {"a": 1}])  # a text that reads as another item's canonical JSON
@example([{"n": 1}, {"n": 1.0}, {"n": True}])  # equal in Python, not in JSON
@example([{"a": 1, "b": 2}, {"b": 2, "a": 1}])  # one item in two key orders
@example([{"n": 2**70}, [2**70], {"n": 2**70}])  # orjson refuses: keyed by json's text
def test_a_list_is_stored_under_the_hashes_of_its_items(values: list) -> None:
    store = PayloadStore()
    expected = "".join(payload_hash(v) for v in values)
    for _ in range(2):  # the second pass answers from the memo
        assert store.refs(values) == {"$": payload_hash({"$*": expected})}
    pending = store.pending()
    for value in values:
        assert pending[payload_hash(value)] == value
    assert store.refs(values) == {"$": payload_hash({"$*": expected})}
    assert store.pending() == {}  # nothing is stored twice


def _drop_first_key(item: dict, root: str) -> dict:
    """What a store keeps of an item: all but its first key, the root appended."""
    return {**dict(list(item.items())[1:]), "root": root}


@given(st.lists(st.dictionaries(st.text(max_size=3), scalars, min_size=1, max_size=4),
                min_size=1, max_size=6), st.sampled_from(["", "/a", "/b"]))
@example([{"path": "/a/x", "n": 1}, {"path": "/b/x", "n": 1}], "/a")  # same kept, raw apart
def test_what_is_kept_of_items_is_hashed_whatever_the_memo_saw(items: list, root: str) -> None:
    store = PayloadStore()
    for other_root in ("/c", root):  # the same raw items under another root first
        kept = [_drop_first_key(item, other_root) for item in items]
        expected = payload_hash({"$*": "".join(payload_hash(k) for k in kept)})
        for _ in range(2):  # the second pass answers from the memo
            assert store.refs(items, _drop_first_key, other_root) == {"$": expected}
        pending = store.pending()
        assert all(pending[payload_hash(k)] == k for k in kept)


def test_a_reference_in_any_mapping_resolves() -> None:
    from collections import OrderedDict

    from memeval.log import Resolver, payload_hash

    digest = payload_hash(["line a", "line b"])
    resolver = Resolver({digest: ["line a", "line b"]})
    assert resolver.resolve({"$": digest}) == ["line a", "line b"]
    assert resolver.resolve(OrderedDict({"$": digest})) == ["line a", "line b"]
    assert resolver.resolve([OrderedDict({"$": digest})]) == [["line a", "line b"]]


@given(st.lists(st.lists(items, max_size=5), min_size=1, max_size=4))
def test_building_each_item_gives_what_resolving_the_list_gives(lists: list) -> None:
    """`Resolver.each` over lists stored by reference (sharing items) or stored whole:
    the items `resolve` gives, each built."""
    from memeval.log import Resolver

    assume(not any(isinstance(i, dict) and set(i) & {"$", "$*"} for v in lists for i in v))
    store = PayloadStore()  # (a stored item shaped like a reference reads as one)
    forms = [(store.refs(v), v) for v in lists] + [(store.ref(v), v) for v in lists]
    resolver = Resolver(store.pending())
    for stored, value in forms:
        assert resolver.each(stored, "test", repr) == [repr(v) for v in value]


def test_lists_that_share_items_share_the_built_objects() -> None:
    from memeval.log import Resolver

    store = PayloadStore()
    first, second = store.refs([{"k": "a"}, {"k": "b"}]), store.refs([{"k": "b"}, {"k": "c"}])
    resolver = Resolver(store.pending())
    a, b = resolver.each(first, "test", dict), resolver.each(second, "test", dict)
    assert a == [{"k": "a"}, {"k": "b"}] and b == [{"k": "b"}, {"k": "c"}]
    assert a[1] is b[0]


def test_a_folder_hashed_the_old_way_reads_and_resumes() -> None:
    """Before orjson, addresses hashed the stdlib's canonical text (it spells 1e-05
    where orjson spells 0.00001). Readers take a payload by the hash it was stored
    under; a resumed writer stores again, under today's hash, what it meets again."""
    import hashlib
    import json

    from memeval.log import Resolver

    value = {"mtime_ms": 1e-05, "name": "é"}
    old = hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"),
                                    ensure_ascii=False).encode()).hexdigest()[:16]
    assert old != payload_hash(value)
    assert Resolver({old: value}).resolve({"$": old}) == value
    store = PayloadStore(known=[old])
    assert store.ref(value) == {"$": payload_hash(value)}
    assert store.pending() == {payload_hash(value): value}


def test_the_memo_does_not_grow_with_worlds_that_store_the_same_items() -> None:
    """A long run meets the same headers in every world (each under its own root): the
    memo keeps one entry per stored form, so memory stays flat however many worlds."""
    from memeval.log._payloads import _candidate_item, _relative_item

    store = PayloadStore()
    sizes = []
    for world in range(5):
        root = f"/tmp/memeval-{world}"
        headers = [{"filename": f"m{i}.md", "file_path": f"{root}/m{i}.md", "mtime_ms": 1.0}
                   for i in range(20)]
        memories = [{"key": "project:m0.md", "path": f"{root}/m0.md", "content": "x"}]
        store.refs(headers, _candidate_item, root)
        store.refs(memories, _relative_item, root)
        sizes.append(len(store._encoded) + len(store._texts))
    assert sizes == sizes[:1] * 5
