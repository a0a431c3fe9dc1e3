"""Own history: a memory in the transcript covers a later turn only if it was earned."""

from __future__ import annotations

import math
from pathlib import Path

from memeval.log import iter_results
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scoring.metrics import score_results

SCENARIO = """\
id: sprayed
now: 2026-01-01T00:00:00Z
memdirs:
  project:
    files:
      a.md: {{content: "---\\ndescription: deploy steps for production\\n---\\nx\\n"}}
      b.md: {{content: "---\\ndescription: database migration notes\\n---\\ny\\n"}}
turns:
  - {{id: t1, query: how do we deploy to production, category: direct, relevant: [{first}]}}
  - {{id: t2, query: how do I run a database migration, category: direct, relevant: [b.md]}}
"""


def _t2(tmp_path: Path, first: str) -> dict:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text(SCENARIO.format(first=first),
                                                   encoding="utf-8")
    evaluate(RunConfig(scenarios=(str(tmp_path / "scenarios"),), selectors=("all",),
                       history="own", concurrency=1), tmp_path / "run", progress=False)
    frame = score_results(list(iter_results(tmp_path / "run")))
    return frame.set_index("turn_id").loc["t2"].to_dict()


def test_a_sprayed_pick_does_not_cover_a_later_turn(tmp_path: Path) -> None:
    """`all` surfaced b.md at t1, where it was a false positive; t2 needs b.md, which
    the session no longer offers. Before, t2 counted as needing nothing: an exact
    match the selector never earned."""
    t2 = _t2(tmp_path, "a.md")
    assert t2["covered"] == 0 and t2["relevant"] == ("b.md",)
    assert (t2["recall"], t2["exact_match"], t2["outcome"]) == (0.0, 0.0, "miss")


def test_a_memory_surfaced_when_it_was_needed_covers_later_turns(tmp_path: Path) -> None:
    t2 = _t2(tmp_path, "a.md, b.md")
    assert t2["covered"] == 1 and t2["relevant"] == ()
    assert t2["exact_match"] == 1.0
    assert math.isnan(t2["recall"])  # nothing left to recall
