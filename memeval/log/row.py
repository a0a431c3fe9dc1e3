"""One row of `results.jsonl`: a turn as one selector played it, with every judge's say.

A `TurnResult` is the unit of a run's results: the turn's identity and labels, what
the selector surfaced, the session's full `TurnRecord` (for drill-down) and one
`Judgement` per judge. Rows are one per turn, never one per judge, so the record is
stored once however many judges ran. Scoring lives in `memeval.scoring.metrics`; a row only
holds evidence.

On disk the record is compacted (see `PayloadStore`): paths are made relative to
the session's temporary root, text derivable from other fields is dropped, and every
large value that recurs across turns and selectors is stored once in
`payloads.jsonl` and referenced by hash: manifest lines and candidate headers (and
the lists of them), the selector's answer, surfaced/discarded/picked/dropped
memories with their contents, and the judges' verdict lists. A row is then a couple
of KB of scalars and references (was 40-50 KB at 200 candidates); `Resolver` reads
them back.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memeval.errors import MemevalError
from memeval.jsonenc import canonical_key
from memeval.judges.base import Judgement, MemoryVerdict
from memeval.labels import memory_key
from memeval.usage import Usage

# v3 moved every large repeated value out of the row (v2 stored only the manifest's
# lines and candidate headers by reference); v2 rows are still read.
SCHEMA_VERSION = 3
READABLE_VERSIONS = (2, 3)
_REF = "$"  # a payload reference: {"$": "<hash>"}
_REFS = "$*"  # a stored list of references: {"$*": "<hash><hash>..."}
HASH_LEN = 16  # hex digits of a payload address
_DERIVED = ("attachment", "system_reminders")  # rebuilt from `surfaced` when needed
_MEMORY_LISTS = ("surfaced", "discarded", "picked", "dropped")  # stored by reference
_INLINE = 256  # a text (a selector's raw output) longer than this is stored by reference
# Lists of a searched memdir kept by reference (a selector's answer, what was valid).
_DIR_LISTS = ("raw_names", "valid", "invalid", "skipped", "raw_output")
_ROW_LISTS = ("earlier_relevant", "in_context")  # grow with the scenario: by reference


@dataclass(frozen=True)
class TurnResult:
    """One scenario turn × selector × repeat, and how each judge graded it.

    Args:
        scenario: the scenario id (also the cluster turns are resampled by).
        scenario_path: the scenario file.
        turn_id: the turn's id; `turn_index` its position in the scenario.
        selector: the selector spec.
        repeat: which repeat of the session this is.
        category: the gold label's category; `why` its defence; `tags` extra labels.
        answer: the reference answer, when the source has one.
        query: the user's message.
        relevant: gold-relevant memory keys; `acceptable` gold-harmless ones.
        selected: memory keys that reached the model (or would have, when discarded).
        discarded: the surfaced memories were thrown away (the turn used no tool).
        skipped: why recall did not run, if it did not.
        surfaced_bytes: UTF-8 bytes of what was delivered.
        selector_usage: what the selector's calls cost.
        selector_error: why the selector gave no usable answer, if it did not.
        errors: every problem of the turn that is not a judge's (selector, reads).
        startup_reachable: relevant project memory -> its index line survives startup.
        judgements: judge spec -> its grading of the turn.
        record: the session's `TurnRecord.to_dict()`.
        history: `gold` (played from the state the labels imply) or `own` (the
            selector's own session end to end).
        in_context: memory keys already in the transcript when the turn began.
        earlier_relevant: keys labelled relevant at an earlier turn of the scenario.
        root: the session's temporary folder (not stored; paths are made relative to it).
    """

    scenario: str
    scenario_path: str
    turn_id: str
    turn_index: int
    selector: str
    repeat: int
    category: str
    why: str
    query: str
    relevant: tuple[str, ...]
    acceptable: tuple[str, ...]
    selected: tuple[str, ...]
    discarded: bool = False
    skipped: str | None = None
    surfaced_bytes: int = 0
    selector_usage: Usage = field(default_factory=Usage)
    selector_error: str | None = None
    errors: tuple[str, ...] = ()
    startup_reachable: Mapping[str, bool] = field(default_factory=dict)
    judgements: Mapping[str, Judgement] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    answer: str | None = None
    history: str = "own"
    in_context: tuple[str, ...] = ()
    earlier_relevant: tuple[str, ...] = ()
    root: str = field(default="", compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The row's identity: (scenario, turn, selector, repeat)."""
        return (self.scenario, self.turn_id, self.selector, self.repeat)

    @property
    def turn_key(self) -> tuple[str, str, int, int]:
        """(scenario, selector, repeat, turn index): the turn resume and merge go by."""
        return (self.scenario, self.selector, self.repeat, self.turn_index)

    @property
    def label_judge(self) -> str | None:
        """The first of the row's judges that states its labels (the gold judge on a
        labelled turn), or None."""
        return next((name for name, j in self.judgements.items() if j.relevant is not None),
                    None)

    @property
    def session_key(self) -> tuple[str, str, int]:
        """The session the row belongs to: (scenario, selector, repeat)."""
        return (self.scenario, self.selector, self.repeat)

    @property
    def candidates(self) -> tuple[str, ...]:
        """Memory keys of every candidate shown to the selector, in manifest order."""
        return tuple(memory_key(d["scope"], c["filename"]) for d in self.record.get("dirs") or ()
                     for c in d.get("candidates") or ())

    def to_dict(self, payloads: PayloadStore | None = None) -> dict[str, Any]:
        """JSON-ready; with `payloads`, the record is compacted into it."""
        record = dict(self.record) if payloads is None else compact_record(
            self.record, self.root, payloads)
        return {
            "v": SCHEMA_VERSION,
            "scenario": self.scenario, "scenario_path": self.scenario_path,
            "turn_id": self.turn_id, "turn_index": self.turn_index,
            "selector": self.selector, "repeat": self.repeat,
            "category": self.category, "why": self.why, "tags": list(self.tags),
            "answer": self.answer,
            "query": self.query,
            "relevant": list(self.relevant), "acceptable": list(self.acceptable),
            "selected": list(self.selected),
            "history": self.history,
            **{name: list(getattr(self, name)) if payloads is None
               else payloads.maybe_ref(list(getattr(self, name))) for name in _ROW_LISTS},
            "discarded": self.discarded, "skipped": self.skipped,
            "surfaced_bytes": self.surfaced_bytes,
            "selector_usage": self.selector_usage.to_dict(),
            "selector_error": self.selector_error,
            "errors": list(self.errors),
            "startup_reachable": dict(self.startup_reachable),
            "judgements": [j.to_dict() if payloads is None else
                           compact_judgement(j.to_dict(), payloads)
                           for j in self.judgements.values()],
            "record": record,
        } | ({} if payloads is not None else {"root": self.root})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any],
                  payloads: Mapping[str, Any] | Resolver | None = None, *,
                  searches: bool = True) -> TurnResult:
        """Read a row back; `payloads` resolves the references of a compacted record
        (`searches=False`: without the record's memdir searches, see `expand_record`)."""
        version = data.get("v")
        if version not in READABLE_VERSIONS:
            raise SchemaMismatch(version)
        turn_id = str(data["turn_id"])
        resolver = as_resolver(payloads)
        judgements = [expand_judgement(j, turn_id, resolver) for j in data.get("judgements") or ()]
        return cls(
            scenario=str(data["scenario"]), scenario_path=str(data.get("scenario_path", "")),
            turn_id=turn_id, turn_index=int(data.get("turn_index", 0)),
            selector=str(data["selector"]), repeat=int(data.get("repeat", 0)),
            category=str(data.get("category") or "uncategorized"), why=str(data.get("why") or ""),
            tags=tuple(data.get("tags") or ()), query=str(data.get("query") or ""),
            answer=data.get("answer"),
            relevant=tuple(data.get("relevant") or ()),
            acceptable=tuple(data.get("acceptable") or ()),
            selected=tuple(data.get("selected") or ()),
            history=str(data.get("history") or "own"),
            in_context=tuple(resolver.resolve(data.get("in_context")) or ()),
            earlier_relevant=tuple(resolver.resolve(data.get("earlier_relevant")) or ()),
            discarded=bool(data.get("discarded")), skipped=data.get("skipped"),
            surfaced_bytes=int(data.get("surfaced_bytes") or 0),
            selector_usage=Usage.from_dict(data.get("selector_usage")),
            selector_error=data.get("selector_error"),
            errors=tuple(data.get("errors") or ()),
            startup_reachable=dict(data.get("startup_reachable") or {}),
            judgements={j.judge: j for j in judgements},
            record=expand_record(data.get("record") or {}, resolver, searches=searches),
            root=str(data.get("root") or ""),
        )


class SchemaMismatch(MemevalError):
    """A row written by another memeval version's results format."""

    def __init__(self, version: Any) -> None:
        wrote = "a memeval before 0.2 (rows had no version)" if version is None else \
            f"results format v{version}"
        readable = " and ".join(f"v{v}" for v in READABLE_VERSIONS)
        super().__init__(f"written by {wrote}; this memeval reads formats {readable}. "
                         "Rerun the evaluation into a new --out folder (or read it with "
                         "the memeval that wrote it).")


# -- compaction -----------------------------------------------------------------------

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
        return {_REF: self._keep(value, payload_hash(value))}

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
        return self.ref({_REFS: digests}) if digests else []

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
            else:  # kept as an exact copy: orjson's text sits in a buffer made to grow,
                # and keeping those fragmented the heap (+20 MB at a 6 000-row run's peak)
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
    out = {k: v for k, v in record.items() if k not in _DERIVED}
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
    return isinstance(value, dict) and len(value) == 1 and _REF in value


def _listed(raw: Any) -> list[str] | None:
    """The item hashes of a stored list of references (`{"$*": ...}`), else None."""
    if not (isinstance(raw, dict) and len(raw) == 1 and isinstance(raw.get(_REFS), str)):
        return None
    joined = raw[_REFS]
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
        digests = _listed(self._lookup.get(value[_REF])) if _is_ref(value) else None
        if digests is None:
            return [build(item) for item in self.resolve(value)]
        memo, built = self.memo, self._built
        return [memo((kind, digest), built, build, digest) for digest in digests]

    def _built(self, build: Callable[[Any], Any], digest: str) -> Any:
        return build(self.memo(digest, self._fetch, digest))

    def resolve(self, value: Any) -> Any:
        """`value` with every reference in it (or in a list it is) replaced."""
        if _is_ref(value):
            digest = value[_REF]
            return self.memo(digest, self._fetch, digest)
        if isinstance(value, list) and any(  # `_is_ref`, inline: a call per item costs
                isinstance(v, dict) and len(v) == 1 and _REF in v for v in value):
            return [self.resolve(v) for v in value]
        return value

    def key(self, value: Any) -> Any:
        """A cache key for a stored value: its hash when it is a reference."""
        return value[_REF] if _is_ref(value) else None


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
