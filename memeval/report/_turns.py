"""Per-turn data for the table and the drill-downs, compact enough for big runs.

One *turn view* is one session turn (scenario × turn × selector × repeat) with the
verdicts of every judge that scored it. Long strings that repeat across turns
(manifest lines, judge reasons, queries, reminders) are stored once in a string
table and referenced by index, which keeps a 2 000-turn report far below 10 MB.
Everything here is data; the page renders it with `textContent` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memeval.labels import memory_key
from memeval.session import render_system_reminder
from memeval.summary import GOLD_JUDGE, scored_frame

# Filter tags of a turn, in the order the outcome menu lists them.
OUTCOME_TAGS: tuple[str, ...] = (
    "hit", "partial", "miss", "false-positive", "abstain-correct", "error", "discarded",
    "skipped",
)


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


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else round(number, 4)


def outcome_tags(score: Mapping[str, Any], row: Mapping[str, Any]) -> list[str]:
    """The outcome filters a scored row answers to (a turn can be a miss and noisy)."""
    tags = []
    outcome = score["outcome"]
    if outcome == "exact":
        tags.append("hit")
    elif outcome == "partial":
        tags.append("partial")
    if outcome == "miss" or (outcome == "partial" and (score["recall"] or 0) < 1):
        tags.append("miss")
    if score["false_positives"]:
        tags.append("false-positive")
    if outcome == "abstained":
        tags.append("abstain-correct")
    if score["errored"]:
        tags.append("error")
    if row.get("discarded"):
        tags.append("discarded")
    if row.get("skipped") and row.get("skipped") != "no-tool-use-discarded":
        tags.append("skipped")
    return tags


def primary_judge(judges: Iterable[str]) -> str:
    """The judge whose scores fill the table: gold when it ran, else the first."""
    names = sorted(set(judges))
    if not names:
        return GOLD_JUDGE
    return GOLD_JUDGE if GOLD_JUDGE in names else names[0]


def turn_key(row: Mapping[str, Any]) -> tuple[str, str, str, int]:
    return (str(row["scenario"]), str(row["turn_id"]), str(row["selector"]),
            int(row.get("repeat", 0)))


def _dir_view(d: Mapping[str, Any], strings: StringTable,
              entries: StringTable) -> dict[str, Any]:
    scope = str(d.get("scope", "project"))
    manifest = str(d.get("manifest") or "")
    lines = manifest.split("\n") if manifest else []
    keys = [memory_key(scope, str(c.get("filename", ""))) for c in d.get("candidates") or []]
    view: dict[str, Any] = {
        "scope": scope,
        "called": bool(d.get("called")),
        "err": d.get("error"),
        "scanned": d.get("scanned"),
        "raw": strings.ref(d.get("raw_output")) if d.get("raw_output") else None,
        "names": [str(n) for n in d.get("raw_names") or []],
        "invalid": [[str(i.get("name")), str(i.get("reason"))] for i in d.get("invalid") or []],
    }
    # Manifest line i describes candidate i, and the same (line, key) entry recurs in
    # every turn that lists it, so each is stored once. When a description spans lines
    # the pairing is unknown: the page then shows the manifest text without marks.
    if len(lines) == len(keys):
        view["c"] = [entries.ref(f"{strings.ref(line)} {key}") for line, key in
                     zip(lines, keys, strict=True)]
        view["lines"] = None
    else:
        view["c"] = None
        view["lines"] = [strings.ref(line) for line in lines]
    return view


def _shown(record: Mapping[str, Any], strings: StringTable) -> list[dict[str, Any]]:
    """What reached the model (or would have, for a discarded turn), exactly as sent."""
    out = []
    reminders = list(record.get("system_reminders") or [])
    for position, memory in enumerate(record.get("surfaced") or []):
        text = (reminders[position] if position < len(reminders) else
                render_system_reminder(memory.get("header", ""), memory.get("content", "")))
        out.append({"key": memory.get("key"), "rem": strings.ref(text),
                    "trunc": bool(memory.get("truncated")), "disc": False})
    for memory in record.get("discarded") or []:
        text = render_system_reminder(memory.get("header", ""), memory.get("content", ""))
        out.append({"key": memory.get("key"), "rem": strings.ref(text),
                    "trunc": bool(memory.get("truncated")), "disc": True})
    return out


def _judge_view(row: Mapping[str, Any], score: Mapping[str, Any],
                strings: StringTable) -> dict[str, Any]:
    graded = row.get("candidate_verdicts")
    # The gold judge's candidate verdicts repeat the labels; only a model judge's say more.
    keep_graded = graded is not None and row.get("judge") != GOLD_JUDGE
    return {
        "name": str(row.get("judge")),
        "p": _num(score["precision"]), "r": _num(score["recall"]), "f1": _num(score["f1"]),
        "fp": int(score["false_positives"]), "out": str(score["outcome"]),
        "tags": outcome_tags(score, row),
        "v": [[str(v.get("key")), str(v.get("verdict")), strings.ref(v.get("reason"))]
              for v in row.get("verdicts") or []],
        "cv": [[str(v.get("key")), str(v.get("verdict")), strings.ref(v.get("reason"))]
               for v in graded] if keep_graded else None,
        "usage": _usage(row.get("judge_usage")),
    }


def _usage(usage: Any) -> dict[str, Any]:
    u = usage if isinstance(usage, Mapping) else {}
    return {"calls": int(u.get("calls", 0) or 0), "in": int(u.get("input_tokens", 0) or 0),
            "out": int(u.get("output_tokens", 0) or 0),
            "cost": round(float(u.get("cost_usd", 0) or 0), 6),
            "lat": round(float(u.get("latency_s", 0) or 0), 3)}


def build_turn_views(rows: Sequence[Mapping[str, Any]], strings: StringTable,
                     entries: StringTable) -> list[dict[str, Any]]:
    """One compact view per session turn, judges merged, primary judge first.

    Args:
        rows: `results.jsonl` rows.
        strings: the string table the views reference.
        entries: manifest entries, each `"<line ref> <memory key>"`, referenced by dirs.
    """
    frame = scored_frame(rows)
    scores = frame.to_dict(orient="records") if not frame.empty else []
    main = primary_judge(r.get("judge", GOLD_JUDGE) for r in rows)
    grouped: dict[tuple[str, str, str, int], list[tuple[Mapping[str, Any], Mapping[str, Any]]]]
    grouped = {}
    for row, score in zip(rows, scores, strict=True):
        grouped.setdefault(turn_key(row), []).append((row, score))
    views = []
    for key, pairs in grouped.items():
        pairs.sort(key=lambda p: (p[0].get("judge") != main, str(p[0].get("judge"))))
        row, score = pairs[0]
        record = row.get("record") or {}
        judges = [_judge_view(r, s, strings) for r, s in pairs]
        head = judges[0]
        views.append({
            "id": len(views),
            "sc": key[0], "t": key[1], "ti": int(row.get("turn_index", 0) or 0),
            "sel": key[2], "rep": key[3],
            "cat": str(row.get("category") or "uncategorized"),
            "q": strings.ref(row.get("query")),
            "why": strings.ref(row.get("why")) if row.get("why") else None,
            "tools": [str(t) for t in record.get("recent_tools") or []],
            "events": [[str(e.get("tool")), bool(e.get("ok")), e.get("path")]
                       for e in record.get("tool_events") or []],
            "mentions": [str(m.get("agent_type") or m.get("raw")) for m in
                         record.get("mentions") or []],
            "rel": list(row.get("relevant") or []),
            "acc": list(row.get("acceptable") or []),
            "dirs": [_dir_view(d, strings, entries) for d in record.get("dirs") or []],
            "picked": [str(p.get("key")) for p in record.get("picked") or []],
            "dropped": [[str(d.get("name")), str(d.get("reason"))]
                        for d in record.get("dropped") or []],
            "sel_keys": [str(k) for k in row.get("selected") or []],
            "shown": _shown(record, strings),
            "skip": row.get("skipped"),
            "errs": [str(e) for e in row.get("errors") or []],
            "bytes": int(row.get("surfaced_bytes", 0) or 0),
            "usage": _usage(row.get("selector_usage")),
            "reach": {str(k): bool(v) for k, v in (row.get("startup_reachable") or {}).items()},
            "p": head["p"], "r": head["r"], "f1": head["f1"], "fp": head["fp"],
            "out": head["out"], "tags": head["tags"],
            "j": judges,
        })
    views.sort(key=lambda v: (v["sc"], v["ti"], v["t"], v["sel"], v["rep"]))
    for index, view in enumerate(views):
        view["id"] = index
    return views
