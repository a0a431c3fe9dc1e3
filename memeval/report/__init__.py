"""The HTML views of a run: `index.html` per run folder, and a compare page of two runs.

Both pages are single self-contained files (CSS, script and SVG charts inline) whose
Content-Security-Policy forbids every network request, so a report opens offline and
a hostile memory cannot call home. The pages show `summary.json`'s scores and
`results.jsonl`'s evidence (plus `config.json` and an optional `invariants.json`);
they never score anything themselves.
"""

from memeval.report._compare import render_compare
from memeval.report._run import RunPage, render_run
from memeval.report._turns import TurnViews

__all__ = ["RunPage", "TurnViews", "render_compare", "render_run"]
