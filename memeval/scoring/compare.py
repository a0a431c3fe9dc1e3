"""Compare as a stage: two runs' scored turns, paired, as one JSON-ready record.

The CLI table, the HTML view and the gate all read what this module returns; none
re-scores or re-pairs. Scores come from each run's `summary.json` (`per_turn`),
which `memeval.scoring.metrics` wrote. Selectors are paired by one rule (`pair_selectors`):
explicit `A=B` pairs when given, else the same spec in both runs, else the only
selector of each run. Deltas are B − A on the turns both scored, with a paired
cluster-bootstrap interval; a delta is *significant* when its interval excludes 0,
and per-category p-values are Holm-adjusted within each pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.errors import MemevalError
from memeval.jsonenc import json_safe
from memeval.log import read_per_turn, read_summary
from memeval.provenance import check_runs_comparable
from memeval.scoring.catalog import BY_NAME, HEADLINE, PER_TURN, PRIMARY
from memeval.scoring.metrics import paired_compare
from memeval.scoring.stats import holm

# What is compared, and which way is better, comes from the declarations (catalog).
COMPARE_METRICS: tuple[str, ...] = (PRIMARY, *(m for m in HEADLINE if m != PRIMARY))
CATEGORY_METRICS: tuple[str, ...] = tuple(m for m in COMPARE_METRICS
                                          if BY_NAME[m].kind == "ratio")


def per_turn_table(path: Path) -> pd.DataFrame:
    """The scored turns of a run folder or summary.json (nulls back to NaN); a folder
    that cannot give them raises `memeval.log.RunFolderError` naming the fix."""
    frame = pd.DataFrame(read_per_turn(path))
    for column in PER_TURN:
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    if "selected" in frame.columns:
        frame["selected"] = frame["selected"].map(lambda s: tuple(s or ()))
    return frame


def parse_pairs(specs: Sequence[str]) -> list[tuple[str, str]]:
    """`A=B` strings (baseline selector = candidate selector) as pairs."""
    out = []
    for spec in specs:
        a, sep, b = spec.partition("=")
        if not sep or not a or not b:
            raise MemevalError(f"--pair {spec!r}: write BASELINE_SELECTOR=CANDIDATE_SELECTOR, "
                               "e.g. --pair bm25=bm25 or --pair 'claude?prompt=a=claude?prompt=b'")
        out.append((a, b))
    return out


def pair_selectors(a: Sequence[str], b: Sequence[str],
                   explicit: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Which selector of A is compared with which of B: the one pairing rule."""
    if explicit:
        for sa, sb in explicit:
            if sa not in a or sb not in b:
                raise MemevalError(f"--pair {sa}={sb}: A has {', '.join(a) or 'none'}; "
                                   f"B has {', '.join(b) or 'none'}")
        return list(explicit)
    common = [s for s in a if s in set(b)]
    if common:
        return [(s, s) for s in common]
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])]
    raise MemevalError(
        f"the runs share no selector (A: {', '.join(a) or 'none'}; B: {', '.join(b) or 'none'})"
        "; say which to compare with --pair A_SELECTOR=B_SELECTOR")


def common_judge(a: pd.DataFrame, b: pd.DataFrame, preferred: Sequence[str | None]) -> str:
    judges_a, judges_b = set(a.get("judge", [])), set(b.get("judge", []))
    common = judges_a & judges_b
    if not common:
        raise MemevalError(f"the runs share no judge (A: {', '.join(sorted(judges_a))}; "
                           f"B: {', '.join(sorted(judges_b))}); rerun one with -j of the other")
    return next((j for j in preferred if j in common), sorted(common)[0])


def comparison(frame_a: pd.DataFrame, frame_b: pd.DataFrame, metric: str) -> dict[str, Any]:
    """B − A on `metric` over the turns both scored."""
    # paired_compare gives first − second: B first, so a positive delta means B gained.
    result = paired_compare(frame_b, frame_a, metric).to_dict()
    for x, y in (("mean_a", "mean_b"), ("selector_a", "selector_b"), ("a_only", "b_only"),
                 ("unmatched_a", "unmatched_b")):
        result[x], result[y] = result[y], result[x]
    declared = BY_NAME[metric]
    # better / worse by the metric's declared direction: fewer false alarms is a gain
    result["significance"] = declared.verdict(result["ci_low"], result["ci_high"])
    result["direction"] = declared.direction
    # The power warning answers "could a real difference hide in this null result?";
    # once the interval excludes 0 the difference was detected, so it would only confuse.
    result["power_warning"] = bool(result["underpowered"]) and \
        result["significance"] in ("no clear difference", "undetermined")
    return result


def _per_turn(frame: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for (scenario, turn_id), group in frame.groupby(["scenario", "turn_id"], sort=True):
        out[(str(scenario), str(turn_id))] = {
            "category": str(group["category"].iloc[0]),
            PRIMARY: float(group[PRIMARY].mean()) if group[PRIMARY].notna().any() else math.nan,
            "selected": sorted({k for s in group["selected"] for k in s}),
        }
    return out


def changes(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> dict[str, Any]:
    """Turns B won or lost on the primary metric, and turns where only the picks changed."""
    turns_a, turns_b = _per_turn(frame_a), _per_turn(frame_b)
    won, lost, reselected = [], [], 0
    for key in sorted(set(turns_a) & set(turns_b)):
        a, b = turns_a[key], turns_b[key]
        delta = BY_NAME[PRIMARY].sign * (b[PRIMARY] - a[PRIMARY])  # > 0: B gained
        item = {"scenario": key[0], "turn_id": key[1], "category": b["category"],
                f"{PRIMARY}_a": a[PRIMARY], f"{PRIMARY}_b": b[PRIMARY], "delta": delta,
                "selected_a": a["selected"], "selected_b": b["selected"]}
        if delta > 1e-9:
            won.append(item)
        elif delta < -1e-9:
            lost.append(item)
        elif a["selected"] != b["selected"]:
            reselected += 1
    won.sort(key=lambda i: (-i["delta"], i["scenario"], i["turn_id"]))
    lost.sort(key=lambda i: (i["delta"], i["scenario"], i["turn_id"]))
    return {"won": won, "lost": lost, "reselected": reselected,
            "paired_turns": len(set(turns_a) & set(turns_b))}


def compare_tables(frame_a: pd.DataFrame, frame_b: pd.DataFrame, *,
                   pairs: Sequence[tuple[str, str]] = (),
                   preferred_judges: Sequence[str | None] = ()) -> dict[str, Any]:
    """The comparison of two scored tables, JSON-ready (NaN as null)."""
    if frame_a.empty or frame_b.empty:
        raise MemevalError("a run has no scored turns yet; finish or rerun it before comparing")
    modes = [sorted(set(f["history"])) if "history" in f.columns else [] for f in
             (frame_a, frame_b)]
    if modes[0] != modes[1]:
        raise MemevalError(f"the runs replay history differently (A: {', '.join(modes[0])}; "
                           f"B: {', '.join(modes[1])}); their turns started from different "
                           "states, so they cannot be paired. Rerun one with --history "
                           f"{modes[0][0] if modes[0] else 'gold'}")
    judge = common_judge(frame_a, frame_b, preferred_judges)
    frame_a, frame_b = frame_a[frame_a["judge"] == judge], frame_b[frame_b["judge"] == judge]
    out_pairs = []
    for sel_a, sel_b in pair_selectors(sorted(set(frame_a["selector"])),
                                       sorted(set(frame_b["selector"])), pairs):
        fa, fb = frame_a[frame_a["selector"] == sel_a], frame_b[frame_b["selector"] == sel_b]
        categories = sorted(set(fa["category"]) | set(fb["category"]))
        by_category = [{"category": c, **{m: comparison(fa[fa["category"] == c],
                                                        fb[fb["category"] == c], m)
                                          for m in CATEGORY_METRICS}}
                       for c in categories]
        adjusted = holm([row[PRIMARY]["p_value"] for row in by_category])
        for row, p in zip(by_category, adjusted, strict=True):
            row[PRIMARY]["p_holm"] = p
        out_pairs.append({"selector_a": sel_a, "selector_b": sel_b,
                          "overall": {m: comparison(fa, fb, m) for m in COMPARE_METRICS},
                          "by_category": by_category, **changes(fa, fb)})
    return json_safe({"judge": judge, "metric": PRIMARY, "pairs": out_pairs,
                      "warnings": [f"{p['selector_b']}: {p['overall'][PRIMARY]['warning']}"
                                   for p in out_pairs if p["overall"][PRIMARY]["power_warning"]],
                      "notes": [note for p in out_pairs if (note := same_picks_note(p))]})


def same_picks_note(pair: dict[str, Any]) -> str | None:
    """Why two differently named selectors tie exactly: they picked the same memories
    on every paired turn. The likeliest cause offline is a model that never reads the
    prompt, which makes any prompt comparison a tie by construction."""
    a, b = pair["selector_a"], pair["selector_b"]
    if a == b or pair["won"] or pair["lost"] or pair["reselected"] or not pair["paired_turns"]:
        return None
    return (f"{b} picked exactly what {a} picked on all {pair['paired_turns']} paired "
            "turns, so every delta is 0. If they differ only in their prompt, the model "
            "ignored it: memeval.testing's offline keyword model reads the query and the "
            "manifest, never the prompt, so an offline prompt comparison always ties; "
            "compare prompts on a real model")


def compare_runs(run_a: Path, run_b: Path, *,
                 pairs: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """Compare run B against baseline run A (folders or summary.json files)."""
    summary_a = read_summary(run_a)
    table_a, table_b = per_turn_table(run_a), per_turn_table(run_b)
    check_runs_comparable(run_a, run_b, (table_a, table_b))
    data = compare_tables(table_a, table_b, pairs=pairs,
                          preferred_judges=[summary_a.get("primary_judge")])
    return {"run_a": str(run_a), "run_b": str(run_b), **data}


__all__ = ["CATEGORY_METRICS", "COMPARE_METRICS", "compare_runs", "compare_tables",
           "pair_selectors", "parse_pairs", "per_turn_table"]
