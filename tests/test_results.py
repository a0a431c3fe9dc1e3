"""The run folder keeps every finished unit exactly once, whatever killed the run."""

from __future__ import annotations

import json

import pytest

from memeval.record import TurnResult
from memeval.results import (
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    ResultsWriter,
    RunFolderBusy,
    read_results,
)


def _unit(scenario: str, selector: str = "bm25", turns: int = 2) -> list[TurnResult]:
    return [TurnResult(scenario=scenario, scenario_path="", turn_id=f"t{i}", turn_index=i,
                       selector=selector, repeat=0, category="direct", why="", query="q",
                       relevant=(), acceptable=(), selected=())
            for i in range(turns)]


def _stored(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_units_are_appended_whole_and_reported_complete(tmp_path):
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a"))
        writer.append_unit(_unit("b", turns=3))
        assert writer.completed_units() == {("a", "bm25", 0), ("b", "bm25", 0)}
    rows = read_results(tmp_path)
    assert [r.turn_id for r in rows] == ["t0", "t1", "t0", "t1", "t2"]
    assert {r["unit_size"] for r in _stored(tmp_path / RESULTS_FILE)
            if r["scenario"] == "b"} == {3}


def test_a_torn_last_line_is_dropped_with_its_unit_on_resume(tmp_path):
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a"))
        writer.append_unit(_unit("b"))
    path = tmp_path / RESULTS_FILE
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # a kill in the middle of the last row
    assert len(read_results(path)) == 3
    with ResultsWriter(tmp_path) as writer:
        assert writer.completed_units() == {("a", "bm25", 0)}
    assert [r.scenario for r in read_results(path)] == ["a", "a"]


def test_a_unit_short_of_rows_is_cut_so_no_row_is_kept_twice(tmp_path):
    path = tmp_path / RESULTS_FILE
    rows = [{**r.to_dict(), "unit_size": 2} for r in _unit("a")] + [
        {**_unit("b")[0].to_dict(), "unit_size": 2}
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ResultsWriter(tmp_path) as writer:
        assert writer.completed_units() == {("a", "bm25", 0)}
        writer.append_unit(_unit("b"))
    assert [(r.scenario, r.turn_id) for r in read_results(path)] == [
        ("a", "t0"), ("a", "t1"), ("b", "t0"), ("b", "t1"),
    ]


def test_a_second_writer_on_the_same_folder_is_refused(tmp_path):
    with ResultsWriter(tmp_path), pytest.raises(RunFolderBusy, match="--out"):
        ResultsWriter(tmp_path).__enter__()


def test_the_incomplete_marker_stays_until_the_run_is_marked_complete(tmp_path):
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a"))
    assert (tmp_path / INCOMPLETE_MARKER).exists()
    with ResultsWriter(tmp_path) as writer:
        writer.mark_complete()
    assert not (tmp_path / INCOMPLETE_MARKER).exists()


def test_a_hand_edited_row_is_reported_with_its_line(tmp_path):
    path = tmp_path / RESULTS_FILE
    path.write_text(json.dumps(_unit("a")[0].to_dict()) + "\nnot json\n")
    with pytest.raises(Exception, match=r"results.jsonl:2: not a JSON line"):
        read_results(path)


def test_rows_of_an_older_results_format_fail_with_one_line_naming_it(tmp_path):
    path = tmp_path / RESULTS_FILE
    path.write_text('{"scenario": "a", "judge": "gold", "record": {}}\n')
    with pytest.raises(Exception, match=r"results.jsonl:1: written by a memeval before 0.2.*"
                                        r"new --out"):
        read_results(tmp_path)


def test_repeated_manifests_and_headers_are_stored_once_and_read_back_whole(tmp_path):
    from memeval.testing.synthetic import synthetic_rows

    rows = synthetic_rows(turns=6, selectors=("bm25", "recency"))
    units: dict = {}
    for row in rows:
        units.setdefault(row.unit_key, []).append(row)
    with ResultsWriter(tmp_path) as writer:
        for unit in units.values():
            writer.append_unit(unit)
    back = read_results(tmp_path)
    assert [r.key for r in back] == [r.key for r in rows]
    for before, after in zip(rows, back, strict=True):
        assert after.record["dirs"][0]["manifest"] == before.record["dirs"][0]["manifest"]
        assert after.candidates == before.candidates
        assert after.judgements == before.judgements
    # Twelve rows share one memdir: each header and manifest line is stored once.
    payloads = _stored(tmp_path / "payloads.jsonl")
    assert len(payloads) == len({p["h"] for p in payloads})
    lines = rows[0].record["dirs"][0]["manifest"].split("\n")
    assert len(payloads) == len(set(lines)) + len(rows[0].candidates)
    # Paths are stored relative to the session's temporary root.
    for row in _stored(tmp_path / RESULTS_FILE):
        record = row["record"]
        assert not record["dirs"][0]["memory_dir"].startswith("/")
        assert not any(m["path"].startswith("/") for m in record["surfaced"])


def test_no_lock_file_is_left_behind(tmp_path):
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a"))
    assert not (tmp_path / ".memeval.lock").exists()
