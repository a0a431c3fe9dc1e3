"""Scanning a memdir into headers and the manifest (SPEC §2.3-2.4).

Listing orders asserted here were checked against Node 20's recursive `readdir`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval.memdir import (
    FRONTMATTER_MAX_LINES,
    MAX_MEMORY_FILES,
    MemoryHeader,
    MemoryType,
    format_memory_manifest,
    iso_timestamp,
    scan_memory_files,
)

T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z


def write(root: Path, rel: str, text: str | bytes, mtime_ms: int = T0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return path


def fm(description: str, type_: str = "user") -> str:
    return f"---\ndescription: {description}\ntype: {type_}\n---\nbody\n"


def names(root: Path) -> list[str]:
    return [h.filename for h in scan_memory_files(root)]


def test_memory_md_is_never_a_candidate_but_memory_md_lowercase_is(tmp_path: Path) -> None:
    write(tmp_path, "MEMORY.md", "- [a](a.md)\n")
    write(tmp_path, "deep/er/MEMORY.md", fm("index at depth"))
    write(tmp_path, "memory.md", fm("lowercase"))
    write(tmp_path, "deep/er/topic.md", fm("nested"))
    assert sorted(names(tmp_path)) == ["deep/er/topic.md", "memory.md"]


def test_only_md_suffix_counts(tmp_path: Path) -> None:
    for rel in ("a.MD", "b.md.txt", "c.markdown", "notes", ".hidden.md"):
        write(tmp_path, rel, fm("x"))
    assert names(tmp_path) == [".hidden.md"]


def test_ties_keep_nodes_listing_order(tmp_path: Path) -> None:
    for rel in ("a.md", "B.md", "_u.md", "é.md", "memory.md", "sub/z.md", "top/y.md"):
        write(tmp_path, rel, fm(rel))
    # Each folder in byte order; sub-folders afterwards, the last one found first.
    assert names(tmp_path) == ["B.md", "_u.md", "a.md", "memory.md", "é.md", "top/y.md", "sub/z.md"]


def test_newest_first_then_cap_at_200(tmp_path: Path) -> None:
    for i in range(MAX_MEMORY_FILES + 25):
        write(tmp_path, f"f{i:03d}.md", fm(str(i)), mtime_ms=T0 + i * 1000)
    headers = scan_memory_files(tmp_path)
    assert len(headers) == MAX_MEMORY_FILES
    assert headers[0].filename == "f224.md"
    assert headers[-1].filename == "f025.md"
    assert [h.mtime_ms for h in headers] == sorted((h.mtime_ms for h in headers), reverse=True)


def test_folder_named_like_a_memory_is_dropped_but_searched(tmp_path: Path) -> None:
    (tmp_path / "x.md").mkdir()
    write(tmp_path, "x.md/inner.md", fm("inside"))
    assert names(tmp_path) == ["x.md/inner.md"]


def test_symlinks_folders_are_followed_and_broken_links_dropped(tmp_path: Path) -> None:
    write(tmp_path, "top/y.md", fm("y"))
    (tmp_path / "linked").symlink_to("top")
    (tmp_path / "broken.md").symlink_to("gone.md")
    (tmp_path / "alias.md").symlink_to("top/y.md")
    assert names(tmp_path) == ["alias.md", "top/y.md", "linked/y.md"]


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    write(tmp_path, "a.md", fm("a"))
    (tmp_path / "self").symlink_to(".")
    got = names(tmp_path)
    # Node descends until the kernel refuses the path (ELOOP), as we do.
    assert got[0] == "a.md"
    assert "self/a.md" in got and "self/self/a.md" in got
    assert all(n.endswith("a.md") for n in got)


def test_undecodable_file_names_are_dropped_like_node_does(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", fm("ok"))
    bad = os.path.join(os.fsencode(tmp_path), b"bad\xff.md")
    with open(bad, "wb") as fh:
        fh.write(fm("bad").encode())
    assert names(tmp_path) == ["ok.md"]


def test_missing_memdir_gives_nothing(tmp_path: Path) -> None:
    assert scan_memory_files(tmp_path / "absent") == []
    write(tmp_path, "file", "x")
    assert scan_memory_files(tmp_path / "file") == []


def test_bad_yaml_in_one_file_does_not_break_the_others(tmp_path: Path) -> None:
    write(tmp_path, "bad.md", "---\ndescription: [unclosed\n  bad: indent\n: :\n---\n", T0 + 2)
    write(tmp_path, "dup.md", "---\ndescription: a\ndescription: b\n---\n", T0 + 1)
    write(tmp_path, "good.md", fm("fine", "feedback"), T0)
    by_name = {h.filename: h for h in scan_memory_files(tmp_path)}
    assert by_name["good.md"].description == "fine"
    assert by_name["good.md"].type is MemoryType.FEEDBACK
    assert by_name["dup.md"].description is None
    assert list(by_name) == ["bad.md", "dup.md", "good.md"]


def test_bom_and_crlf_are_normalized_before_parsing(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "\ufeff---\r\ndescription: crlf\r\ntype: project\r\n---\r\n")
    write(tmp_path, "b.md", "\ufeff\ufeff---\ndescription: two boms\n---\n")
    by_name = {h.filename: h for h in scan_memory_files(tmp_path)}
    assert (by_name["a.md"].description, by_name["a.md"].type) == ("crlf", MemoryType.PROJECT)
    assert by_name["b.md"].description is None  # only one BOM is stripped


@pytest.mark.parametrize(("close_line", "found"), [(29, True), (30, True), (31, False)])
def test_frontmatter_must_close_within_30_lines(
    tmp_path: Path, close_line: int, found: bool
) -> None:
    lines = ["---", "description: late"] + [f"k{i}: v" for i in range(close_line - 3)] + ["---"]
    assert len(lines) == close_line
    write(tmp_path, "a.md", "\n".join(lines) + "\nbody\n")
    assert FRONTMATTER_MAX_LINES == 30
    assert (scan_memory_files(tmp_path)[0].description == "late") is found


def test_mtime_is_nodes_float_not_nanoseconds_over_a_million(tmp_path: Path) -> None:
    ns = 1_787_189_118_172_999_860  # ns / 1e6 would round this up to ...173.0
    path = write(tmp_path, "a.md", fm("x"))
    os.utime(path, ns=(ns, ns))
    header = scan_memory_files(tmp_path)[0]
    sec, nsec = divmod(os.stat(path).st_mtime_ns, 10**9)
    assert header.mtime_ms == sec * 1000 + nsec / 1e6 == 1787189118172.9998
    assert iso_timestamp(header.mtime_ms) == "2026-08-20T01:25:18.172Z"  # truncated, not rounded


def test_file_paths_are_absolute_and_filenames_relative(tmp_path: Path) -> None:
    write(tmp_path, "a/b.md", fm("x"))
    header = scan_memory_files(tmp_path)[0]
    assert header.filename == "a/b.md"
    assert header.file_path == str(tmp_path / "a" / "b.md")


def test_manifest_lines() -> None:
    headers = [
        MemoryHeader(
            "testing.md",
            "/m/testing.md",
            1796040000000.0,
            "run tests against a real db",
            MemoryType.FEEDBACK,
        ),
        MemoryHeader("notype.md", "/m/notype.md", 1796040000000.9, "d", None),
        MemoryHeader("nodesc.md", "/m/nodesc.md", 1796040000000.0, None, MemoryType.USER),
        MemoryHeader("bare.md", "/m/bare.md", 1796040000000.0, None, None),
        MemoryHeader("emptylist.md", "/m/e.md", 1796040000000.0, "", None),
    ]
    assert format_memory_manifest(headers) == "\n".join(
        [
            "- [feedback] testing.md (2026-11-30T12:00:00.000Z): run tests against a real db",
            "- notype.md (2026-11-30T12:00:00.000Z): d",
            "- [user] nodesc.md (2026-11-30T12:00:00.000Z)",
            "- bare.md (2026-11-30T12:00:00.000Z)",
            "- emptylist.md (2026-11-30T12:00:00.000Z): ",
        ]
    )
    assert format_memory_manifest([]) == ""


def test_non_string_descriptions_in_the_manifest(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ndescription: [one, two, [three]]\n---\n", T0 + 3)
    write(tmp_path, "b.md", "---\ndescription: {a: 1}\n---\n", T0 + 2)
    write(tmp_path, "c.md", "---\ndescription: 0\n---\n", T0 + 1)
    write(tmp_path, "d.md", "---\ndescription: []\n---\n", T0)
    lines = format_memory_manifest(scan_memory_files(tmp_path)).split("\n")
    assert [line.split(")", 1)[1] for line in lines] == [
        ": one,two,three",
        ": [object Object]",
        "",
        ": ",
    ]


def test_a_pipe_named_like_a_memory_is_dropped_instead_of_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    write(tmp_path, "a.md", fm("a"))
    assert names(tmp_path) == ["a.md"]


