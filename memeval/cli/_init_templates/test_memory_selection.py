"""One test item per scenario turn × selector; the run's scores are gated at the end.

An item fails when the session breaks an invariant or your selector errs; scores
never fail an item: `memeval_min_recall` in pytest.ini (or `--memeval-baseline` and
friends) gates them statistically at the end of the session. Run: pytest memory_eval
"""

import my_selector  # noqa: F401  (registers the `mine` selector)
import pytest

pytestmark = pytest.mark.memeval_suite  # marks the items for `-m memeval_suite`


def test_selection(memeval_turn):
    failure = memeval_turn.failure()
    if failure:
        pytest.fail(failure, pytrace=False)
