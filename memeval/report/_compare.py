"""The compare page: `compare.html` (and `compare.json`) from `memeval.scoring.compare`'s record.

The numbers come from `memeval.scoring.compare.compare_runs`; this module only adds the
drill-down turn views of the turns B won or lost and renders the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memeval.log import atomic_write_text, write_json
from memeval.report._html import render
from memeval.report._load import RunData, load_run
from memeval.report._run import turn_payload
from memeval.scoring.catalog import BY_NAME, PRIMARY
from memeval.scoring.compare import CATEGORY_METRICS, COMPARE_METRICS, compare_runs

COMPARE_HTML = "compare.html"
COMPARE_JSON = "compare.json"


def _drill_payloads(a: RunData, b: RunData, data: Mapping[str, Any]) -> dict[str, Any]:
    """Turn views of the changed turns only, so the page stays small on big runs."""
    wanted_a, wanted_b = set(), set()
    for pair in data["pairs"]:
        for item in (*pair["won"], *pair["lost"]):
            wanted_a.add((item["scenario"], item["turn_id"], pair["selector_a"]))
            wanted_b.add((item["scenario"], item["turn_id"], pair["selector_b"]))
    payloads = {}
    for side, run, wanted in (("a", a, wanted_a), ("b", b, wanted_b)):
        rows = (r for r in run.rows() if r.key[:3] in wanted)
        payload = turn_payload(rows, run.summary)
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


def render_compare(run_a: Path | str, run_b: Path | str, out_dir: Path | str, *,
                   pairs: Sequence[tuple[str, str]] = ()) -> tuple[Path, dict[str, Any]]:
    """Write `compare.html` and `compare.json` into `out_dir`.

    Args:
        run_a: the baseline run folder.
        run_b: the candidate run folder; deltas are B − A.
        out_dir: where to write (created if needed).
        pairs: explicit (A selector, B selector) pairs (see `memeval.scoring.compare`).

    Returns:
        The HTML path and the compare record.
    """
    data = compare_runs(Path(run_a), Path(run_b), pairs=pairs)
    a, b = load_run(Path(run_a)), load_run(Path(run_b))
    payloads = _drill_payloads(a, b, data)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / COMPARE_JSON, data)
    html = render("compare.html.j2", title=f"memeval compare · {a.run_dir.name} → "
                  f"{b.run_dir.name}", data=data, metrics=[BY_NAME[m] for m in COMPARE_METRICS],
                  category_metrics=[BY_NAME[m] for m in CATEGORY_METRICS],
                  primary=BY_NAME[PRIMARY],
                  name_a=a.run_dir.name, name_b=b.run_dir.name,
                  problems=[*(f"A: {p}" for p in a.problems), *(f"B: {p}" for p in b.problems)],
                  versions=(b.config.get("versions") or {}),
                  payload={"a": payloads["a"], "b": payloads["b"]},
                  forest=_forest(data))
    target = out / COMPARE_HTML
    atomic_write_text(target, html)
    return target, data


def _forest(data: Mapping[str, Any]) -> list[Any]:
    from memeval.report._charts import delta_forest

    return [delta_forest(p["by_category"], BY_NAME[PRIMARY]) for p in data["pairs"]]


__all__ = ["COMPARE_HTML", "COMPARE_JSON", "render_compare"]
