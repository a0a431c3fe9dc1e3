"""Every redesigned trap category can be failed, and can be passed.

A word-matching selector (bm25) falls for each trap — tempting agent memories that
share words, a memory already in context, a stale fact beside its newer version, a
tool pitfall not named as one, a keyword pointing at the wrong memory — while the
oracle, which knows what is needed, passes each.
"""

from __future__ import annotations

import pandas as pd
import pytest

from memeval.judges import resolve_judge
from memeval.run.config import RunConfig, bundled_fixtures_dir
from memeval.run.play import Unit, run_unit
from memeval.scenarios import load_many
from memeval.scoring.metrics import score_results

TRAPS = ("agent-distractor", "already-surfaced", "stale", "recent-tool-docs", "keyword-trap")


@pytest.fixture(scope="module")
def f1_by_category() -> pd.DataFrame:
    scenarios = load_many([str(bundled_fixtures_dir() / "scenarios" / "*.yaml")]).scenarios
    judges = [resolve_judge("gold")]
    rows = [r for spec in ("bm25", "oracle") for s in scenarios
            for r in run_unit(Unit(s, spec, 0), RunConfig(selectors=(spec,)), judges)]
    frame = score_results(rows)
    return frame[frame["category"].isin(TRAPS)].groupby(["category", "selector"])["f1"].agg(
        ["mean", "count"]).reset_index()


@pytest.mark.parametrize("category", TRAPS)
def test_a_word_matcher_fails_the_trap_and_the_oracle_passes_it(f1_by_category, category):
    table = f1_by_category[f1_by_category["category"] == category].set_index("selector")
    assert table.loc["bm25", "count"] >= 10, "the trap needs enough turns that need a memory"
    assert table.loc["bm25", "mean"] < 0.6
    assert table.loc["oracle", "mean"] >= 0.95
