"""The HTML views of a run: `index.html` per run folder, and a compare page of two runs.

Both pages are single self-contained files (CSS, script and SVG charts inline) whose
Content-Security-Policy forbids every network request, so a report opens offline and
a hostile memory cannot call home. `results.jsonl` is the truth; the pages are
functions of it (plus `config.json`, `summary.json` and an optional `invariants.json`).
"""

from memeval.report._compare import compare_runs, render_compare
from memeval.report._run import render_run

__all__ = ["compare_runs", "render_compare", "render_run"]
