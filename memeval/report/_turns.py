"""Per-turn data for the table and the drill-downs, compact enough for big runs.

One *turn view* is one session turn (scenario × turn × selector × repeat) with the
verdicts of every judge that scored it. Long strings that repeat across turns
(manifest lines, judge reasons, queries, reminders) are stored once in a string
table and referenced by index, and so is each distinct manifest (the list of its
entries, which every selector of a turn shares under gold history). The page then
carries the whole table gzip-compressed (`memeval.report._html.pack_json`), which
keeps a LoCoMo-sized report under 10 MB with every turn's drill-down exact.
Everything here is data; the page renders it with `textContent` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memeval.jsonenc import finite
from memeval.judges.base import Judgement
from memeval.labels import memory_key
from memeval.log import RecordedTurn, SearchedDir, TurnResult, relative_header
from memeval.session import render_system_reminder

# Filter tags of a turn, in the order the outcome menu lists them.
OUTCOME_TAGS: tuple[str, ...] = (
    "hit", "partial", "miss", "false-positive", "abstain-correct", "unscored", "error",
    "discarded", "skipped",
)
# What a label judge's verdict means, shown instead of storing it on every verdict.
LABEL_REASONS: dict[str, str] = {
    "relevant": "labelled relevant",
    "acceptable": "labelled acceptable (harmless)",
    "irrelevant": "not in the turn's relevant or acceptable labels",
}


class StringTable:
    """Interns strings: each distinct text is stored once, rows hold its index."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self.items: list[str] = []

    def ref(self, text: Any) -> int:
        value = "" if text is None else str(text)
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self.items)
            self.items.append(value)
        return found


class ListTable:
    """Interns lists of indexes (a manifest's entries): each distinct list once."""

    def __init__(self) -> None:
        self._index: dict[tuple[int, ...], int] = {}
        self.items: list[list[int]] = []

    def ref(self, values: Iterable[int]) -> int:
        key = tuple(values)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.items)
            self.items.append(list(key))
        return found


def _num(value: Any) -> float | None:
    number = finite(value)
    return None if number is None else round(number, 4)


def outcome_tags(score: Mapping[str, Any], result: TurnResult) -> list[str]:
    """The outcome filters a scored turn answers to (a turn can be a miss and noisy)."""
    return _tags(score, result.discarded, result.skipped)


def _tags(score: Mapping[str, Any], discarded: bool, skipped: str | None) -> list[str]:
    tags = []
    outcome = score.get("outcome")
    if outcome == "exact":
        tags.append("hit")
    elif outcome == "partial":
        tags.append("partial")
    if outcome == "miss" or (outcome == "partial" and (score.get("recall") or 0) < 1):
        tags.append("miss")
    if score.get("false_positives"):
        tags.append("false-positive")
    if outcome == "abstained":
        tags.append("abstain-correct")
    if outcome == "unscored":
        tags.append("unscored")
    if score.get("selector_error") or score.get("judge_error"):
        tags.append("error")
    if discarded:
        tags.append("discarded")
    if skipped and skipped != "no-tool-use-discarded":
        tags.append("skipped")
    return tags


ScoreIndex = Mapping[tuple[str, str, str, int, str], Mapping[str, Any]]


def score_index(per_turn: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str, int, str],
                                                                 Mapping[str, Any]]:
    """summary.json's scored turns by (scenario, turn, selector, repeat, judge)."""
    return {(str(r["scenario"]), str(r["turn_id"]), str(r["selector"]), int(r.get("repeat") or 0),
             str(r["judge"])): r for r in per_turn}


_MANIFEST_VIEWS = 512  # manifest views kept (each holds its manifest's text)


class _Tables:
    """The tables a payload's views point into, and a cache of manifest views."""

    def __init__(self, strings: StringTable, entries: StringTable,
                 manifests: ListTable | None = None) -> None:
        self.strings, self.entries = strings, entries
        self.manifests = manifests if manifests is not None else ListTable()
        # A manifest recurs in every selector's row of a turn (and in every turn whose
        # memdir did not change): its view is built once, found by what it is made of.
        self._manifest_views: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}

    def manifest(self, scope: str, manifest: str, candidates: Any) -> dict[str, Any]:
        names = tuple([str(c.get("filename", "")) for c in candidates or ()])
        key = (scope, manifest, names)
        view = self._manifest_views.get(key)
        if view is not None:
            return view
        lines = manifest.split("\n") if manifest else []
        keys = [memory_key(scope, name) for name in names]
        # Manifest line i describes candidate i, and the same (line, key) entry recurs
        # in every turn that lists it, so each is stored once. When a description spans
        # lines the pairing is unknown: the page then shows the manifest text without
        # marks.
        if len(lines) == len(keys):
            view = {"m": self.manifests.ref(
                self.entries.ref(f"{self.strings.ref(line)} {key}")
                for line, key in zip(lines, keys, strict=True)), "lines": None}
        else:
            view = {"m": None, "lines": [self.strings.ref(line) for line in lines]}
        if len(self._manifest_views) >= _MANIFEST_VIEWS:  # rows of a turn come together
            self._manifest_views.clear()
        self._manifest_views[key] = view
        return view


def _dir_view(d: SearchedDir, tables: _Tables) -> dict[str, Any]:
    strings = tables.strings
    view: dict[str, Any] = {
        "scope": d.scope,
        "called": d.called,
        "err": d.error,
        "scanned": d.scanned,
        "raw": strings.ref(d.raw_output) if d.raw_output else None,
        "names": [str(n) for n in d.raw_names],
        "invalid": [[str(i.get("name")), str(i.get("reason"))] for i in d.invalid],
    }
    view.update(tables.manifest(d.scope, d.manifest, d.candidates))
    return view


def _shown(record: RecordedTurn, strings: StringTable, root: str) -> list[dict[str, Any]]:
    """What reached the model (or would have, for a discarded turn), exactly as sent
    but for the session's temporary root, cut from the paths as the stored row has it
    (`root` is empty for a row read back, set for one met as it was written)."""
    out = []
    for discarded, memories in ((False, record.surfaced), (True, record.discarded)):
        for memory in memories:
            text = render_system_reminder(relative_header(memory.header, root), memory.content)
            out.append({"key": memory.key, "rem": strings.ref(text),
                        "trunc": bool(memory.truncated), "disc": discarded})
    return out


def _judge_evidence(judgement: Judgement, strings: StringTable) -> dict[str, Any]:
    """What a judge said about a turn, before its scores (which come from the summary)."""
    labels = judgement.relevant is not None  # a label judge's verdicts restate the labels

    def verdicts(items: Iterable[Any]) -> list[list[Any]]:
        return [[v.key, v.verdict, strings.ref(v.reason or (LABEL_REASONS.get(v.verdict, "")
                                                            if labels else ""))]
                for v in items]

    graded = judgement.candidate_verdicts
    return {
        "name": judgement.judge,
        "err": judgement.error,
        "v": verdicts(judgement.verdicts),
        "cv": verdicts(graded) if graded is not None and not labels else None,
        "usage": _usage(judgement.usage.to_dict()),
    }


def _judge_view(evidence: Mapping[str, Any], score: Mapping[str, Any], discarded: bool,
                skipped: str | None) -> dict[str, Any]:
    return {
        "name": evidence["name"],
        "p": _num(score.get("precision")), "r": _num(score.get("recall")),
        "f1": _num(score.get("f1")), "fp": _num(score.get("false_positives")),
        "out": str(score.get("outcome") or "unscored"),
        "why": score.get("unscored_reason"),
        "err": evidence["err"],
        "tags": _tags(score, discarded, skipped),
        "v": evidence["v"], "cv": evidence["cv"], "usage": evidence["usage"],
    }


def _cost(value: Any) -> float | None:
    """A turn's cost in USD; None when it is unknown (it was not a finite number, and
    was stored as null)."""
    cost = finite(value)
    return None if cost is None else round(cost, 6)


def _usage(usage: Any) -> dict[str, Any]:
    u = usage if isinstance(usage, Mapping) else {}
    return {"calls": int(u.get("calls", 0) or 0), "in": int(u.get("input_tokens", 0) or 0),
            "out": int(u.get("output_tokens", 0) or 0),
            "cost": None if u.get("unpriced") else _cost(u.get("cost_usd", 0)),
            "lat": round(float(u.get("latency_s", 0) or 0), 3)}


_UNSCORED_HEAD = {"p": None, "r": None, "f1": None, "fp": None, "out": "unscored",
                  "tags": ["unscored"]}


class TurnViews:
    """The turn views of a run, built as its rows go by (one pass, no row kept) and
    completed with the summary's scores once it exists: a run's summary and report
    then share a single read of `results.jsonl`.

    Args:
        strings: the string table the views reference.
        entries: manifest entries, each `"<line ref> <memory key>"`.
        manifests: lists of entries, one per distinct manifest, referenced by dirs.
    """

    def __init__(self, strings: StringTable | None = None, entries: StringTable | None = None,
                 manifests: ListTable | None = None) -> None:
        self.tables = _Tables(strings or StringTable(), entries or StringTable(), manifests)
        self._views: list[dict[str, Any]] = []
        self._main: str | None = None  # the first label judge met, as the summary picks
        # Per view, what its scores are joined with: the row's key, the turn's own errors,
        # whether it was discarded or skipped, and each judge's evidence.
        self._open: list[tuple[tuple[str, str, str, int], list[str], bool, str | None,
                               dict[str, dict[str, Any]]]] = []

    def __len__(self) -> int:
        return len(self._views)

    def add(self, result: TurnResult) -> None:
        """One row's view, all but what depends on the scores."""
        record, strings = result.record, self.tables.strings
        # The judges' strings enter the table first, the main judge leading, as when
        # views were built after the summary (same page bytes). The main judge is the
        # summary's: the first label judge met, else the first name (see `finish`).
        judgements = result.judgements
        if self._main is None:
            self._main = result.label_judge
        main = self._main
        evidence = {name: _judge_evidence(judgements[name], strings)
                    for name in sorted(judgements, key=lambda j: (j != main, j))}
        self._views.append({
            "id": 0,
            "sc": result.scenario, "t": result.turn_id, "ti": result.turn_index,
            "sel": result.selector, "rep": result.repeat, "cat": result.category,
            "q": strings.ref(result.query),
            "why": strings.ref(result.why) if result.why else None,
            "tools": [str(t) for t in record.recent_tools],
            "events": [[str(e.get("tool")), bool(e.get("ok")), e.get("path")]
                       for e in record.tool_events],
            "mentions": [str(m.get("agent_type") or m.get("raw")) for m in record.mentions],
            "rel": list(result.relevant), "acc": list(result.acceptable),
            "dirs": [_dir_view(d, self.tables) for d in record.dirs],
            "picked": [str(p.get("key")) for p in record.picked],
            "dropped": [[str(d.get("name")), str(d.get("reason"))] for d in record.dropped],
            "sel_keys": list(result.selected),
            "shown": _shown(record, strings, result.root),
            "skip": result.skipped,
            # placed after "errs" by `finish`, as the page's data has always had them
            "bytes": result.surfaced_bytes,
            "usage": _usage(result.selector_usage.to_dict()),
            "reach": {str(k): bool(v) for k, v in result.startup_reachable.items()},
        })
        self._open.append((result.key, list(result.errors), result.discarded, result.skipped,
                           evidence))

    def finish(self, scores: ScoreIndex, main: str | None) -> list[dict[str, Any]]:
        """The views with every judge's scores, the main judge first, sorted by turn."""
        views, self._views = self._views, []
        for view, (key, errors, discarded, skipped, evidence) in zip(
                views, self._open, strict=True):
            order = sorted(evidence, key=lambda j: (j != main, j))
            judges = [_judge_view(evidence[j], scores.get((*key, j), {}), discarded, skipped)
                      for j in order]
            head = judges[0] if judges else _UNSCORED_HEAD
            view.update({
                "errs": [*errors, *(f"judge {j}: {evidence[j]['err']}" for j in order
                                    if evidence[j]["err"])],
                "bytes": view.pop("bytes"), "usage": view.pop("usage"),
                "reach": view.pop("reach"),
                "p": head["p"], "r": head["r"], "f1": head["f1"], "fp": head["fp"],
                "out": head["out"], "tags": list(head["tags"]),
                "j": judges,
            })
        self._open = []
        views.sort(key=lambda v: (v["sc"], v["ti"], v["t"], v["sel"], v["rep"]))
        for index, view in enumerate(views):
            view["id"] = index
        return views
