"""The run folder keeps every finished unit exactly once, whatever killed the run."""

from __future__ import annotations

import json

import pytest

from memeval.results import (
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    ResultsWriter,
    RunFolderBusy,
    read_results,
)


def _unit(scenario: str, selector: str = "bm25", turns: int = 2) -> list[dict]:
    return [
        {"scenario": scenario, "selector": selector, "repeat": 0, "turn_id": f"t{i}"}
        for i in range(turns)
    ]


def test_units_are_appended_whole_and_reported_complete(tmp_path):
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a"))
        writer.append_unit(_unit("b", turns=3))
        assert writer.completed_units() == {("a", "bm25", 0), ("b", "bm25", 0)}
    rows = read_results(tmp_path / RESULTS_FILE)
    assert [r["turn_id"] for r in rows] == ["t0", "t1", "t0", "t1", "t2"]
    assert {r["unit_size"] for r in rows if r["scenario"] == "b"} == {3}


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
    assert [r["scenario"] for r in read_results(path)] == ["a", "a"]


def test_a_unit_short_of_rows_is_cut_so_no_row_is_kept_twice(tmp_path):
    path = tmp_path / RESULTS_FILE
    rows = [{**r, "unit_size": 2} for r in _unit("a")] + [
        {**_unit("b")[0], "unit_size": 2}
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ResultsWriter(tmp_path) as writer:
        assert writer.completed_units() == {("a", "bm25", 0)}
        writer.append_unit(_unit("b"))
    assert [(r["scenario"], r["turn_id"]) for r in read_results(path)] == [
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
    path.write_text('{"scenario": "a"}\nnot json\n')
    with pytest.raises(Exception, match=r"results.jsonl:2: not a JSON row"):
        read_results(path)
