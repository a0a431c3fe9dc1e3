"""One test item per scenario turn × selector; the run's scores are gated at the end.

An item fails when the session breaks an invariant or your selector errs; scores
never fail an item: `memeval_min_recall` in pytest.ini (or `--memeval-baseline` and
friends) gates them statistically at the end of the session. Run: pytest memory_eval
"""

import pytest  # your selector is registered in conftest.py


def test_selection(memeval_turn):
    failure = memeval_turn.failure()
    if failure:
        pytest.fail(failure, pytrace=False)
