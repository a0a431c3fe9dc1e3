"""Scenario inputs that would crash a session are refused at load, with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.scenarios import load_many

BASE = """\
id: odd
now: 2026-11-30T12:00:00Z
{default_age}mode: recall
project_root: /home/dev/odd
memdirs:
  project:
    files:
{files}
{agents}turns:
  - id: t1
    query: how?
    category: none
    why: x
    relevant: []
"""
GOOD_FILE = '      a.md:\n        content: "x"\n'
AGENT = ('agents:\n  "{name}":\n    scope: user\n    memdir:\n      files:\n'
         '        z.md:\n          content: "x"\n')


@pytest.mark.parametrize(("files", "agents", "line", "fragment"), [
    ('      "a\\0b.md":\n        content: "x"\n', "", 8, "must not contain a NUL byte"),
    ("      " + "x" * 300 + '.md:\n        content: "x"\n', "", 8, "over 255 bytes"),
    ('      a.md:\n        content: "x"\n        age_days: 1e300\n', "", 10,
     "before any file time"),
    (GOOD_FILE, AGENT.format(name=".."), 12, "not '.' or '..'"),
    (GOOD_FILE, AGENT.format(name="a\\0b"), 12, "no '/', spaces or NUL"),
    ('      a.md:\n        content: "x"\n        age_days: ' + "9" * 400 + "\n", "", 10,
     "before any file time"),
    ('      a.md:\n        content: "x"\n        mtime_ms: 1e300\n', "", 10,
     "give at most 253402300799999 (9999-12-31)"),
    ('      a.md:\n        content: "x"\n        mtime_ms: .inf\n', "", 10,
     "must be a number, got float inf"),
    ("default_age_days: 1e300", "", 3, "before any file time"),
], ids=["nul-in-name", "long-name", "absurd-age", "agent-dotdot", "nul-in-agent",
        "400-digit-age", "absurd-mtime-ms", "infinite-mtime-ms", "absurd-default-age"])
def test_each_input_is_one_located_error(tmp_path: Path, files: str, agents: str, line: int,
                                         fragment: str) -> None:
    path = tmp_path / "odd.yaml"
    default_age = ""
    if files.startswith("default_age_days"):  # a top-level key, not a file
        default_age, files = files + "\n", GOOD_FILE
    path.write_text(BASE.format(files=files, agents=agents, default_age=default_age))
    loaded = load_many([str(path)])
    assert not loaded.scenarios
    (error,) = loaded.errors
    text = str(error)
    assert f"{path}:{line}:" in text and fragment in text, text
    assert "\0" not in text  # shown escaped, never raw
