"""A pytester folder with the tiny scenario and a copy of the selection suite: what
the plugin's tests run pytest in. Test modules load it with `pytest_plugins`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "data" / "plugin" / "tiny.yaml"
SUITES = REPO / "suites"
# Not the suites' own basenames: a run of tests/ with suites/ imported those already.
SELECTION = "test_memeval_selection.py"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The tiny scenario and the selection suite, no conftest, no key, no cache."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MEMEVAL_REPLAY",
                 "MEMEVAL_RECORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMEVAL_LLM_CACHE", "off")
    shutil.copy(TINY, pytester.path / "tiny.yaml")
    shutil.copy(SUITES / "test_selection.py", pytester.path / SELECTION)
    return pytester
