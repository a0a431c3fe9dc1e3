"""The run report: `index.html`, a function of the run folder."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memeval.log import INCOMPLETE_MARKER, REPORT_FILE, TurnResult, atomic_write_text
from memeval.report import _charts
from memeval.report._html import render
from memeval.report._load import RunData, load_run
from memeval.report._turns import OUTCOME_TAGS, TurnViews, score_index
from memeval.scoring.catalog import BY_NAME, CATALOG, Metric
from memeval.scoring.summary import shown_metrics

# The run page's table: the headline metrics, then what a turn costs (counts).
SUMMARY_METRICS: tuple[Metric, ...] = tuple(m for m in CATALOG if m.per_turn and
                                            (m.headline or m.kind == "count"))


def turn_payload(results: Iterable[TurnResult] | TurnViews,
                 summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the page's script reads: turn views and the tables they point into.

    `results` is the run's rows, read once and none kept (pass `iter_results(folder)`),
    or their views already gathered (`TurnViews`, as `finish_run` does while it reads
    the rows for the summary).
    """
    if not isinstance(results, TurnViews):
        gathered = TurnViews()
        for result in results:
            gathered.add(result)
        results = gathered
    tables = results.tables
    views = results.finish(score_index(summary.get("per_turn") or []),
                           summary.get("primary_judge"))
    return {
        "strings": tables.strings.items,
        "entries": tables.entries.items,
        "manifests": tables.manifests.items,
        "turns": views,
        "selectors": sorted({v["sel"] for v in views}),
        "categories": sorted({v["cat"] for v in views}),
        "scenarios": sorted({v["sc"] for v in views}),
        "tags": list(OUTCOME_TAGS),
    }


def _selector_order(summary: Mapping[str, Any], views: Sequence[Mapping[str, Any]]) -> list[str]:
    names = list(summary.get("selectors") or [])
    return names or sorted({str(v["sel"]) for v in views})


def _summary_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    usage = (summary.get("usage") or {}).get("selectors") or {}
    judge_usage = (summary.get("usage") or {}).get("judges") or {}
    counts = summary.get("counts") or {}
    out = []
    for row in summary.get("overall") or []:
        selector = str(row.get("selector"))
        c = counts.get(selector) or {}
        out.append({
            **row,
            "usage": usage.get(selector) or {},
            "judge_usage": judge_usage.get(str(row.get("judge"))) or {},
            "errors": int(c.get("errors", 0)),
            "discarded": int(c.get("discarded", 0)),
            "skipped": {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("skipped:")},
        })
    return out


def _charts_for(summary: Mapping[str, Any], selectors: list[str], main: str,
                views: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_category = [r for r in summary.get("by_category") or [] if r.get("judge") == main]
    overall = {str(r["selector"]): r for r in summary.get("overall") or []
               if r.get("judge") == main}
    usage = (summary.get("usage") or {}).get("selectors") or {}
    paid = any(float((usage.get(s) or {}).get("cost_usd", 0) or 0) > 0 for s in selectors) \
        and not any((usage.get(s) or {}).get("unpriced") for s in selectors)  # else not USD
    points = []
    for index, selector in enumerate(selectors):
        row = overall.get(selector)
        if not row or row.get("f1") is None:
            continue
        turns = max(int(row.get("n_turns") or 1), 1)
        x = (float((usage.get(selector) or {}).get("cost_usd", 0) or 0) / turns if paid
             else float(row.get("surfaced_bytes") or 0))
        points.append({"name": selector, "x": x, "y": float(row["f1"]),
                       "low": row.get("f1_ci_low"), "high": row.get("f1_ci_high"),
                       "colour": _charts.colour(index)})
    surfaced: dict[str, list[float]] = {}
    for view in views:
        surfaced.setdefault(view["sel"], []).append(float(view["bytes"]))
    return {
        "legend": _charts.legend(selectors),
        "precision": _charts.metric_by_category(by_category, selectors, "precision"),
        "recall": _charts.metric_by_category(by_category, selectors, "recall"),
        "cost": _charts.quality_vs_cost(points, "USD per turn" if paid
                                        else "surfaced bytes per turn (context cost)"),
        "cost_is_usd": paid,
        "bytes": _charts.histograms(surfaced, selectors),
        "agreement": [{"entry": a, "svg": _charts.confusion(a),
                       "title": " vs ".join(_charts.agreement_sides(a))
                       + (f" on {a['selector']}'s picks" if a.get("selector") else "")}
                      for a in summary.get("agreement") or []],
    }


SUMMARY_DEFAULTS: dict[str, Any] = {
    "rows": 0, "turns": 0, "scenarios": [], "selectors": [], "judges": [], "overall": [],
    "by_category": [], "by_scenario": [], "usage": {}, "counts": {}, "agreement": [],
    "created": None, "repeats": None, "alerts": [], "primary_judge": None, "per_turn": [],
}


def _phase1_rows(summary: Mapping[str, Any], selectors: list[str], main: str,
                 ) -> dict[str, Any] | None:
    """Startup-index reach per category beside each selector's recall (phase 1 vs 2)."""
    phase1 = summary.get("phase1")
    if not isinstance(phase1, dict) or not phase1.get("relevant_project_memories"):
        return None
    recall = {(str(r["selector"]), str(r["category"])): r.get("recall")
              for r in summary.get("by_category") or [] if r.get("judge") == main}
    rows = [{"category": category, **counts,
             "recall": [recall.get((s, category)) for s in selectors]}
            for category, counts in (phase1.get("by_category") or {}).items()]
    return {"share": phase1.get("index_reachable_share"),
            "total": phase1.get("relevant_project_memories"), "rows": rows}


def _repeat_rows(summary: Mapping[str, Any], main: str) -> dict[str, Any] | None:
    """pass^k and flip rate per selector under the main judge, when the run had repeats."""
    repeats = summary.get("repeats")
    if not isinstance(repeats, dict):
        return None
    flips: dict[str, list[float]] = {}
    for row in repeats.get("per_turn") or []:
        if row.get("flip_rate") is not None and row.get("judge") == main:
            flips.setdefault(str(row["selector"]), []).append(float(row["flip_rate"]))
    table = [r for r in repeats.get("pass_hat_k") or [] if r.get("judge") == main]
    ks = sorted({k for r in table for k in r if k.startswith("pass^") and not k.endswith("_n")},
                key=lambda k: int(k.split("^")[1]))
    return {"ks": ks, "rows": [{**r, "flip_rate": (sum(flips[str(r["selector"])]) /
                                                   len(flips[str(r["selector"])]))
                                if flips.get(str(r["selector"])) else None} for r in table]}


def _scenario_rows(summary: Mapping[str, Any], selectors: list[str], main: str,
                   ) -> list[dict[str, Any]]:
    """F1 per scenario and selector (main judge), for the per-scenario table."""
    cells: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in summary.get("by_scenario") or []:
        if row.get("judge") == main:
            cells.setdefault(str(row["scenario"]), {})[str(row["selector"])] = row
    return [{"scenario": name, "cells": [cells[name].get(s) for s in selectors]}
            for name in sorted(cells)]


def run_context(data: RunData, *, flag_incomplete: bool = False,
                views: TurnViews | None = None) -> dict[str, Any]:
    """Everything `run.html.j2` needs, computed from the run folder's data (and its
    rows' `views` when they were already gathered, else read again)."""
    # A summary from another memeval version may lack fields: show what exists.
    summary = {**SUMMARY_DEFAULTS, **data.summary}
    data = replace(data, summary=summary)
    payload = turn_payload(data.rows() if views is None else views, summary)
    selectors = _selector_order(data.summary, payload["turns"])
    main = str(summary.get("primary_judge") or "")
    config = data.config
    return {
        "title": f"memeval · {data.run_dir.name}",
        "run_name": data.run_dir.name,
        "summary": data.summary,
        "rows": _summary_rows(data.summary),
        "metrics": [BY_NAME[name] for name in shown_metrics(
            data.summary.get("overall") or [], [m.name for m in SUMMARY_METRICS])],
        "main_judge": main,
        "selectors": selectors,
        "config": config.get("config") or {},
        "components": {"selectors": config.get("selectors") or [],
                       "judges": config.get("judges") or []},
        "versions": config.get("versions") or {},
        "fingerprint": config.get("fingerprint"),
        "scenario_errors": config.get("scenario_errors") or [],
        "problems": list(data.problems),
        "incomplete": flag_incomplete and (data.run_dir / INCOMPLETE_MARKER).exists(),
        "invariants": list(data.invariants),
        "charts": _charts_for(data.summary, selectors, main, payload["turns"]),
        "phase1": _phase1_rows(data.summary, selectors, main),
        "repeats": _repeat_rows(data.summary, main),
        "alerts": list(summary.get("alerts") or []),
        "made": summary.get("made") or config.get("made") or {},
        "by_scenario": _scenario_rows(data.summary, selectors, main),
        "llm": data.summary.get("llm") if isinstance(data.summary.get("llm"), dict) else None,
        "payload": payload,
    }


def render_run(run_dir: Path | str, *, flag_incomplete: bool = False,
               views: TurnViews | None = None) -> Path:
    """Write `<run_dir>/index.html` from the folder's results and return its path.

    Args:
        run_dir: a folder written by `memeval run` (needs `results.jsonl`).
        flag_incomplete: warn on the page when the folder is marked unfinished. Off
            by default because `evaluate` renders the report just before it clears
            that mark; `memeval report` turns it on, as a later re-render of a
            still-marked folder means the run was interrupted.
        views: every row of the folder, gathered by a reader that has just read them
            (`finish_run`), so they are not read a second time.
    """
    data = load_run(Path(run_dir), rows=None if views is None else len(views))
    html = render("run.html.j2", **run_context(data, flag_incomplete=flag_incomplete,
                                               views=views))
    target = data.run_dir / REPORT_FILE
    atomic_write_text(target, html)
    return target


class RunPage:
    """`index.html` as the page a run writes beside its summary: its turn views are
    gathered while the rows are written (`gather`), and rendered once the summary
    exists (`write`). What the CLI and the pytest plugin hand to `evaluate`."""

    def gather(self) -> TurnViews:
        return TurnViews()

    def write(self, run_dir: Path, gathered: TurnViews, *, flag_incomplete: bool) -> Path:
        return render_run(run_dir, flag_incomplete=flag_incomplete, views=gathered)
