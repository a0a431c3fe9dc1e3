"""The payload store: large values that recur across rows, stored once by content hash.

On disk a row's record is compacted: paths are made relative to the session's
temporary root, text derivable from other fields is dropped, and every large value
that recurs across turns and selectors (manifest lines and candidate headers, and
the lists of them, the selector's answer, surfaced/discarded/picked/dropped memories
with their contents, the judges' verdict lists) is stored once in `payloads.jsonl`
and referenced by hash. A row is then a couple of KB of scalars and references (was
40-50 KB at 200 candidates); `Resolver` reads them back.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memeval.errors import MemevalError
from memeval.jsonenc import canonical_key
from memeval.judges.base import Judgement, MemoryVerdict

REF = "$"  # a payload reference: {"$": "<hash>"}
REFS = "$*"  # a stored list of references: {"$*": "<hash><hash>..."}
HASH_LEN = 16  # hex digits of a payload address
_MEMORY_LISTS = ("surfaced", "discarded", "picked", "dropped")  # stored by reference
_INLINE = 256  # a text (a selector's raw output) longer than this is stored by reference
# Lists of a searched memdir kept by reference (a selector's answer, what was valid).
_DIR_LISTS = ("raw_names", "valid", "invalid", "skipped", "raw_output")


def payload_hash(value: Any) -> str:
    """Content address of a JSON value: 16 hex digits of SHA-256 of its sorted-key,
    compact JSON (`canonical_key`). Readers never recompute it, so a folder written
    before (when the stdlib's text was hashed) still reads; resuming one only stores
    again the payloads it meets again."""
    return _hash_of(canonical_key(value))


def _hash_of(key: str | bytes) -> str:
    return hashlib.sha256(key if isinstance(key, bytes) else key.encode()).hexdigest()[:HASH_LEN]


class PayloadStore:
    """Values stored once by content hash; `pending()` hands out the ones not yet written."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self._known = set(known)
        self._pending: dict[str, Any] = {}
        # Hashes of items that recur (manifest lines, headers, verdicts): a text by
        # itself, anything else by its JSON (what its hash is taken of), so a repeat
        # costs one encode and no SHA-256.
        self._texts: dict[str, str] = {}
        self._encoded: dict[Any, str] = {}

    def ref(self, value: Any) -> dict[str, str]:
        return {REF: self._keep(value, payload_hash(value))}

    def _keep(self, value: Any, digest: str) -> str:
        if digest not in self._known:
            self._known.add(digest)
            self._pending[digest] = value
        return digest

    def refs(self, values: Iterable[Any], stored: Stored | None = None,
             root: str = "") -> dict[str, str] | list[Any]:
        """A list stored as one payload of its items' references (each item once too);
        `stored(item, root)`, when given, is what is kept of each item.

        Lists that recur whole (a turn's candidates under every selector) then cost
        one reference in the row, and lists that differ by an item (the next turn's
        manifest) share every other item. An empty list stays inline.
        """
        digests = "".join([self._digest(v, stored, root) for v in values])
        return self.ref({REFS: digests}) if digests else []

    def _digest(self, item: Any, stored: Stored | None = None, root: str = "") -> str:
        """The hash of `stored(item, root)` (of `item`, without `stored`), remembered
        while the memo stays under its bound: a repeat costs one encode and no SHA-256.
        The memo is keyed by what is stored, not by the item as it comes: that holds
        the session's root (an absolute path), and a long run's memo would then grow
        with every world instead of meeting the same headers again."""
        if stored is not None:
            item = stored(item, root)
        if isinstance(item, str):
            memo: dict[Any, str] = self._texts
            key: Any = item
        else:
            memo, key = self._encoded, canonical_key(item)
            if len(key) > _MEMO_CHARS:  # a long item (a memory's content): no copy kept
                return self._keep(item, _hash_of(key))
        digest = memo.get(key)
        if digest is None:
            if len(memo) >= _MEMO_ITEMS:  # a bound, whatever a run repeats
                memo.clear()
            if key is item:
                digest = memo[key] = self._keep(item, payload_hash(item))
            else:
                # Kept as an exact copy: orjson's bytes sit in an over-allocated buffer,
                # and keeping those raised a LoCoMo-sized run's peak from 469 to 513 MB
                # (measured, 12 000 rows, 6 selectors).
                exact = bytes(memoryview(key)) if isinstance(key, bytes) else key
                digest = memo[exact] = self._keep(item, _hash_of(key))
        return digest

    def maybe_ref(self, value: Any) -> Any:
        """`value` by reference when it is worth one (a non-empty list or a long text)."""
        if isinstance(value, list | tuple) and value:
            return self.ref(list(value))
        if isinstance(value, str) and len(value) > _INLINE:
            return self.ref(value)
        return value

    def pending(self) -> dict[str, Any]:
        """New values since the last call (the writer stores them before the rows)."""
        out, self._pending = self._pending, {}
        return out


_MEMO_ITEMS = 100_000  # recurring items whose hash is remembered, per kind
_MEMO_CHARS = 2_000  # ... when their JSON is at most this long (≤ ~400 MB)
Stored = Callable[[Any, str], Any]  # what is stored of a listed item, given the root


def _relative(path: Any, root: str) -> Any:
    if root and isinstance(path, str) and path.startswith(root):
        return path[len(root):].lstrip("/") or "."
    return path


def _candidate_item(item: Mapping[str, Any], root: str) -> dict[str, Any]:
    """A candidate header without its absolute path (its filename names the file)."""
    out = dict(item)  # a copy, then one key out: a third of a filtering comprehension
    out.pop("file_path", None)
    return out


def relative_header(header: Any, root: str) -> Any:
    """A memory's reminder header as stored: it names the file by absolute path, and
    the session's temporary root is cut from it (a row read back, or a report, shows
    the path inside the materialized world)."""
    if root and isinstance(header, str) and root in header:
        return header.replace(root.rstrip("/") + "/", "")
    return header


def _relative_item(item: Mapping[str, Any], root: str) -> dict[str, Any]:
    """A surfaced, picked or dropped memory with the session's root cut from its paths,
    so the same memory seen by two sessions is one payload."""
    out = {**item, "path": _relative(item.get("path"), root)} if "path" in item else dict(item)
    if "header" in out:
        out["header"] = relative_header(out["header"], root)
    return out


def compact_record(record: Mapping[str, Any], root: str, store: PayloadStore) -> dict[str, Any]:
    """The stored form of a `TurnRecord` dict (see the module docstring)."""
    out = dict(record)
    dirs = []
    for d in record.get("dirs") or ():
        candidates = store.refs(d.get("candidates") or (), _candidate_item)
        manifest = d.get("manifest") or ""
        entry = {**d, "memory_dir": _relative(d.get("memory_dir"), root),
                 "candidates": candidates,
                 "manifest": store.refs(manifest.split("\n")) if manifest else []}
        for name in _DIR_LISTS:
            if name in d:
                entry[name] = store.maybe_ref(d[name])
        dirs.append(entry)
    out["dirs"] = dirs
    for name in _MEMORY_LISTS:
        out[name] = store.refs(record.get(name) or (), _relative_item, root)
    return out


def compact_judgement(data: Mapping[str, Any], store: PayloadStore) -> dict[str, Any]:
    """A judgement's verdict lists stored by reference (the label judge grades every
    candidate, the same way for every selector of a turn)."""
    out = dict(data)
    for name in ("verdicts", "candidate_verdicts"):
        if out.get(name):
            out[name] = store.refs(out[name])
    return out


_MISSING = object()


def _is_ref(value: Any) -> bool:
    # Stored values are JSON, so a reference is a dict (a plain check: an ABC's is slow).
    return isinstance(value, dict) and len(value) == 1 and REF in value


def _listed(raw: Any) -> list[str] | None:
    """The item hashes of a stored list of references (`{"$*": ...}`), else None."""
    if not (isinstance(raw, dict) and len(raw) == 1 and isinstance(raw.get(REFS), str)):
        return None
    joined = raw[REFS]
    return [joined[i:i + HASH_LEN] for i in range(0, len(joined), HASH_LEN)]


class Resolver:
    """Resolves payload references; each distinct payload is parsed once and shared.

    `lookup` maps a hash to its stored value (a dict, or a lazy reader of
    `payloads.jsonl`). Resolved values and anything built from them (`memo`) are
    kept in a bounded cache (the oldest entry leaves first: a hit costs one lookup,
    and a payload evicted while still in use is only read again), so rows that
    repeat a payload share one object and memory stays bounded however long the
    results file is. Values handed out are shared: treat them as read-only.
    """

    def __init__(self, lookup: Mapping[str, Any], size: int = 16_384) -> None:
        self._lookup = lookup
        self._size = size
        self._cache: OrderedDict[Any, Any] = OrderedDict()

    def memo(self, key: Any, build: Callable[..., Any], *args: Any) -> Any:
        """`build(*args)`, kept under `key` (args rather than a closure: a row
        resolves dozens of payloads, a list of references one per item)."""
        cache = self._cache
        value = cache.get(key, _MISSING)
        if value is _MISSING:
            value = cache[key] = build(*args)
            if len(cache) > self._size:
                cache.popitem(last=False)
        return value

    def _fetch(self, digest: str) -> Any:
        try:
            raw = self._lookup[digest]
        except KeyError:
            raise MemevalError(f"payload {digest} is missing from payloads.jsonl; the run "
                               "folder is incomplete. Rerun the same command to repair it.") \
                from None
        digests = _listed(raw)
        if digests is None:
            return self.resolve(raw)
        get, memo, fetch = self._cache.get, self.memo, self._fetch
        items = [get(digest, _MISSING) for digest in digests]
        for n, item in enumerate(items):  # most items were met before: fetch the rest
            if item is _MISSING:
                items[n] = memo(digests[n], fetch, digests[n])
        return items

    def each(self, value: Any, kind: str, build: Callable[[Any], Any]) -> list[Any]:
        """`[build(item) for item in self.resolve(value)]`, each item built once per
        distinct payload (kept under `(kind, hash)`): lists that differ by an item
        then share every other item's object, not only its parsed JSON."""
        digests = _listed(self._lookup.get(value[REF])) if _is_ref(value) else None
        if digests is None:
            return [build(item) for item in self.resolve(value)]
        memo, built = self.memo, self._built
        return [memo((kind, digest), built, build, digest) for digest in digests]

    def _built(self, build: Callable[[Any], Any], digest: str) -> Any:
        return build(self.memo(digest, self._fetch, digest))

    def resolve(self, value: Any) -> Any:
        """`value` with every reference in it (or in a list it is) replaced."""
        if _is_ref(value):
            digest = value[REF]
            return self.memo(digest, self._fetch, digest)
        if isinstance(value, list) and any(  # `_is_ref`, inline: a call per item costs
                isinstance(v, dict) and len(v) == 1 and REF in v for v in value):
            return [self.resolve(v) for v in value]
        return value

    def key(self, value: Any) -> Any:
        """A cache key for a stored value: its hash when it is a reference."""
        return value[REF] if _is_ref(value) else None


def as_resolver(payloads: Mapping[str, Any] | Resolver | None) -> Resolver:
    return payloads if isinstance(payloads, Resolver) else Resolver(payloads or {})


def expand_record(record: Mapping[str, Any], payloads: Mapping[str, Any] | Resolver, *,
                  searches: bool = True) -> dict[str, Any]:
    """Inverse of `compact_record`, except for the paths (left relative to the root).
    `searches=False` leaves `dirs` (manifests, candidate headers) empty, for readers
    that never look at them."""
    resolver = as_resolver(payloads)
    out = dict(record)
    dirs = []
    for d in record.get("dirs") or () if searches else ():
        manifest = d.get("manifest")
        if isinstance(manifest, list) or _is_ref(manifest):
            key = resolver.key(manifest)
            build = lambda m=manifest: "\n".join(resolver.resolve(m))  # noqa: E731
            manifest = build() if key is None else resolver.memo(("manifest", key), build)
        raw = d.get("candidates") or []
        memory_dir = d.get("memory_dir", "")

        def headers(raw: Any = raw, memory_dir: Any = memory_dir) -> list[dict[str, Any]]:
            out = []
            for c in resolver.resolve(raw):
                header = dict(c)
                header.setdefault("file_path", f"{memory_dir}/{header['filename']}")
                out.append(header)
            return out

        key = resolver.key(raw)
        candidates = headers() if key is None else resolver.memo(("candidates", key, memory_dir),
                                                                 headers)
        dirs.append({**d, "manifest": manifest or "", "candidates": candidates,
                     **{name: resolver.resolve(d[name]) for name in _DIR_LISTS if name in d}})
    out["dirs"] = dirs
    for name in _MEMORY_LISTS:
        if name in record:
            out[name] = resolver.resolve(record.get(name) or [])
    return out


def expand_judgement(data: Mapping[str, Any], turn_id: str,
                     payloads: Mapping[str, Any] | Resolver) -> Judgement:
    """A stored judgement, its verdict lists parsed once per distinct payload."""
    resolver = as_resolver(payloads)
    parsed: dict[str, Any] = {}
    for name in ("verdicts", "candidate_verdicts"):
        value = data.get(name)
        key = resolver.key(value)

        def build(value: Any = value) -> tuple[MemoryVerdict, ...] | None:
            return None if value is None else tuple(
                resolver.each(value, "verdict", MemoryVerdict.from_dict))

        parsed[name] = build() if key is None else resolver.memo(("verdicts", key), build)
    return Judgement.from_dict({**data, "verdicts": parsed["verdicts"] or (),
                                "candidate_verdicts": parsed["candidate_verdicts"]}, turn_id)


def dangling_refs(value: Any, lookup: Mapping[str, Any], checked: set[str]) -> list[str]:
    """The payload hashes `value` (a stored row, or part of one) points at, directly or
    through stored lists and nested payloads, that `lookup` lacks. `checked` holds
    the hashes already found present, so a run's shared payloads are read once."""
    missing: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            digest = item.get(REF) if len(item) == 1 else None
            if isinstance(digest, str):
                if digest not in checked:
                    if digest not in lookup:
                        missing.append(digest)
                        continue
                    checked.add(digest)
                    stored = lookup[digest]
                    listed = _listed(stored)
                    stack.extend([{REF: d} for d in listed] if listed is not None
                                 else [stored])
                continue
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return missing
