"""The run folder keeps every finished unit exactly once, whatever killed the run."""

from __future__ import annotations

import json

import pytest

from memeval.log import (
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    RecordedTurn,
    ResultsWriter,
    RunFolderBusy,
    SearchedDir,
    TurnResult,
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
        assert writer.completed_turns() == {("a", "bm25", 0, 0), ("a", "bm25", 0, 1),
                                            ("b", "bm25", 0, 0), ("b", "bm25", 0, 1),
                                            ("b", "bm25", 0, 2)}
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
        assert writer.completed_turns() == {("a", "bm25", 0, 0), ("a", "bm25", 0, 1)}
    assert [r.scenario for r in read_results(path)] == ["a", "a"]


def test_a_unit_short_of_rows_is_cut_so_no_row_is_kept_twice(tmp_path):
    path = tmp_path / RESULTS_FILE
    rows = [{**r.to_dict(), "unit_size": 2} for r in _unit("a")] + [
        {**_unit("b")[0].to_dict(), "unit_size": 2}
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ResultsWriter(tmp_path) as writer:
        assert writer.completed_turns() == {("a", "bm25", 0, 0), ("a", "bm25", 0, 1)}
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
    from memeval.testing.synthetic import synthetic_rows, write_rows

    rows = synthetic_rows(turns=6, selectors=("bm25", "recency"))
    write_rows(tmp_path, rows)
    back = read_results(tmp_path)
    assert [r.key for r in back] == [r.key for r in rows]
    for before, after in zip(rows, back, strict=True):
        assert after.record.dirs[0].manifest == before.record.dirs[0].manifest
        assert after.candidates == before.candidates
        assert after.judgements == before.judgements
    # Twelve rows share one memdir: each header and manifest line is stored once.
    payloads = _stored(tmp_path / "payloads.jsonl")
    assert len(payloads) == len({p["h"] for p in payloads})
    values = [json.dumps(p["v"], sort_keys=True) for p in payloads]
    for line in set(rows[0].record.dirs[0].manifest.split("\n")):
        assert values.count(json.dumps(line)) == 1
    for header in rows[0].record.dirs[0].candidates:
        stored = {k: v for k, v in header.items() if k != "file_path"}
        assert values.count(json.dumps(stored, sort_keys=True)) == 1
    # Paths are stored relative to the session's temporary root.
    by_hash = {p["h"]: p["v"] for p in payloads}
    for row in _stored(tmp_path / RESULTS_FILE):
        record = row["record"]
        assert not record["dirs"][0]["memory_dir"].startswith("/")
        joined = by_hash[record["surfaced"]["$"]]["$*"] if record["surfaced"] else ""
        surfaced = [by_hash[joined[i:i + 16]] for i in range(0, len(joined), 16)]
        assert not any(m["path"].startswith("/") for m in surfaced)


def test_a_memory_surfaced_by_many_rows_is_stored_once(tmp_path):
    """Rows keep references only: each surfaced memory's content, each candidate list
    and each verdict list is written once however many turns and selectors repeat it."""
    from memeval.testing.synthetic import synthetic_rows, write_rows

    rows = synthetic_rows(turns=8, selectors=("bm25", "recency", "oracle"))
    write_rows(tmp_path, rows)
    contents = [m.content for r in rows for m in r.record.surfaced]
    repeated = [c for c in set(contents) if contents.count(c) > 1]
    assert repeated, "the synthetic run must surface some memory more than once"
    results = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8")
    payloads = (tmp_path / "payloads.jsonl").read_text(encoding="utf-8")
    for content in repeated:
        encoded = json.dumps(content, ensure_ascii=False)[1:-1]
        assert encoded not in results
        assert payloads.count(encoded) == 1
    lines = results.splitlines()
    assert max(map(len, lines)) < 3000  # scalars and references only
    back = read_results(tmp_path)
    assert [r.judgements for r in back] == [r.judgements for r in rows]
    assert [r.selected for r in back] == [r.selected for r in rows]
    assert [[m.content for m in r.record.surfaced] for r in back] == [
        [m.content for m in r.record.surfaced] for r in rows]


def test_results_of_format_v2_are_refused_with_one_line_naming_the_fix(tmp_path):
    """v2 was days old when v3 replaced it: its folders are refused, not half-read."""
    row = {**_unit("a")[0].to_dict(), "v": 2, "unit_size": 1}
    (tmp_path / RESULTS_FILE).write_text(json.dumps(row) + "\n")
    with pytest.raises(Exception, match=r"results.jsonl:1: written by results format v2; "
                                        r"this memeval reads formats v3\. Rerun .*--out"):
        read_results(tmp_path)


def test_an_unknown_format_is_refused_naming_the_fix(tmp_path):
    row = {**_unit("a")[0].to_dict(), "v": 1, "unit_size": 1}
    (tmp_path / RESULTS_FILE).write_text(json.dumps(row) + "\n")
    with pytest.raises(Exception, match=r"results format v1.*reads formats v3.*--out"):
        read_results(tmp_path)


def test_the_lock_file_is_never_unlinked_so_two_holders_cannot_coexist(tmp_path):
    """Replays the interleaving: B opens the lock file while A holds it; A finishes;
    C starts a run. Had A unlinked the file, C would lock a new file and B the old
    one, and both would believe they hold the folder."""
    import fcntl
    import os

    with ResultsWriter(tmp_path) as writer:  # A
        writer.append_unit(_unit("a"))
        waiting = os.open(tmp_path / ".memeval.lock", os.O_RDWR)  # B, about to flock
    try:
        with ResultsWriter(tmp_path), pytest.raises(BlockingIOError):  # C holds it
            fcntl.flock(waiting, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(waiting)


def test_the_lazy_payload_file_answers_as_the_whole_file_does(tmp_path):
    from memeval.log import PayloadFile
    from memeval.testing.synthetic import write_synthetic_run

    run = write_synthetic_run(tmp_path / "run", turns=6, selectors=("bm25", "oracle"))
    whole = {entry["h"]: entry["v"] for entry in _stored(run / "payloads.jsonl")}
    lazy = PayloadFile(run / "payloads.jsonl")
    try:
        assert set(lazy) == set(whole) and len(lazy) == len(whole)
        for digest, value in whole.items():
            assert lazy[digest] == value
    finally:
        lazy.close()


def test_the_first_copy_of_a_payload_wins_and_a_torn_last_line_is_not_there(tmp_path):
    from memeval.log import PayloadFile

    path = tmp_path / "payloads.jsonl"
    path.write_bytes(b'{"h": "aaaaaaaaaaaaaaaa", "v": 1}\n'
                     b'{"h": "bbbbbbbbbbbbbbbb", "v": [2, "\\u00e9"]}\n'
                     b'{"h": "aaaaaaaaaaaaaaaa", "v": "a later copy"}\n'
                     b'{"v": 3, "h": "cccccccccccccccc"}\n'
                     b'{"h": "eeeeeeeeeeeeeeee", "v": "torn')
    lazy = PayloadFile(path)
    try:
        assert sorted(lazy) == ["a" * 16, "b" * 16, "c" * 16]
        assert (lazy["a" * 16], lazy["b" * 16], lazy["c" * 16]) == (1, [2, "é"], 3)
        with pytest.raises(KeyError):
            lazy["e" * 16]
    finally:
        lazy.close()


def test_a_broken_payload_line_is_reported_with_its_line(tmp_path):
    from memeval.log import PayloadFile

    path = tmp_path / "payloads.jsonl"
    path.write_bytes(b'{"h": "aaaaaaaaaaaaaaaa", "v": 1}\n{"h": "dddddddddddddddd", "v": {no}\n')
    with pytest.raises(Exception, match=r"payloads.jsonl:2: not a JSON line.*Move it away"):
        PayloadFile(path)


def test_a_long_payload_comes_back_whole(tmp_path):
    from memeval.jsonenc import dump_line
    from memeval.log import PayloadFile, PayloadStore

    store = PayloadStore()
    values = ["x" * n for n in (10, 4095, 4096, 4097, 70_000)] + [{"é": "ü" * 9000}]
    digests = [store.ref(v)["$"] for v in values]
    (tmp_path / "payloads.jsonl").write_bytes(
        b"".join(dump_line({"h": h, "v": v}) for h, v in store.pending().items()))
    lazy = PayloadFile(tmp_path / "payloads.jsonl")
    try:
        assert [lazy[d] for d in reversed(digests)] == values[::-1]
    finally:
        lazy.close()


@pytest.mark.parametrize("layout", ["compact", "spaced", "keys-reordered", "mixed"])
def test_payload_files_of_every_layout_read_back(tmp_path, layout):
    """Payload lines written by orjson (compact), by memeval before it (json's spaces),
    or by hand (keys in another order) give the same values."""
    from memeval.jsonenc import dump_line
    from memeval.log import PayloadFile, PayloadStore

    store = PayloadStore()
    values = ["text", ["a", 1, None], {"b": 2.5, "a": "é"}, 2**70]
    digests = [store.ref(v)["$"] for v in values]
    write = {
        "compact": dump_line,
        "spaced": lambda e: (json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n").encode(),
        "keys-reordered": lambda e: (json.dumps({"v": e["v"], "h": e["h"]}) + "\n").encode(),
        "mixed": lambda e: dump_line(e) if isinstance(e["v"], dict | int) else
        (json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n").encode(),
    }[layout]
    (tmp_path / "payloads.jsonl").write_bytes(
        b"".join(write({"h": h, "v": v}) for h, v in store.pending().items()))
    payloads = PayloadFile(tmp_path / "payloads.jsonl")
    try:
        assert [payloads[d] for d in digests] == values
    finally:
        payloads.close()


def test_summary_streamed_from_the_folder_equals_the_summary_of_the_rows_written(tmp_path):
    from memeval.log import iter_results
    from memeval.scoring.summary import summarize
    from memeval.testing.synthetic import write_synthetic_run

    run = write_synthetic_run(tmp_path / "run", turns=12, selectors=("bm25", "recency"),
                              judges=("gold", "claude"))
    # summary.json was written from the rows in memory, before they were stored.
    whole = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    streamed = json.loads(json.dumps(summarize(iter_results(run), run_dir=run), default=str))
    streamed.pop("created"), whole.pop("created")
    assert streamed == whole
    assert streamed["agreement"], "two judges: agreement must be computed"


def test_a_torn_payload_line_is_cut_before_new_payloads_are_appended(tmp_path):
    """A kill inside a payload line left a fragment; appending after it would glue the
    next payload onto it and lose it, so every later row pointing there breaks."""
    from memeval.log import PAYLOADS_FILE

    def row(scenario: str, manifest: str) -> list[TurnResult]:
        return [TurnResult(scenario=scenario, scenario_path="", turn_id="t0", turn_index=0,
                           selector="bm25", repeat=0, category="direct", why="", query="q",
                           relevant=(), acceptable=(), selected=(),
                           record=RecordedTurn(dirs=(SearchedDir("project", manifest=manifest),)))]

    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(row("a", "- x.md: one"))
    payloads = tmp_path / PAYLOADS_FILE
    payloads.write_bytes(payloads.read_bytes() + b'{"h": "0123", "v": ["torn')
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(row("b", "- y.md: two"))
    assert payloads.read_bytes().endswith(b"\n")
    assert [r.record.dirs[0].manifest for r in read_results(tmp_path)] == [
        "- x.md: one", "- y.md: two"]


def test_a_turn_already_on_disk_is_not_written_again(tmp_path):
    """A unit planned over turns an earlier run wrote in other units (a compaction
    moved in the scenario) keeps the rows on disk and adds only the missing turns."""
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a", turns=2))
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit(_unit("a", turns=4))  # turns 0-3, of which 0 and 1 are done
        assert writer.completed_turns() == {("a", "bm25", 0, i) for i in range(4)}
    stored = _stored(tmp_path / RESULTS_FILE)
    assert [r["turn_id"] for r in stored] == ["t0", "t1", "t2", "t3"]
    assert [(r["unit_start"], r["unit_size"]) for r in stored[2:]] == [(2, 2), (2, 2)]
    with ResultsWriter(tmp_path) as writer:  # and the folder reads as complete
        assert len(writer.completed_turns()) == 4


def test_a_cost_that_is_not_a_number_reads_back_as_unknown_and_summarizes(tmp_path):
    """JSON has no NaN: a plugin's NaN cost or infinite latency is stored as null and
    reads back as NaN (unknown), so totals stay numbers and the summary still writes."""
    import math

    from memeval.log import ResultsWriter, TurnResult, read_results, write_json
    from memeval.scoring.summary import summarize
    from memeval.usage import Usage

    row = TurnResult(scenario="s", scenario_path="p", turn_id="t", turn_index=0, selector="x",
                     repeat=0, category="c", why="", query="q", relevant=(), acceptable=(),
                     selected=(), selector_usage=Usage(calls=1, cost_usd=math.nan,
                                                       latency_s=math.inf))
    with ResultsWriter(tmp_path) as writer:
        writer.append_unit([row])
    back = read_results(tmp_path)[0].selector_usage
    assert back.calls == 1 and math.isnan(back.cost_usd) and math.isnan(back.latency_s)
    summary = summarize(read_results(tmp_path), run_dir=tmp_path)
    write_json(tmp_path / "summary.json", summary)
    assert json.loads((tmp_path / "summary.json").read_text())["usage"]["selectors"]["x"][
        "cost_usd"] is None


def test_whole_file_writes_fsync_the_file_and_the_folder(tmp_path, monkeypatch):
    """A power loss after `os.replace` must not leave an empty summary.json: the new
    file's data and the folder's new entry both reach the disk."""
    import os
    import stat

    from memeval.log import write_json

    synced: list[str] = []
    real = os.fsync

    def fsync(fd):
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_json(tmp_path / "summary.json", {"a": 1})
    assert synced == ["file", "folder"]
    assert json.loads((tmp_path / "summary.json").read_text()) == {"a": 1}
