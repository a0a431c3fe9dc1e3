"""Browser tests: the real report pages in Debian's headless Chromium via playwright.

No browser is downloaded: playwright drives the system `chromium`. Without one these
tests skip with one line saying how to install it, so the README's `pytest` is green
on a fresh machine; where `MEMEVAL_REQUIRE_BROWSER=1` (`.ci/run` sets it and installs
Chromium) they fail instead, so a broken report can never pass CI by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memeval.cli.doctor import CHROMIUM_INSTALL, find_chromium

REQUIRE_ENV = "MEMEVAL_REQUIRE_BROWSER"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "reports" / "screenshots"

HOSTILE_SCENARIO = """\
id: hostile-memories
now: 2026-11-30T12:00:00Z
mode: recall
project_root: /home/dev/hostile
memdirs:
  project:
    files:
      deploy-gotchas.md:
        age_days: 3
        content: |
          ---
          name: deploy gotchas
          description: deploy gotchas for the release script <img src=x onerror="window.__pwned=1">
          type: feedback
          ---
          <script>window.__pwned=1</script>
          [docs](javascript:window.__pwned=1) <a href="javascript:window.__pwned=1">link</a>
          <iframe src="https://example.com/"></iframe><img src="https://example.com/x.png">
          Run the release script from a clean checkout.
      coffee.md:
        age_days: 40
        content: |
          ---
          description: the team's coffee order for Friday standups
          type: user
          ---
          Oat flat white.
turns:
  - id: t1
    query: "deploy gotchas </script><script>window.__pwned=1</script> of the release script?"
    category: direct
    why: the deploy memory is the one about the release script
    relevant: [deploy-gotchas.md]
    tool_events: [Bash]
"""


@dataclass
class Watched:
    """A page plus everything it asked the network for and complained about."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def open(self, path: Path) -> None:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_function("window.memevalReady === true")

    def assert_clean(self) -> None:
        assert self.console_errors == []
        offsite = [u for u in self.requests if not u.startswith(("file://", "data:"))]
        assert offsite == []


def browser_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip().lower() not in {"", "0", "no", "false"}


NO_CHROMIUM = f"no Chromium for the report's browser tests: {CHROMIUM_INSTALL}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without Chromium, skip this folder's tests (one summary line per file), unless
    the environment says they are required."""
    if browser_required() or find_chromium() is not None:
        return
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.skip(reason=NO_CHROMIUM))


# Session scope and autouse: decided before any costly fixture (a real run) is built.
@pytest.fixture(scope="session", autouse=True)
def chromium() -> Path:
    found = find_chromium()
    if found is None:  # only reached when required: otherwise the items were skipped
        pytest.fail(f"{NO_CHROMIUM} ({REQUIRE_ENV}=1 makes these tests required)",
                    pytrace=False)
    return found


# Module scope: playwright's sync API keeps an event loop running in this thread
# while it is open, which would break `asyncio.run` in every later test module.
@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]' (never run "
                    "`playwright install`; the tests drive the system chromium)", pytrace=False)
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = Watched(page)
    page.on("console", lambda m: seen.console_errors.append(m.text) if m.type == "error"
            else None)
    page.on("pageerror", lambda e: seen.console_errors.append(f"uncaught: {e}"))
    page.on("request", lambda r: seen.requests.append(r.url))
    yield seen
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real evaluation: one bundled scenario plus the hostile one, three selectors."""
    from memeval.report import RunPage
    from memeval.run.config import RunConfig, bundled_fixtures_dir
    from memeval.run.evaluate import evaluate

    base = tmp_path_factory.mktemp("browser")
    hostile = base / "scenarios" / "hostile.yaml"
    hostile.parent.mkdir()
    hostile.write_text(HOSTILE_SCENARIO, encoding="utf-8")
    bundled = bundled_fixtures_dir() / "scenarios" / "a-rails-invoicing.yaml"
    config = RunConfig(scenarios=(str(bundled), str(hostile)),
                       selectors=("bm25", "recency", "oracle"), concurrency=2)
    run_dir = base / "run"
    outcome = evaluate(config, run_dir, progress=False, page=RunPage())
    assert not outcome.scenario_errors, outcome.scenario_errors
    assert (run_dir / "index.html").exists()
    return run_dir
