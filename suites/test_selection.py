"""The selection suite: one item per scenario turn × selector.

Each item plays its turn inside the scenario's session (the session runs once per
scenario × selector and is shared by its items), fails when an invariant of SPEC §3
breaks or the selector or session reports an error, and records its scores
(precision, recall, f1, exact match) as user_properties and in the run folder.
Scores themselves never fail an item: the session-end gate judges them statistically
(`--memeval-min-precision`, `--memeval-min-recall`, `--memeval-baseline`).

Selectors come from `--memeval-selector` (default `oracle`, which reads the gold
labels: it checks the suite's plumbing quickly and always scores 1.0). Example:

    pytest suites/test_selection.py --memeval-selector bm25 --memeval-min-recall 0.3
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.memeval_suite


def test_selection(memeval_turn):
    failure = memeval_turn.failure()
    if failure:
        pytest.fail(failure, pytrace=False)
