"""Resource attacks on the scan: alias bombs, deep flow nesting, self-multiplying links.

Each runs in a child process with a time and a memory limit, so a regression is a
failed test, never a stuck machine (these hung or ate all memory before the limits
in `memdir.yaml12` and `memdir.scan` existed).
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tests.reliability._watch import run_python

LIMIT_S = 20.0

PROBE = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # 2 GB, then MemoryError
    from memeval.memdir import scan_memory_files
    from memeval.session.scan import scan_confined
    scan = scan_memory_files if sys.argv[1] == "faithful" else scan_confined
    print(",".join(sorted({h.filename.split("/")[-1] for h in scan(sys.argv[2])})))
""")


def probe(memdir: Path, compat: str) -> set[str]:
    done = run_python(PROBE.replace("sys.argv[1]", repr(compat)).replace("sys.argv[2]",
                      repr(str(memdir))), timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.strip().split(",")) - {""}


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "good.md").write_text("---\ndescription: good\n---\n")
    return folder


@pytest.mark.parametrize("compat", ["faithful", "hardened"])
def test_yaml_alias_bomb_is_bounded(memdir: Path, compat: str) -> None:
    levels = "".join(f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
                     for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    (memdir / "bomb.md").write_text(f"---\na: &a [x,x,x,x,x,x,x,x,x]\n{levels}"
                                    "description: *i\n---\n")
    assert {"good.md", "bomb.md"} <= probe(memdir, compat)


@pytest.mark.parametrize("compat", ["faithful", "hardened"])
def test_deep_flow_nesting_in_one_long_line_is_bounded(memdir: Path, compat: str) -> None:
    (memdir / "deep.md").write_text("---\ndescription: " + "[" * 200_000 + "\n---\n")
    assert {"good.md", "deep.md"} <= probe(memdir, compat)


def test_faithful_listing_with_two_self_links_is_bounded(memdir: Path) -> None:
    # Each level doubles: Node (and the faithful listing) would walk 2**40 paths.
    os.symlink(".", memdir / "a")
    os.symlink(".", memdir / "b")
    assert "good.md" in probe(memdir, "faithful")
    assert probe(memdir, "hardened") == {"good.md"}

