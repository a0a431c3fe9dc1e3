"""The run report as HTML text: self-contained, escaped, and a function of the rows."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memeval.log import read_results
from memeval.report import RunPage, render_run
from memeval.report._html import CSP, script_json, unpack_json, visible_bidi
from memeval.report._run import turn_payload
from memeval.report._turns import outcome_tags
from memeval.testing.synthetic import (
    HOSTILE_CONTENT,
    HOSTILE_QUERY,
    synthetic_rows,
    write_synthetic_run,
)

DATA_BLOCK = re.compile(r'<script type="application/json" id="turn-data">(.*?)</script>', re.S)


class _Tags(HTMLParser):
    """Collects every start tag with its attributes, as a browser's tokenizer would."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _payload(html: str) -> dict:
    match = DATA_BLOCK.search(html)
    assert match, "the turn data block is missing"
    return unpack_json(match.group(1))


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    return write_synthetic_run(tmp_path / "run", turns=6, hostile=True,
                               judges=("gold", "claude"))


def test_report_is_written_into_the_run_folder(hostile_run: Path) -> None:
    path = render_run(hostile_run)
    assert path == hostile_run / "index.html"
    html = path.read_text(encoding="utf-8")
    assert "Summary" in html and "Turns" in html and "bm25" in html


def test_page_loads_nothing_from_anywhere(hostile_run: Path) -> None:
    html = render_run(hostile_run).read_text(encoding="utf-8")
    tags = _tags(html)
    csp = [a.get("content") for t, a in tags if t == "meta" and a.get("http-equiv")
           == "Content-Security-Policy"]
    assert csp == [CSP]
    assert "default-src 'none'" in CSP
    for tag, attrs in tags:
        assert tag not in ("link", "iframe", "img", "object", "embed", "base", "form")
        assert "src" not in attrs, (tag, attrs)
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#"), attrs


def test_hostile_text_never_becomes_markup(hostile_run: Path) -> None:
    html = render_run(hostile_run).read_text(encoding="utf-8")
    tags = _tags(html)
    scripts = [a for t, a in tags if t == "script"]
    # The page's own script and its data block, nothing a memory could add.
    assert len(scripts) == 2
    assert not any(k.startswith("on") for _, attrs in tags for k in attrs)
    assert "window.__pwned" not in DATA_BLOCK.sub("", html)
    block = DATA_BLOCK.search(html).group(1)
    assert "<" not in block and ">" not in block and "&" not in block


def test_data_block_carries_the_untrusted_text_verbatim(hostile_run: Path) -> None:
    payload = _payload(render_run(hostile_run).read_text(encoding="utf-8"))
    strings = payload["strings"]
    assert HOSTILE_QUERY in strings
    reminders = [strings[m["rem"]] for t in payload["turns"] for m in t["shown"]]
    assert any(HOSTILE_CONTENT in r for r in reminders)


@given(st.text())
@example("\u061c")  # a bidi control: shown as ⟨U+061C⟩ on the page, by design
def test_script_json_round_trips_any_text(text: str) -> None:
    encoded = str(script_json({"x": text, "y": [text]}))
    shown = visible_bidi(text)
    assert json.loads(encoded) == {"x": shown, "y": [shown]}
    assert not set("<>&") & set(encoded)


def _views(run: Path) -> tuple[list, dict]:
    rows = read_results(run)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return rows, turn_payload(rows, summary)


def test_one_view_per_session_turn_with_every_judge(hostile_run: Path) -> None:
    rows, payload = _views(hostile_run)
    assert len(payload["turns"]) == len(rows)
    for view in payload["turns"]:
        assert [j["name"] for j in view["j"]] == ["gold", "claude"]
        assert view["tags"] == view["j"][0]["tags"]


def test_views_show_the_summary_scores_not_their_own(hostile_run: Path) -> None:
    summary = json.loads((hostile_run / "summary.json").read_text(encoding="utf-8"))
    for row in summary["per_turn"]:
        row["f1"] = 0.123  # a score only the summary holds
    rows = read_results(hostile_run)
    scored = [v for v in turn_payload(rows, summary)["turns"] if v["out"] != "unscored"]
    assert scored and all(v["f1"] == 0.123 for v in scored)


def test_reminders_are_exactly_what_the_model_received(hostile_run: Path) -> None:
    from memeval.session import render_system_reminder

    rows, payload = _views(hostile_run)
    by_key = {(v["sc"], v["t"], v["sel"]): v for v in payload["turns"]}
    for row in rows:
        view = by_key[(row.scenario, row.turn_id, row.selector)]
        shown = [m for m in view["shown"] if not m["disc"]]
        assert [payload["strings"][m["rem"]] for m in shown] == [
            render_system_reminder(m.header, m.content) for m in row.record.surfaced]


def test_manifest_entries_pair_lines_with_keys(hostile_run: Path) -> None:
    rows, payload = _views(hostile_run)
    view = payload["turns"][0]
    row = next(r for r in rows if (r.scenario, r.turn_id, r.selector) ==
               (view["sc"], view["t"], view["sel"]))
    lines = []
    for ref in payload["manifests"][view["dirs"][0]["m"]]:
        line_ref, key = payload["entries"][ref].split(" ", 1)
        lines.append(payload["strings"][int(line_ref)])
        assert key in row.candidates
    assert "\n".join(lines) == row.record.dirs[0].manifest


def test_unpaired_manifest_keeps_its_text(tmp_path: Path) -> None:
    rows = synthetic_rows(turns=1, selectors=("bm25",))
    record = rows[0].record
    ran_on = replace(record.dirs[0],
                     manifest=record.dirs[0].manifest + "\n a description that ran on")
    rows[0] = replace(rows[0], record=replace(record, dirs=(ran_on, *record.dirs[1:])))
    view = turn_payload(rows, {})["turns"][0]
    assert view["dirs"][0]["m"] is None
    assert len(view["dirs"][0]["lines"]) == len(rows[0].candidates) + 1


@pytest.mark.parametrize(("score", "flags", "tags"), [
    ({"outcome": "exact", "recall": 1.0, "false_positives": 0}, {}, ["hit"]),
    ({"outcome": "partial", "recall": 0.5, "false_positives": 1}, {},
     ["partial", "miss", "false-positive"]),
    ({"outcome": "partial", "recall": 1.0, "false_positives": 1}, {},
     ["partial", "false-positive"]),
    ({"outcome": "unscored", "selector_error": True}, {}, ["unscored", "error"]),
    ({"outcome": "abstained", "false_positives": 0}, {"skipped": "nothing-to-select"},
     ["abstain-correct", "skipped"]),
    ({"outcome": "false_alarm", "false_positives": 2},
     {"discarded": True, "skipped": "no-tool-use-discarded"}, ["false-positive", "discarded"]),
])
def test_outcome_tags(score: dict, flags: dict, tags: list[str]) -> None:
    from dataclasses import replace

    result = replace(synthetic_rows(turns=1, selectors=("bm25",))[0], discarded=False,
                     skipped=None)
    assert outcome_tags(score, replace(result, **flags)) == tags


def test_a_missing_summary_is_a_warning_not_a_rescore(hostile_run: Path) -> None:
    (hostile_run / "summary.json").unlink()
    html = render_run(hostile_run).read_text(encoding="utf-8")
    assert "summary.json is missing or does not match" in html
    assert "memeval report" in html


def test_invariant_failures_are_listed(hostile_run: Path) -> None:
    (hostile_run / "invariants.json").write_text(json.dumps([
        {"test": "test_at_most_five_surface[faithful]",
         "counterexample": "selector returned <script>window.__pwned=1</script> x6"},
    ]))
    html = render_run(hostile_run).read_text(encoding="utf-8")
    assert "test_at_most_five_surface[faithful]" in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt; x6" in html


def test_broken_side_files_become_warnings_not_crashes(hostile_run: Path) -> None:
    (hostile_run / "config.json").write_text("{not json")
    (hostile_run / "invariants.json").write_text('{"failures": [{"nope": 1}]}')
    html = render_run(hostile_run).read_text(encoding="utf-8")
    assert "config.json: unreadable" in html
    assert "invariants.json: item 0 lacks a &#39;test&#39; field" in html


def test_missing_results_is_a_clear_error(tmp_path: Path) -> None:
    from memeval.errors import MemevalError

    with pytest.raises(MemevalError, match=r"no results\.jsonl"):
        render_run(tmp_path)


def test_big_run_stays_small(tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "big", turns=2000, selectors=("bm25",),
                              memories=30)
    # A bare summary skips the bootstrap (slow, and not what this test is about); the
    # report must render with whatever summary fields exist.
    (run / "summary.json").write_text(json.dumps({"rows": 2000, "selectors": ["bm25"]}))
    html = render_run(run).read_text(encoding="utf-8")
    assert len(html.encode()) < 10 * 1024 * 1024
    assert len(_payload(html)["turns"]) == 2000


def test_unfinished_run_is_flagged_only_when_asked(hostile_run: Path) -> None:
    (hostile_run / "RUN_INCOMPLETE").write_text("not finished\n")
    # evaluate renders while its own mark is still there: no warning then.
    assert "has not finished" not in render_run(hostile_run).read_text(encoding="utf-8")
    html = render_run(hostile_run, flag_incomplete=True).read_text(encoding="utf-8")
    assert "has not finished" in html


def test_judge_agreement_panel_when_a_model_judge_ran(hostile_run: Path) -> None:
    html = render_run(hostile_run).read_text(encoding="utf-8")
    assert "Judge agreement: claude vs gold" in html
    assert "κ = " in html


def test_phase1_and_model_door_facts_from_the_summary(hostile_run: Path) -> None:
    from memeval.scoring.summary import summarize

    summary = summarize(read_results(hostile_run))
    summary["phase1"] = {"index_reachable_share": 0.5, "relevant_project_memories": 4,
                         "by_category": {"direct": {"reachable": 2, "relevant": 4,
                                                    "share": 0.5}}}
    summary["llm"] = {"calls": 7, "cost_usd": 0.5, "max_cost": 0.5, "budget_exhausted": True,
                      "calls_refused_by_budget": 3, "errors": 0, "price_table": "bundled"}
    (hostile_run / "summary.json").write_text(json.dumps(summary))
    html = render_run(hostile_run).read_text(encoding="utf-8")
    assert "reaches 50 % of them" in html and "2 / 4" in html
    assert "budget exhausted" in html and "3 calls refused" in html


def test_repeats_show_pass_hat_k_and_each_repeat_is_a_turn(tmp_path: Path) -> None:
    from dataclasses import replace

    from memeval.log import ResultsWriter
    from memeval.scoring.summary import summarize

    rows = synthetic_rows(turns=4, selectors=("bm25",))
    again = [replace(r, repeat=1, selected=()) for r in rows]
    run = tmp_path / "rep"
    with ResultsWriter(run) as writer:
        writer.append_unit(rows)
        writer.append_unit(again)
    (run / "summary.json").write_text(json.dumps(summarize(rows + again)))
    html = render_run(run).read_text(encoding="utf-8")
    assert 'id="repeats-table"' in html and "pass^2" in html
    assert len(_payload(html)["turns"]) == 8


def test_bidi_controls_in_names_are_shown_not_obeyed(tmp_path: Path) -> None:
    """A selector or scenario name with U+202E must not visually reorder the page."""
    from dataclasses import replace

    from memeval.log import ResultsWriter
    from memeval.scoring.summary import summarize

    spoof = "safe\u202egnp.exe"
    rows = [replace(r, scenario=spoof, query=f"why {spoof}?")
            for r in synthetic_rows(turns=2, selectors=("bm25",))]
    run = tmp_path / "bidi"
    with ResultsWriter(run) as writer:
        writer.append_unit(rows)
    (run / "summary.json").write_text(json.dumps(summarize(rows)))
    html = render_run(run).read_text(encoding="utf-8")
    assert "\u202e" not in html
    assert "safe⟨U+202E⟩gnp.exe" in html


def test_labels_of_close_points_do_not_print_over_each_other() -> None:
    import itertools
    import re as regex

    from memeval.report._charts import quality_vs_cost

    names = ("claude?prompt=a", "claude?prompt=b", "bm25")
    points = [{"name": name, "x": 1.0, "y": 0.5, "low": None, "high": None, "colour": "#000"}
              for name in names]
    svg = str(quality_vs_cost(points, "bytes"))
    label_ys = sorted(float(y) for y, name in
                      regex.findall(r'y="([0-9.]+)"[^>]*>([^<]+)</text>', svg) if name in names)
    assert len(label_ys) == 3
    assert min(b - a for a, b in itertools.pairwise(label_ys)) >= 12


# Measured on a generated LoCoMo-sized run (10 × 200 turns, 200 files, 6 selectors,
# 12 000 rows): index.html 2.36 MB (197 B a row), results.jsonl + payloads.jsonl
# 74.7 MB (6.2 KB a row, most of it the `all` selector's 200-name lists). Before v3
# and the packed page: 5.9 KB and 47.8 KB a row. The limits keep a 2x margin over the
# synthetic run's own figures (about 140 B and 2.7 KB a row) and stay far below the
# old layout, so a regression to repeating payloads in rows or views fails here.
REPORT_BYTES_PER_ROW = 300
RESULTS_BYTES_PER_ROW = 6_000


def test_a_big_run_keeps_its_report_and_results_small(tmp_path: Path) -> None:
    turns, selectors = 600, ("bm25", "recency", "oracle")
    run = write_synthetic_run(tmp_path / "big", turns=turns, selectors=selectors,
                              memories=200)
    rows = turns * len(selectors)
    html = render_run(run)
    assert html.stat().st_size <= REPORT_BYTES_PER_ROW * rows, html.stat().st_size / rows
    stored = sum((run / name).stat().st_size for name in ("results.jsonl", "payloads.jsonl"))
    assert stored <= RESULTS_BYTES_PER_ROW * rows, stored / rows
    # Every row is still there in the page, each manifest once.
    payload = _payload(html.read_text(encoding="utf-8"))
    assert len(payload["turns"]) == rows
    assert len(payload["manifests"]) <= turns


def test_finishing_a_run_reads_its_rows_once_and_writes_what_two_reads_would(
        hostile_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`finish_run` gathers the summary's inputs and the report's views in one read of
    the rows: the summary and page must equal a summary of a fresh read and a report
    rendered from the folder on its own."""
    import memeval.run.evaluate as evaluate_module
    from memeval.log import iter_results
    from memeval.run.evaluate import finish_run
    from memeval.scoring.summary import summarize

    reads = []
    real = evaluate_module.iter_results
    monkeypatch.setattr(evaluate_module, "iter_results",
                        lambda *a, **k: reads.append(a) or real(*a, **k))
    summary = finish_run(hostile_run, page=RunPage())
    once = _payload((hostile_run / "index.html").read_text(encoding="utf-8"))
    assert len(reads) == 1

    fresh = summarize(iter_results(hostile_run, searches=False), run_dir=hostile_run)
    assert {**summary, "created": None} == {**fresh, "created": None}
    again = _payload(render_run(hostile_run).read_text(encoding="utf-8"))
    assert once == again
    assert len(once["turns"]) == len(read_results(hostile_run)) > 0
    assert {j["name"] for view in once["turns"] for j in view["j"]} == {"gold", "claude"}


def test_the_main_judges_strings_enter_the_table_first_on_every_turn() -> None:
    """Views are built in one pass before the summary names the main judge; they put
    its strings first as the two-pass build did, also on a turn where the label judge
    states no labels (an unlabelled turn) and a model judge sorts before it."""
    from dataclasses import replace

    from memeval.judges.base import MemoryVerdict
    from memeval.report._turns import TurnViews
    from memeval.testing.synthetic import synthetic_rows

    rows = synthetic_rows(turns=2, selectors=("bm25",), judges=("gold", "claude"))
    for index, row in enumerate(rows):
        judgements = {name: replace(j, verdicts=(MemoryVerdict("x.md", "relevant",
                                                               f"{name} reason {index}"),))
                      for name, j in row.judgements.items()}
        if index == 1:  # unlabelled: the gold judge states no labels on this turn
            judgements["gold"] = replace(judgements["gold"], relevant=None)
        rows[index] = replace(row, judgements=judgements)
    views = TurnViews()
    for row in rows:
        views.add(row)
    strings = views.tables.strings.items
    for index in range(2):
        assert strings.index(f"gold reason {index}") < strings.index(f"claude reason {index}")
