"""Every metric is declared once, and everything that shows or tests a metric reads it.

The false-alarm rate is the case that went wrong: lower is better, so a drop must
read "better" and pass the gate, and a rise "worse" and fail it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

from memeval.scoring.catalog import BY_NAME, CATALOG, metric
from memeval.scoring.compare import compare_tables
from memeval.scoring.gate import run_gate
from memeval.scoring.metrics import per_turn_frame

ROOT = Path(__file__).resolve().parents[1]
NAMES = set(BY_NAME)


def test_no_module_names_metrics_in_a_list_of_its_own():
    offenders = []
    for path in (ROOT / "memeval").rglob("*.py"):
        if path.name == "catalog.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                strings = [e.value for e in node.elts
                           if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len(NAMES.intersection(strings)) >= 2:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"metric names listed outside the catalog: {offenders}"


def test_docs_metrics_table_is_the_catalog():
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (higher|lower) \| (\w+) \| (.+?) \| (.+?) \|$",
                      text, flags=re.M)
    found = {name: (label, direction, kind, interval, denominator)
             for name, label, direction, kind, interval, denominator in rows}
    assert found == {m.name: (m.label, m.direction, m.kind, m.interval, m.denominator)
                     for m in CATALOG}


def test_an_unknown_metric_is_named_with_the_known_ones():
    with pytest.raises(Exception, match="false_alarm"):
        metric("false_alarms")


def turns(selector: str, alarmed: set[int], *, scenarios: int = 20) -> pd.DataFrame:
    """Even turns need nothing; scenario s false-alarms on them when s is in `alarmed`;
    odd turns need `a.md` and get it."""
    return per_turn_frame([
        {"scenario": f"s{s}", "turn_id": f"t{t}", "selector": selector, "judge": "gold",
         "category": "direct", "relevant": [] if t % 2 == 0 else ["a.md"],
         "selected": (["x.md"] if s in alarmed else []) if t % 2 == 0 else ["a.md"]}
        for s in range(scenarios) for t in range(10)])


BASELINE = set(range(0, 20, 4))  # 5 of 20 scenarios: false alarm 0.25
FEWER: set[int] = set()  # none: 0.25 → 0
MORE = BASELINE | set(range(1, 20, 4))  # 10 of 20: 0.50


def test_compare_calls_a_false_alarm_drop_better_and_a_rise_worse():
    base = turns("bm25", BASELINE)
    drop = compare_tables(base, turns("bm25", FEWER))["pairs"][0]["overall"]["false_alarm"]
    rise = compare_tables(base, turns("bm25", MORE))["pairs"][0]["overall"]["false_alarm"]
    assert drop["mean_diff"] < 0 and drop["significance"] == "better"
    assert rise["mean_diff"] > 0 and rise["significance"] == "worse"
    assert drop["direction"] == "lower"


def test_the_default_gate_passes_a_false_alarm_drop_and_fails_a_rise():
    base = turns("bm25", BASELINE)
    assert run_gate(turns("bm25", FEWER), base).passed
    rise = run_gate(turns("bm25", MORE), base)
    assert not rise.passed
    (failed,) = rise.failures
    assert failed.metric == "false_alarm" and "lower is better" in failed.message()


def test_a_false_alarm_rise_of_a_tenth_fails_at_the_old_margin_and_a_drop_passes():
    base = turns("bm25", BASELINE)
    rise = turns("bm25", BASELINE | {1, 5})  # 0.25 → 0.35
    drop = turns("bm25", BASELINE - {0, 4})  # 0.25 → 0.15
    assert not run_gate(rise, base, margin=0.03).passed
    assert run_gate(drop, base, margin=0.0).passed


def test_the_forest_plot_puts_the_good_side_where_the_metric_says():
    from memeval.report._charts import delta_forest

    row = [{"category": "direct", "false_alarm": {"mean_diff": -0.1, "ci_low": -0.2,
                                                  "ci_high": -0.05, "significance": "better",
                                                  "n_pairs": 10}}]
    svg = str(delta_forest(row, BY_NAME["false_alarm"]))
    assert "(B better)" in svg.split("+")[0]  # the left (negative) end is B's good side
    assert "#1a7f37" in svg  # drawn in the "better" colour
    f1 = str(delta_forest([{"category": "direct", "f1": row[0]["false_alarm"]}], BY_NAME["f1"]))
    assert "(A better)" in f1.split("+")[0]
