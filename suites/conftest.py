"""Hypothesis profiles for memeval's property suites.

`ci` (the default) is deterministic and runs at least 200 examples per property, so a
CI failure reproduces on any machine; `deep` runs at least 5 000 with fresh
randomness to hunt for rarer counterexamples. Choose with `--memeval-profile NAME`
(an option of memeval's pytest plugin) or `MEMEVAL_PROFILE=NAME`; the option wins.

The profile applies to the suites' own properties only (each reads `MEMEVAL_PROFILE`,
which the option sets), so memeval's unit tests keep hypothesis' defaults.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

PROFILE_ENV = "MEMEVAL_PROFILE"
PROFILES = ("ci", "deep")
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci", max_examples=200, derandomize=True, database=None, deadline=None,
    suppress_health_check=_SLOW_OK, print_blob=True,
)
settings.register_profile(
    "deep", max_examples=5000, deadline=None, suppress_health_check=_SLOW_OK, print_blob=True,
)


def pytest_configure(config: pytest.Config) -> None:
    chosen = config.getoption("--memeval-profile", default=None)
    if chosen:
        os.environ[PROFILE_ENV] = chosen
    name = os.environ.get(PROFILE_ENV, "ci")
    if name not in PROFILES:
        raise pytest.UsageError(
            f"{PROFILE_ENV}={name!r}: unknown hypothesis profile; use one of {', '.join(PROFILES)}"
        )

