"""The compare view in a real browser: clean, offline, side-by-side drill-downs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.log import ResultsWriter, read_results
from memeval.report import RunPage, render_compare
from memeval.run.evaluate import finish_run
from memeval.scoring.compare import COMPARE_METRICS


def _split(run: Path, selector: str, target: Path) -> Path:
    """A run folder holding only one selector's rows of `run`."""
    with ResultsWriter(target) as writer:
        writer.append_unit([r for r in read_results(run) if r.selector == selector])
    finish_run(target, page=RunPage())
    return target


@pytest.fixture(scope="module")
def compare_page(real_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("compare")
    a = _split(real_run, "recency", base / "recency")
    b = _split(real_run, "bm25", base / "bm25")
    return render_compare(a, b, base / "out")[0]


def test_compare_opens_offline_without_errors(watched, compare_page: Path,
                                              screenshots: Path) -> None:
    watched.open(compare_page)
    page = watched.page
    data = json.loads((compare_page.parent / "compare.json").read_text())
    (pair,) = data["pairs"]
    assert page.locator("table.overall tbody tr").count() == len(COMPARE_METRICS)
    assert page.locator("tr.change").count() == len(pair["won"]) + len(pair["lost"]) > 0
    assert page.locator("table.by-category tbody tr").count() == len(pair["by_category"])
    page.screenshot(path=str(screenshots / "compare.png"))
    watched.assert_clean()


def test_changed_turn_opens_both_sides(watched, compare_page: Path, screenshots: Path) -> None:
    watched.open(compare_page)
    page = watched.page
    row = page.locator("tr.change").first
    scenario, turn = row.locator("td").nth(1).inner_text(), row.locator("td").nth(2).inner_text()
    row.click()
    drill = page.locator("#drill")
    assert drill.is_visible()
    sides = drill.locator(".drill-side")
    assert sides.count() == 2
    for index, label, selector in ((0, "A", "recency"), (1, "B", "bm25")):
        title = sides.nth(index).locator("h3").first.inner_text()
        assert title.startswith(f"{label} · {scenario} / {turn} · {selector}")
    queries = drill.locator("pre.query")
    assert queries.nth(0).inner_text() == queries.nth(1).inner_text()
    drill.screenshot(path=str(screenshots / "compare-drilldown.png"))
    assert page.evaluate("typeof window.__pwned") == "undefined"
    watched.assert_clean()
