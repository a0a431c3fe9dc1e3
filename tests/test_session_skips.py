"""A hostile memdir's TurnRecord says what each scan skipped and why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memeval.memdir.paths import project_memory_dir
from memeval.selectors.testing import EverythingSelector
from memeval.session import Session

NOW_MS = 1_796_040_000_000.0  # 2026-12-01T12:00:00Z
GOOD = "---\ndescription: the good memory\ntype: project\n---\nbody\n"


@pytest.mark.parametrize("compat", ["faithful", "hardened"])
def test_turn_record_lists_the_scan_skips(tmp_path: Path, compat: str) -> None:
    base, repo, outside = tmp_path / "base", tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(GOOD)
    memdir = project_memory_dir(base, repo)
    memdir.mkdir(parents=True)
    (memdir / "good.md").write_text(GOOD)
    (memdir / "folder.md").mkdir()
    os.mkfifo(memdir / "pipe.md")
    os.symlink("loop.md", memdir / "loop.md")
    os.symlink(outside / "secret.md", memdir / "leak.md")

    session = Session(base, repo, selector=EverythingSelector(), now_ms=NOW_MS, compat=compat)
    record = session.turn("what do my memories say about this?")
    (search,) = record.dirs
    got = {(s.path, s.reason) for s in search.skipped}
    expected = {("folder.md", "not-a-file"), ("pipe.md", "not-a-file"),
                ("loop.md", "unreadable")}
    if compat == "hardened":
        expected.add(("leak.md", "outside-memdir"))
    assert got == expected
    surfaced = {s.filename for s in record.surfaced}
    assert surfaced == ({"good.md"} if compat == "hardened" else {"good.md", "leak.md"})

    # The record row as results.jsonl stores it carries the same list.
    row = json.loads(json.dumps(record.to_dict()))
    (dir_row,) = row["dirs"]
    assert {(s["path"], s["reason"]) for s in dir_row["skipped"]} == expected
    assert all(s["detail"] for s in dir_row["skipped"])


def test_clean_memdir_records_no_skips(tmp_path: Path) -> None:
    base, repo = tmp_path / "base", tmp_path / "repo"
    repo.mkdir()
    memdir = project_memory_dir(base, repo)
    memdir.mkdir(parents=True)
    (memdir / "good.md").write_text(GOOD)
    record = Session(base, repo, selector=EverythingSelector(), now_ms=NOW_MS).turn(
        "what do my memories say about this?")
    assert [d.skipped for d in record.dirs] == [()]
    assert record.to_dict()["dirs"][0]["skipped"] == []
