"""Two runs side by side: is B (a new prompt, model or selector) better than A?

Selectors are paired by name (the same spec in both runs); when the runs share none
and each has exactly one, those two are paired, which is the usual prompt-change
experiment (`claude?prompt=x` in A, `claude?prompt=y` in B). Deltas are B − A on
the turns both ran, with a paired bootstrap CI from `memeval.metrics.paired_compare`;
a delta is *significant* when its CI excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.errors import MemevalError
from memeval.metrics import paired_compare
from memeval.report._html import render
from memeval.report._load import RunData, load_run
from memeval.report._run import turn_payload
from memeval.report._turns import primary_judge, turn_key
from memeval.results import atomic_write_text, write_json
from memeval.summary import _clean, scored_frame

COMPARE_METRICS: tuple[str, ...] = ("f1", "precision", "recall", "exact_match")
HEADLINE = "f1"
COMPARE_HTML = "compare.html"
COMPARE_JSON = "compare.json"


def pair_selectors(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, str]]:
    """Which selector of A is compared with which of B (see the module docstring)."""
    common = [s for s in a if s in set(b)]
    if common:
        return [(s, s) for s in common]
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])]
    raise MemevalError(
        f"the runs share no selector (A: {', '.join(a) or 'none'}; B: {', '.join(b) or 'none'})"
        "; compare runs of the same selectors, or runs of one selector each")


def _significance(c: Mapping[str, Any]) -> str:
    low, high = c.get("ci_low"), c.get("ci_high")
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "undetermined"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "no clear difference"


def _comparison(frame_a: pd.DataFrame, frame_b: pd.DataFrame, metric: str) -> dict[str, Any]:
    # paired_compare gives first − second: B first, so a positive delta means B gained.
    result = paired_compare(frame_b, frame_a, metric).to_dict()
    result["mean_a"], result["mean_b"] = result["mean_b"], result["mean_a"]
    result["selector_a"], result["selector_b"] = result["selector_b"], result["selector_a"]
    result["a_only"], result["b_only"] = result["b_only"], result["a_only"]
    result["unmatched_a"], result["unmatched_b"] = result["unmatched_b"], result["unmatched_a"]
    result["significance"] = _significance(result)
    # The power warning answers "could a real difference hide in this null result?";
    # once the CI excludes 0 the difference was detected, so it would only confuse.
    result["power_warning"] = bool(result["underpowered"]) and \
        result["significance"] in ("no clear difference", "undetermined")
    return result


def _per_turn(frame: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if frame.empty:
        return out
    for (scenario, turn_id), group in frame.groupby(["scenario", "turn_id"], sort=True):
        out[(str(scenario), str(turn_id))] = {
            "category": str(group["category"].iloc[0]),
            "f1": float(group["f1"].astype(float).mean()),
            "selected": sorted({k for s in group["selected"] for k in s}),
        }
    return out


def _changes(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> dict[str, Any]:
    turns_a, turns_b = _per_turn(frame_a), _per_turn(frame_b)
    won, lost, reselected = [], [], 0
    for key in sorted(set(turns_a) & set(turns_b)):
        a, b = turns_a[key], turns_b[key]
        delta = b["f1"] - a["f1"]
        item = {"scenario": key[0], "turn_id": key[1], "category": b["category"],
                "f1_a": a["f1"], "f1_b": b["f1"], "delta": delta,
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


def _judge(a: RunData, b: RunData) -> str:
    for name, run in (("A", a), ("B", b)):
        if not run.rows:
            raise MemevalError(f"run {name} ({run.run_dir}) has no results yet; finish or "
                               "rerun it before comparing")
    judges_a = {str(r.get("judge")) for r in a.rows}
    judges_b = {str(r.get("judge")) for r in b.rows}
    common = judges_a & judges_b
    if not common:
        raise MemevalError(f"the runs share no judge (A: {', '.join(sorted(judges_a))}; "
                           f"B: {', '.join(sorted(judges_b))}); rerun one with -j of the other")
    return primary_judge(common)


def compare_data(a: RunData, b: RunData) -> dict[str, Any]:
    """The comparison of two loaded runs, JSON-ready (what `compare.json` holds)."""
    judge = _judge(a, b)
    frame_a = scored_frame([r for r in a.rows if r.get("judge") == judge])
    frame_b = scored_frame([r for r in b.rows if r.get("judge") == judge])
    selectors_a = sorted({str(s) for s in frame_a.get("selector", [])})
    selectors_b = sorted({str(s) for s in frame_b.get("selector", [])})
    pairs = []
    for sel_a, sel_b in pair_selectors(selectors_a, selectors_b):
        fa = frame_a[frame_a["selector"] == sel_a]
        fb = frame_b[frame_b["selector"] == sel_b]
        categories = sorted(set(fa["category"]) | set(fb["category"]))
        pairs.append({
            "selector_a": sel_a, "selector_b": sel_b,
            "overall": {m: _comparison(fa, fb, m) for m in COMPARE_METRICS},
            "by_category": [
                {"category": c, **{m: _comparison(fa[fa["category"] == c],
                                                  fb[fb["category"] == c], m)
                                   for m in (HEADLINE, "precision", "recall")}}
                for c in categories],
            **_changes(fa, fb),
        })
    return {"run_a": str(a.run_dir), "run_b": str(b.run_dir), "judge": judge,
            "metric": HEADLINE, "pairs": pairs,
            "warnings": [f"{p['selector_b']}: {p['overall'][HEADLINE]['warning']}"
                         for p in pairs if p["overall"][HEADLINE]["power_warning"]]}


def compare_runs(run_a: Path | str, run_b: Path | str) -> dict[str, Any]:
    """Compare two run folders (B against baseline A); see the module docstring."""
    return compare_data(load_run(Path(run_a)), load_run(Path(run_b)))


def _drill_payloads(a: RunData, b: RunData, data: Mapping[str, Any]) -> dict[str, Any]:
    """Turn views of the changed turns only, so the page stays small on big runs."""
    wanted_a, wanted_b = set(), set()
    for pair in data["pairs"]:
        for item in (*pair["won"], *pair["lost"]):
            wanted_a.add((item["scenario"], item["turn_id"], pair["selector_a"]))
            wanted_b.add((item["scenario"], item["turn_id"], pair["selector_b"]))
    payloads = {}
    for side, run, wanted in (("a", a, wanted_a), ("b", b, wanted_b)):
        rows = [r for r in run.rows if turn_key(r)[:3] in wanted]
        payload = turn_payload(rows)
        # The first repeat stands for the turn in the drill-down.
        payload["index"] = {}
        for view in payload["turns"]:
            payload["index"].setdefault(f"{view['sc']}\u0000{view['t']}\u0000{view['sel']}",
                                        view["id"])
        payloads[side] = payload
    for pair in data["pairs"]:
        for item in (*pair["won"], *pair["lost"]):
            item["view_a"] = payloads["a"]["index"].get(
                f"{item['scenario']}\u0000{item['turn_id']}\u0000{pair['selector_a']}")
            item["view_b"] = payloads["b"]["index"].get(
                f"{item['scenario']}\u0000{item['turn_id']}\u0000{pair['selector_b']}")
    return payloads


def render_compare(run_a: Path | str, run_b: Path | str, out_dir: Path | str) -> Path:
    """Write `compare.html` and `compare.json` into `out_dir`; return the HTML path.

    Args:
        run_a: the baseline run folder.
        run_b: the candidate run folder; deltas are B − A.
        out_dir: where to write (created if needed).
    """
    a, b = load_run(Path(run_a)), load_run(Path(run_b))
    data = compare_data(a, b)
    payloads = _drill_payloads(a, b, data)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / COMPARE_JSON, _clean(data))  # JSON has no NaN
    html = render("compare.html.j2", title=f"memeval compare · {a.run_dir.name} → "
                  f"{b.run_dir.name}", data=data, metrics=COMPARE_METRICS,
                  name_a=a.run_dir.name, name_b=b.run_dir.name,
                  problems=[*(f"A: {p}" for p in a.problems), *(f"B: {p}" for p in b.problems)],
                  versions=(b.config.get("versions") or {}),
                  payload={"a": payloads["a"], "b": payloads["b"]},
                  forest=_forest(data))
    target = out / COMPARE_HTML
    atomic_write_text(target, html)
    return target


def _forest(data: Mapping[str, Any]) -> list[Any]:
    from memeval.report._charts import delta_forest

    return [delta_forest(p["by_category"], HEADLINE) for p in data["pairs"]]


__all__ = ["COMPARE_HTML", "COMPARE_JSON", "compare_data", "compare_runs", "pair_selectors",
           "render_compare"]
