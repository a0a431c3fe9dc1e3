"""`summary.json`: a pure function of `results.jsonl`.

Each row is scored against the labels of its own judge: the gold judge's labels are
the scenario's, another judge's are its verdicts (relevant → a hit, irrelevant → a
false positive; acceptable and unscored count in no denominator). Recall under a
model judge is only known when it graded every candidate; otherwise it is left out.
The summary keeps a compact per-turn table too, so the gate can pair a candidate run
with a baseline summary turn by turn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.judges.agreement import agreement
from memeval.judges.base import MemoryVerdict, ScoredTurn
from memeval.metrics import aggregate, pass_hat_k, per_turn_frame, repeat_summary
from memeval.results import RESULTS_FILE, SUMMARY_FILE, read_results, write_json
from memeval.usage import Usage

GOLD_JUDGE = "gold"
HEADLINE_METRICS: tuple[str, ...] = ("precision", "recall", "f1", "exact_match")
TURN_COLUMNS: tuple[str, ...] = (
    "scenario", "turn_id", "category", "selector", "judge", "repeat",
    "precision", "recall", "f1", "exact_match", "false_positives", "outcome", "errored",
)


def judged_labels(row: Mapping[str, Any]) -> tuple[list[str], list[str], bool]:
    """`(relevant, acceptable, recall_known)` of a row under its own judge."""
    if row.get("judge", GOLD_JUDGE) == GOLD_JUDGE:
        return list(row["relevant"]), list(row["acceptable"]), True
    graded = row.get("candidate_verdicts")
    verdicts = list(row.get("verdicts") or []) + list(graded or [])
    relevant = sorted({v["key"] for v in verdicts if v["verdict"] == "relevant"})
    acceptable = sorted({v["key"] for v in verdicts if v["verdict"] in ("acceptable", "unscored")}
                        - set(relevant))
    return relevant, acceptable, graded is not None


def scored_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """`metrics.per_turn_frame` of the rows, each under its own judge's labels."""
    prepared = []
    for row in rows:
        relevant, acceptable, recall_known = judged_labels(row)
        prepared.append({
            key: row.get(key) for key in (
                "scenario", "turn_id", "category", "selector", "judge", "repeat",
                "selected", "surfaced_bytes", "error", "skipped", "discarded",
            )
        } | {"relevant": relevant, "acceptable": acceptable, "recall_known": recall_known})
    frame = per_turn_frame(prepared)
    if not frame.empty:
        unknown = ~frame["recall_known"].astype(bool)
        if unknown.any():
            frame["exact_match"] = frame["exact_match"].astype(float)
            frame.loc[unknown, ["recall", "f1", "exact_match"]] = math.nan
    return frame


def _clean(value: Any) -> Any:
    """JSON has no NaN: undefined numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _clean(value.item())
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return _clean(frame.to_dict(orient="records"))


def _usage_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Spend per selector and per judge. A turn's selector usage is repeated on each of
    its judge rows, so it is counted once per turn."""
    selectors: dict[str, Usage] = {}
    judges: dict[str, Usage] = {}
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        turn = (row["scenario"], row["turn_id"], row["selector"], row.get("repeat", 0))
        if turn not in seen:
            seen.add(turn)
            selectors[row["selector"]] = selectors.get(row["selector"], Usage()) + Usage(
                **row.get("selector_usage", {}))
        judges[row["judge"]] = judges.get(row["judge"], Usage()) + Usage(
            **row.get("judge_usage", {}))
    return {"selectors": {k: v.to_dict() for k, v in selectors.items()},
            "judges": {k: v.to_dict() for k, v in judges.items()}}


def _counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    per_selector: dict[str, Counter[str]] = {}
    for row in rows:
        c = per_selector.setdefault(row["selector"], Counter())
        c["rows"] += 1
        c["errors"] += bool(row.get("error"))
        c["discarded"] += bool(row.get("discarded"))
        if row.get("skipped"):
            c[f"skipped:{row['skipped']}"] += 1
    return {k: dict(v) for k, v in per_selector.items()}


def _scored_turn(row: Mapping[str, Any]) -> ScoredTurn:
    def verdicts(items: Iterable[Mapping[str, str]] | None) -> tuple[MemoryVerdict, ...]:
        return tuple(MemoryVerdict(v["key"], v["verdict"], v.get("reason", ""))  # type: ignore[arg-type]
                     for v in items or ())

    graded = row.get("candidate_verdicts")
    return ScoredTurn(turn_id=row["turn_id"], judge=row["judge"],
                      verdicts=verdicts(row.get("verdicts")),
                      candidate_verdicts=None if graded is None else verdicts(graded))


def _agreement(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each model judge against gold, on the turns both judged."""
    by_turn: dict[tuple[Any, ...], dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        turn = (r["scenario"], r["turn_id"], r["selector"], r.get("repeat", 0))
        by_turn.setdefault(turn, {})[r["judge"]] = r
    judges = sorted({r["judge"] for r in rows} - {GOLD_JUDGE})
    out = []
    for judge in judges:
        pairs = [(t[judge], t[GOLD_JUDGE]) for t in by_turn.values()
                 if judge in t and GOLD_JUDGE in t]
        if pairs:
            result = agreement([_scored_turn(a) for a, _ in pairs],
                               [_scored_turn(b) for _, b in pairs])
            out.append(_clean(result.to_dict()))
    return out


def _phase1(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Phase 1 against phase 2 on the same turns: the share of relevant project
    memories whose index line survives into the startup context (index mode), next to
    each selector's recall. A memory the index does not reach can only come back
    through recall."""
    per_turn: dict[tuple[str, str], tuple[str, Mapping[str, bool]]] = {}
    for row in rows:
        per_turn.setdefault((row["scenario"], row["turn_id"]),
                            (row["category"], row.get("startup_reachable") or {}))
    by_category: dict[str, list[int]] = {}
    for category, reachable in per_turn.values():
        counts = by_category.setdefault(category, [0, 0])
        counts[0] += sum(bool(v) for v in reachable.values())
        counts[1] += len(reachable)
    total_hit = sum(c[0] for c in by_category.values())
    total = sum(c[1] for c in by_category.values())
    return {
        "index_reachable_share": total_hit / total if total else None,
        "relevant_project_memories": total,
        "by_category": {k: {"reachable": v[0], "relevant": v[1],
                            "share": v[0] / v[1] if v[1] else None}
                        for k, v in sorted(by_category.items())},
    }


def summarize(rows: Sequence[Mapping[str, Any]], *, run_dir: Path | None = None) -> dict[str, Any]:
    """The summary of a run's rows (see the module docstring)."""
    frame = scored_frame(rows)
    summary: dict[str, Any] = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "run_dir": None if run_dir is None else str(run_dir),
        "rows": len(rows),
        "scenarios": sorted({r["scenario"] for r in rows}),
        "turns": len({(r["scenario"], r["turn_id"]) for r in rows}),
        "selectors": sorted({r["selector"] for r in rows}),
        "judges": sorted({r["judge"] for r in rows}),
        "overall": [],
        "by_category": [],
        "by_scenario": [],
        "usage": _usage_totals(rows),
        "counts": _counts(rows),
        "agreement": _agreement(rows),
        "phase1": _phase1(rows),
        "repeats": None,
        "per_turn": [],
    }
    if frame.empty:
        summary["table"] = "no results"
        return summary
    summary["overall"] = _records(aggregate(frame, by=["selector", "judge"]))
    summary["by_category"] = _records(aggregate(frame, by=["selector", "judge", "category"]))
    summary["by_scenario"] = _records(aggregate(frame, by=["selector", "judge", "scenario"]))
    if int(frame["repeat"].max()) > 0:
        summary["repeats"] = {
            "per_turn": _records(repeat_summary(frame)),
            "pass_hat_k": _records(pass_hat_k(frame)),
        }
    summary["per_turn"] = _records(frame[list(TURN_COLUMNS)])
    summary["table"] = headline_table(summary["overall"])
    return summary


def headline_table(overall: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table of the headline metrics with their 95 % CIs, for terminals."""
    def cell(row: Mapping[str, Any], metric: str) -> str:
        mean, low, high = row.get(metric), row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
        if mean is None:
            return "—"
        if low is None or high is None:
            return f"{mean:.3f}"
        return f"{mean:.3f} [{low:.2f}, {high:.2f}]"

    header = ["selector", "judge", "turns", *HEADLINE_METRICS, "errors"]
    lines = [[str(r["selector"]), str(r["judge"]), str(r["n_turns"]),
              *(cell(r, m) for m in HEADLINE_METRICS), f"{r['error_rate']:.0%}"]
             for r in overall]
    widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*line) for line in lines)])


def write_summary_and_report(run_dir: Path, extra: Mapping[str, Any] | None = None,
                             ) -> dict[str, Any]:
    """Write `summary.json`, then `index.html` from it.

    Args:
        run_dir: the run folder.
        extra: run facts that are not in the rows (the model door's budget state).
    """
    summary = summarize(read_results(run_dir / RESULTS_FILE), run_dir=run_dir)
    summary.update(extra or {})
    write_json(run_dir / SUMMARY_FILE, summary)
    from memeval.report import render_run  # the report reads summary.json back

    render_run(run_dir)
    return summary
