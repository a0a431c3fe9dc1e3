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

import math
from collections.abc import Iterable, Mapping
from typing import Any

from memeval.judges.base import Judgement
from memeval.labels import memory_key
from memeval.record import TurnResult
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
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else round(number, 4)


def outcome_tags(score: Mapping[str, Any], result: TurnResult) -> list[str]:
    """The outcome filters a scored turn answers to (a turn can be a miss and noisy)."""
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
    if result.discarded:
        tags.append("discarded")
    if result.skipped and result.skipped != "no-tool-use-discarded":
        tags.append("skipped")
    return tags


ScoreIndex = Mapping[tuple[str, str, str, int, str], Mapping[str, Any]]


def score_index(per_turn: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str, int, str],
                                                                 Mapping[str, Any]]:
    """summary.json's scored turns by (scenario, turn, selector, repeat, judge)."""
    return {(str(r["scenario"]), str(r["turn_id"]), str(r["selector"]), int(r.get("repeat") or 0),
             str(r["judge"])): r for r in per_turn}


class _Tables:
    """The tables a payload's views point into, and a cache of manifest views."""

    def __init__(self, strings: StringTable, entries: StringTable,
                 manifests: ListTable | None = None) -> None:
        self.strings, self.entries = strings, entries
        self.manifests = manifests if manifests is not None else ListTable()
        # Rows read from one folder share their manifest and candidate objects, so a
        # manifest seen by six selectors is paired with its keys once. The entry keeps
        # the candidates alive, so their id cannot be reused while it is cached.
        self._manifest_views: dict[tuple[str, str, int], tuple[Any, dict[str, Any]]] = {}

    def manifest(self, scope: str, manifest: str, candidates: Any) -> dict[str, Any]:
        key = (scope, manifest, id(candidates))
        hit = self._manifest_views.get(key)
        if hit is not None and hit[0] is candidates:
            return hit[1]
        lines = manifest.split("\n") if manifest else []
        keys = [memory_key(scope, str(c.get("filename", ""))) for c in candidates or []]
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
        if len(self._manifest_views) > 4096:
            self._manifest_views.clear()
        self._manifest_views[key] = (candidates, view)
        return view


def _dir_view(d: Mapping[str, Any], tables: _Tables) -> dict[str, Any]:
    strings = tables.strings
    scope = str(d.get("scope", "project"))
    view: dict[str, Any] = {
        "scope": scope,
        "called": bool(d.get("called")),
        "err": d.get("error"),
        "scanned": d.get("scanned"),
        "raw": strings.ref(d.get("raw_output")) if d.get("raw_output") else None,
        "names": [str(n) for n in d.get("raw_names") or []],
        "invalid": [[str(i.get("name")), str(i.get("reason"))] for i in d.get("invalid") or []],
    }
    view.update(tables.manifest(scope, str(d.get("manifest") or ""), d.get("candidates") or []))
    return view


def _shown(record: Mapping[str, Any], strings: StringTable) -> list[dict[str, Any]]:
    """What reached the model (or would have, for a discarded turn), exactly as sent."""
    out = []
    for discarded, name in ((False, "surfaced"), (True, "discarded")):
        for memory in record.get(name) or []:
            text = render_system_reminder(memory.get("header", ""), memory.get("content", ""))
            out.append({"key": memory.get("key"), "rem": strings.ref(text),
                        "trunc": bool(memory.get("truncated")), "disc": discarded})
    return out


def _judge_view(judgement: Judgement, score: Mapping[str, Any], result: TurnResult,
                strings: StringTable) -> dict[str, Any]:
    labels = judgement.relevant is not None  # a label judge's verdicts restate the labels

    def verdicts(items: Iterable[Any]) -> list[list[Any]]:
        return [[v.key, v.verdict, strings.ref(v.reason or (LABEL_REASONS.get(v.verdict, "")
                                                            if labels else ""))]
                for v in items]

    graded = judgement.candidate_verdicts
    return {
        "name": judgement.judge,
        "p": _num(score.get("precision")), "r": _num(score.get("recall")),
        "f1": _num(score.get("f1")), "fp": _num(score.get("false_positives")),
        "out": str(score.get("outcome") or "unscored"),
        "why": score.get("unscored_reason"),
        "err": judgement.error,
        "tags": outcome_tags(score, result),
        "v": verdicts(judgement.verdicts),
        "cv": verdicts(graded) if graded is not None and not labels else None,
        "usage": _usage(judgement.usage.to_dict()),
    }


def _usage(usage: Any) -> dict[str, Any]:
    u = usage if isinstance(usage, Mapping) else {}
    return {"calls": int(u.get("calls", 0) or 0), "in": int(u.get("input_tokens", 0) or 0),
            "out": int(u.get("output_tokens", 0) or 0),
            "cost": None if u.get("unpriced") else round(float(u.get("cost_usd", 0) or 0), 6),
            "lat": round(float(u.get("latency_s", 0) or 0), 3)}


def build_turn_views(results: Iterable[TurnResult], scores: ScoreIndex, main: str | None,
                     strings: StringTable, entries: StringTable,
                     manifests: ListTable | None = None) -> list[dict[str, Any]]:
    """One compact view per session turn, every judge's scores, the main judge first.

    Args:
        results: the run's rows, read once (an iterator will do: no row is kept).
        scores: summary.json's scored turns (`score_index`); the report never re-scores.
        main: the judge whose scores head the table.
        strings: the string table the views reference.
        entries: manifest entries, each `"<line ref> <memory key>"`.
        manifests: lists of entries, one per distinct manifest, referenced by dirs.
    """
    tables = _Tables(strings, entries, manifests)
    views = []
    for result in results:
        record = result.record
        order = sorted(result.judgements, key=lambda j: (j != main, j))
        judges = [_judge_view(result.judgements[j], scores.get((*result.key, j), {}), result,
                              strings) for j in order]
        head = judges[0] if judges else {"p": None, "r": None, "f1": None, "fp": None,
                                         "out": "unscored", "tags": ["unscored"]}
        views.append({
            "id": 0,
            "sc": result.scenario, "t": result.turn_id, "ti": result.turn_index,
            "sel": result.selector, "rep": result.repeat, "cat": result.category,
            "q": strings.ref(result.query),
            "why": strings.ref(result.why) if result.why else None,
            "tools": [str(t) for t in record.get("recent_tools") or []],
            "events": [[str(e.get("tool")), bool(e.get("ok")), e.get("path")]
                       for e in record.get("tool_events") or []],
            "mentions": [str(m.get("agent_type") or m.get("raw")) for m in
                         record.get("mentions") or []],
            "rel": list(result.relevant), "acc": list(result.acceptable),
            "dirs": [_dir_view(d, tables) for d in record.get("dirs") or []],
            "picked": [str(p.get("key")) for p in record.get("picked") or []],
            "dropped": [[str(d.get("name")), str(d.get("reason"))]
                        for d in record.get("dropped") or []],
            "sel_keys": list(result.selected),
            "shown": _shown(record, strings),
            "skip": result.skipped,
            "errs": [*result.errors, *(f"judge {j}: {result.judgements[j].error}"
                                       for j in order if result.judgements[j].error)],
            "bytes": result.surfaced_bytes,
            "usage": _usage(result.selector_usage.to_dict()),
            "reach": {str(k): bool(v) for k, v in result.startup_reachable.items()},
            "p": head["p"], "r": head["r"], "f1": head["f1"], "fp": head["fp"],
            "out": head["out"], "tags": head["tags"],
            "j": judges,
        })
    views.sort(key=lambda v: (v["sc"], v["ti"], v["t"], v["sel"], v["rep"]))
    for index, view in enumerate(views):
        view["id"] = index
    return views
