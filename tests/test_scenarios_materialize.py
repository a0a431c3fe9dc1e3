"""Materialize: files land where their scope says, with the exact mtimes stated."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memeval.errors import MemevalError
from memeval.memdir import scan_memory_files
from memeval.scenarios import loads, materialize, remove_written
from memeval.scenarios._write import mtime_ns

SCENARIO = """\
id: mat
now: 2026-11-30T12:00:00Z
project_root: /home/dev/my.proj
memdirs:
  project:
    files:
      testing.md: {mtime_ms: 1764504000123.456, content: "---\\ndescription: tests\\n---\\n"}
      notes/db.md: {age_days: 2.5, content: "---\\r\\ndescription: db\\r\\n---\\r\\n"}
      MEMORY.md: {age_days: 0, content: "- [Testing](testing.md)\\n"}
      bom.md: {mtime: 2026-01-02T09:00:00.250Z, content: "\\ufeff---\\ndescription: bom\\n---\\n"}
agents:
  reviewer:
    scope: user
    memdir:
      files:
        style.md: {age_days: 1, content: "---\\ndescription: style\\n---\\n"}
  "plugin:tester":
    scope: project
    memdir:
      files:
        t.md: {age_days: 1, content: x}
  scratch:
    scope: local
    memdir:
      files:
        s.md: {age_days: 1, content: y}
  plain:
    scope: none
turns:
  - {id: t1, query: how do I test, category: direct, relevant: [testing.md]}
"""


@pytest.fixture()
def scenario(tmp_path: Path):
    return loads(SCENARIO, tmp_path / "mat.yaml")


def test_layout_follows_scopes(scenario, tmp_path: Path) -> None:
    out = materialize(scenario, tmp_path / "run")
    base = tmp_path / "run" / "memory-base"
    cwd = tmp_path / "run" / "project"
    assert out.memory_base == base and out.cwd == cwd and cwd.is_dir()
    assert out.project_dir == base / "projects" / "-home-dev-my-proj" / "memory"
    assert out.agent_dirs == {
        "reviewer": base / "agent-memory" / "reviewer",
        "plugin:tester": cwd / ".claude" / "agent-memory" / "plugin-tester",
        "scratch": cwd / ".claude" / "agent-memory-local" / "scratch",
    }
    written = sorted(p.relative_to(tmp_path / "run").as_posix()
                     for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert written == [
        "memory-base/agent-memory/reviewer/style.md",
        "memory-base/projects/-home-dev-my-proj/memory/MEMORY.md",
        "memory-base/projects/-home-dev-my-proj/memory/bom.md",
        "memory-base/projects/-home-dev-my-proj/memory/notes/db.md",
        "memory-base/projects/-home-dev-my-proj/memory/testing.md",
        "project/.claude/agent-memory-local/scratch/s.md",
        "project/.claude/agent-memory/plugin-tester/t.md",
    ]


def test_removing_what_was_written_keeps_only_what_else_is_there(scenario,
                                                                 tmp_path: Path) -> None:
    """What `materialize` wrote goes, with the folders it leaves empty; a file something
    else wrote stays, and so do the folders that hold it."""
    run = tmp_path / "run"
    out = materialize(scenario, run)
    stray = out.project_dir / "notes" / "left-by-a-tool.txt"
    stray.write_text("x")
    remove_written(out)
    left = sorted(p.relative_to(run).as_posix() for p in run.rglob("*"))
    assert left == [
        "memory-base", "memory-base/projects", "memory-base/projects/-home-dev-my-proj",
        "memory-base/projects/-home-dev-my-proj/memory",
        "memory-base/projects/-home-dev-my-proj/memory/notes",
        "memory-base/projects/-home-dev-my-proj/memory/notes/left-by-a-tool.txt",
    ]
    stray.unlink()
    remove_written(out)  # nothing of its own is left to remove; the folders stay
    assert (run / "memory-base").is_dir() and run.is_dir()


def test_bytes_are_written_as_stated(scenario, tmp_path: Path) -> None:
    out = materialize(scenario, tmp_path / "run")
    assert (out.project_dir / "notes" / "db.md").read_bytes() == \
        b"---\r\ndescription: db\r\n---\r\n"
    assert (out.project_dir / "bom.md").read_bytes().startswith(b"\xef\xbb\xbf---")


def test_mtimes_are_exact(scenario, tmp_path: Path) -> None:
    out = materialize(scenario, tmp_path / "run")
    now_ms = datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp() * 1000
    expected = {
        "testing.md": 1764504000123.456,
        "notes/db.md": now_ms - 2.5 * 86_400_000,
        "MEMORY.md": now_ms,
        "bom.md": datetime(2026, 1, 2, 9, 0, 0, 250000, tzinfo=UTC).timestamp() * 1000,
        "@reviewer/style.md": now_ms - 86_400_000,
    }
    for key, ms in expected.items():
        stat = os.stat(out.path_for_key(key))
        assert stat.st_mtime_ns == mtime_ns(ms), key
        # Node's mtimeMs, as the scanner computes it, gives back the stated value
        node_ms = (stat.st_mtime_ns // 10**9) * 1000 + (stat.st_mtime_ns % 10**9) / 1e6
        assert node_ms == pytest.approx(ms, abs=1e-6), key
    headers = {h.filename: h.mtime_ms for h in scan_memory_files(out.project_dir)}
    assert headers == {k: pytest.approx(v, abs=1e-6) for k, v in expected.items()
                       if not k.startswith("@") and k != "MEMORY.md"}


def test_mtime_ns_is_exact_for_present_day_times() -> None:
    assert mtime_ns(1764504000123.5) == 1764504000123500000
    assert mtime_ns(1764504000123.0) == 1764504000123000000
    assert mtime_ns(0.001) == 1000


def test_keys_and_paths_round_trip(scenario, tmp_path: Path) -> None:
    out = materialize(scenario, tmp_path / "run")
    for key, path in out.files.items():
        assert path.is_file()
        assert out.path_for_key(key) == path
        assert out.key_for_path(path) == key
        assert out.key_for_path(str(path)) == key
    assert "@plugin:tester/t.md" in out.files
    assert out.key_for_path(tmp_path / "elsewhere.md") is None
    assert out.key_for_path(out.project_dir) is None
    with pytest.raises(MemevalError, match="no agent memdir 'plain'"):
        out.path_for_key("@plain/x.md")


def test_refuses_a_used_memory_base(scenario, tmp_path: Path) -> None:
    materialize(scenario, tmp_path / "run")
    with pytest.raises(MemevalError, match="already holds a memory base"):
        materialize(scenario, tmp_path / "run")


def test_empty_project_memdir_still_exists(tmp_path: Path) -> None:
    scenario = loads("id: e\nnow: 2026-11-30T00:00:00Z\nturns: [{id: a, query: hi there, "
                     "category: none}]\n", tmp_path / "e.yaml")
    out = materialize(scenario, tmp_path / "run")
    assert out.project_dir.is_dir() and out.files == {}


@pytest.mark.parametrize("by_descriptor", [True, False], ids=["descriptor", "path"])
def test_a_written_file_gets_its_exact_mtime_either_way(tmp_path, monkeypatch, by_descriptor):
    """Where `os.utime` takes no descriptor (Windows) it is set by path, after closing."""
    import memeval.scenarios._write as write

    monkeypatch.setattr(write, "_UTIME_FD", by_descriptor)
    path = tmp_path / "new" / "a.md"
    write.write_file(path, b"x" * 10_000, 1_764_000_000_123.456)
    assert path.read_bytes() == b"x" * 10_000
    assert path.stat().st_mtime_ns == write.mtime_ns(1_764_000_000_123.456)
    with pytest.raises(TypeError):
        write.write_file(tmp_path / "b.md", "text", 0.0)  # type: ignore[arg-type]
    assert not (tmp_path / "b.md").exists()
