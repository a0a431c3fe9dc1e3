"""The run report in a real browser: clean, offline, filterable, drillable, inert."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memeval.log import read_results
from memeval.report import render_run
from memeval.testing.synthetic import write_synthetic_run


def _visible_rows(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all("#turn-table tbody tr", """rows => rows.map(r => ({
        scenario: r.cells[0].textContent, category: r.cells[2].textContent,
        selector: r.cells[3].textContent, tags: r.cells[4].textContent,
        f1: r.cells[7].textContent, query: r.cells[10].textContent }))""")


def test_report_opens_offline_without_errors(watched, real_run: Path, screenshots: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    rows = read_results(real_run)
    assert page.locator("#summary-table tbody tr").count() == 3
    # A finished run, no broken side files: the only banner is the few-turns alert.
    assert page.locator(".warn, .bad").count() == page.locator("#alerts").count() == 1
    alerts = page.locator("#alerts li").all_inner_texts()
    assert alerts and all("rests on" in a for a in alerts)
    assert page.locator("#charts svg").count() >= 4
    assert page.inner_text("#f-count") == f"{len(rows)} of {len(rows)} turn × selector rows"
    page.screenshot(path=str(screenshots / "summary.png"))
    watched.assert_clean()


def test_filters_narrow_the_table(watched, real_run: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    total = len(_visible_rows(page))
    page.select_option("#f-category", "keyword-trap")
    rows = _visible_rows(page)
    assert 0 < len(rows) < total
    assert {r["category"] for r in rows} == {"keyword-trap"}
    page.select_option("#f-selector", "oracle")
    rows = _visible_rows(page)
    assert rows and {r["selector"] for r in rows} == {"oracle"}
    page.select_option("#f-category", "")
    page.select_option("#f-selector", "recency")
    page.select_option("#f-outcome", "miss")
    rows = _visible_rows(page)
    assert rows and all("miss" in r["tags"] for r in rows)
    page.select_option("#f-outcome", "abstain-correct")
    assert all("abstain-correct" in r["tags"] for r in _visible_rows(page))
    page.select_option("#f-outcome", "")
    page.select_option("#f-selector", "")
    page.fill("#f-text", "Could Not Obtain")  # one query, case-insensitive
    rows = _visible_rows(page)
    assert len(rows) == 3 and all("could not obtain" in r["query"] for r in rows)
    page.fill("#f-text", "")
    assert len(_visible_rows(page)) == total
    watched.assert_clean()


def test_sorting_by_f1(watched, real_run: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    page.click('#turn-table th[data-key="f1"]')
    values = [float(r["f1"]) for r in _visible_rows(page) if r["f1"] != "—"]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    page.click('#turn-table th[data-key="f1"]')
    values = [float(r["f1"]) for r in _visible_rows(page) if r["f1"] != "—"]
    assert values == sorted(values)


def test_drilldown_shows_what_the_model_saw(watched, real_run: Path, screenshots: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    page.select_option("#f-selector", "bm25")
    page.select_option("#f-outcome", "hit")
    page.fill("#f-text", "sidekiq")
    row = page.locator("#turn-table tbody tr").first
    query = row.locator("td").nth(10).inner_text()
    row.click()
    drill = page.locator("#drill")
    assert drill.is_visible()
    assert drill.locator("pre.query").inner_text() == query
    assert drill.locator(".manifest .b-relevant").count() >= 1
    reminder = drill.locator("pre.reminder").first.inner_text()
    assert reminder.startswith("<system-reminder>\n") and reminder.endswith("</system-reminder>")
    assert "#turn-" in page.url
    drill.screenshot(path=str(screenshots / "drilldown.png"))
    # The link to a turn opens it again.
    page.reload()
    page.wait_for_function("window.memevalReady === true")
    assert page.locator("#drill pre.query").inner_text() == query
    watched.assert_clean()


def _open_every_row(page) -> int:
    count = page.locator("#turn-table tbody tr").count()
    for index in range(count):
        page.locator("#turn-table tbody tr").nth(index).click()
    return count


def _assert_inert(page) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("script").count() == 2  # the page's data block and its own script
    assert page.locator("img, iframe, object, embed, a[href^='javascript']").count() == 0


def test_hostile_memories_stay_text(watched, real_run: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    page.fill("#f-text", "pwned")
    assert _open_every_row(page) == 3  # the hostile turn, once per selector
    page.select_option("#f-selector", "oracle")
    page.locator("#turn-table tbody tr").first.click()
    reminder = page.locator("#drill pre.reminder").first.inner_text()
    assert "<script>window.__pwned=1</script>" in reminder
    assert "javascript:window.__pwned=1" in reminder
    _assert_inert(page)
    watched.assert_clean()


def test_hostile_synthetic_run_stays_text(watched, tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "hostile", turns=4, hostile=True,
                              judges=("gold", "claude"))
    watched.open(render_run(run))
    _open_every_row(watched.page)
    _assert_inert(watched.page)
    watched.assert_clean()


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = write_synthetic_run(tmp_path_factory.mktemp("big") / "run", turns=2000,
                              selectors=("bm25",), memories=60)
    render_run(run)
    return run


def test_two_thousand_turn_report_is_small_and_quick(watched, big_run: Path) -> None:
    html = big_run / "index.html"
    assert html.stat().st_size < 10 * 1024 * 1024
    started = time.perf_counter()
    watched.open(html)
    seconds = time.perf_counter() - started
    # The goal is < 3 s; the bound is generous so a busy CI machine does not flake.
    assert seconds < 10, f"2 000-turn report took {seconds:.1f} s to open"
    page = watched.page
    assert page.inner_text("#f-count").startswith("2000 of 2000 turn × selector rows")
    page.select_option("#f-category", "stale")
    assert {r["category"] for r in _visible_rows(page)} == {"stale"}
    page.locator("#turn-table tbody tr").first.click()
    assert page.locator("#drill pre.query").is_visible()
    (big_run / "load_seconds.json").write_text(json.dumps({"seconds": seconds}))
    watched.assert_clean()


def test_error_and_discarded_turns_explain_themselves(watched, tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "odd", turns=20, selectors=("bm25", "recency"))
    watched.open(render_run(run))
    page = watched.page
    page.select_option("#f-outcome", "error")
    assert all("error" in r["tags"] for r in _visible_rows(page))
    page.locator("#turn-table tbody tr").first.click()
    assert "APITimeoutError" in page.locator("#drill .bad").inner_text()
    page.select_option("#f-outcome", "discarded")
    page.locator("#turn-table tbody tr").first.click()
    assert page.locator("#drill .b-discarded").count() >= 1
    assert page.locator("#drill pre.reminder").first.inner_text().startswith("<system-reminder>")
    watched.assert_clean()


def test_opening_a_turn_keeps_your_place_and_esc_or_back_returns_to_it(watched,
                                                                        real_run: Path) -> None:
    watched.open(real_run / "index.html")
    page = watched.page
    rows = page.locator("#turn-table tbody tr")
    target = rows.nth(min(12, rows.count() - 1))
    target.scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    target.click()
    assert page.locator("#drill").is_visible()
    assert page.evaluate("location.hash").startswith("#turn-")
    page.keyboard.press("Escape")
    page.wait_for_function("document.getElementById('drill').hidden")
    assert abs(page.evaluate("window.scrollY") - before) < 5
    target.click()
    page.go_back()
    page.wait_for_function("document.getElementById('drill').hidden")
    assert abs(page.evaluate("window.scrollY") - before) < 5
    page.go_forward()  # the deep link opens the same turn again
    page.wait_for_function("!document.getElementById('drill').hidden")
    watched.assert_clean()


def test_the_page_fits_1280_pixels_and_charts_fill_their_cards(watched, real_run: Path) -> None:
    page = watched.page
    page.set_viewport_size({"width": 1280, "height": 900})
    watched.open(real_run / "index.html")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    table = page.locator("#summary-table")
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth + 1 || "
                          "getComputedStyle(t).overflowX === 'auto'")
    for panel in page.locator("#charts .panel").all()[:2]:
        svg_width = panel.locator("svg").first.evaluate("s => s.getBoundingClientRect().width")
        panel_width = panel.evaluate("p => p.clientWidth")
        assert svg_width >= 0.8 * panel_width - 30
    watched.assert_clean()


def test_a_turn_opens_exactly_from_the_packed_data(watched, tmp_path: Path) -> None:
    """The turn data travels gzip+base64 and the page unpacks it itself: a deep link to
    any turn shows that turn's query, picks, gold labels and verdicts, all of them."""
    import re

    from memeval.report._html import unpack_json

    run = write_synthetic_run(tmp_path / "packed", turns=40, selectors=("bm25", "recency"),
                              memories=150)
    html = render_run(run).read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="turn-data">(.*?)</script>', html,
                      re.S).group(1)
    assert json.loads(block).keys() == {"gz"}, "the turn data must be packed"
    data = unpack_json(block)
    strings = data["strings"]
    # A turn deep in the table, with picks and a gold label, beyond the first page's rows.
    view = next(v for v in reversed(data["turns"]) if v["sel_keys"] and v["rel"])
    watched.open(run / "index.html")
    page = watched.page
    page.evaluate(f"location.hash = '#turn-{view['id']}'")
    page.wait_for_function(f"document.querySelector('#drill .drill-body')?.dataset.turn"
                           f" === '{view['id']}'")
    drill = page.locator("#drill")
    assert drill.locator("pre.query").inner_text() == strings[view["q"]]
    text = drill.inner_text()
    for key in [*view["sel_keys"], *view["rel"]]:
        assert key in text
    verdicts = drill.locator(".sec table:not(.manifest) tbody tr").all_inner_texts()
    for key, verdict, _reason in view["j"][0]["v"]:
        assert any(key in row and verdict in row for row in verdicts), (key, verdict)
    entries = data["manifests"][view["dirs"][0]["m"]]
    assert drill.locator("table.manifest tbody tr").count() == len(entries)
    gold = drill.locator("table.manifest tbody tr:has(.b-relevant)").all_inner_texts()
    assert len(gold) == len([k for k in view["rel"] if any(
        data["entries"][e].split(" ", 1)[1] == k for e in entries)])
    reminders = drill.locator("pre.reminder").all_inner_texts()
    assert reminders == [strings[m["rem"]] for m in view["shown"]]
    watched.assert_clean()
