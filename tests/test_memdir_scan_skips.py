"""What the scan leaves out is reported with a reason, without changing what it returns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval.memdir import MAX_MEMORY_FILES, scan_memory_files
from memeval.memdir import scan as scan_module
from memeval.memdir.scan import SCAN_SKIP_REASONS, SkippedFile, headers_of, iso_timestamp
from memeval.session.scan import scan_confined, scan_dir

T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z
GOOD = "---\ndescription: good\ntype: user\n---\nbody\n"


def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "good.md").write_text(GOOD)
    return root


def scan_both(root: Path) -> dict[str, tuple[list[str], list[SkippedFile]]]:
    """Both scans with skips recorded; each must return what it returns without."""
    out = {}
    for name, scan in (("faithful", scan_memory_files), ("hardened", scan_confined)):
        skipped: list[SkippedFile] = []
        headers = scan(root, skipped=skipped)
        assert headers == scan(root), "recording skips must not change the result"
        assert all(s.reason in SCAN_SKIP_REASONS for s in skipped)
        out[name] = ([h.filename for h in headers], skipped)
    return out


def reasons(skipped: list[SkippedFile]) -> list[tuple[str, str]]:
    return [(s.path, s.reason) for s in skipped]


def test_clean_memdir_skips_nothing(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    (root / "notes.txt").write_text("not a candidate, so not a skip")
    (root / "MEMORY.md").write_text("the index is not a candidate either")
    for names, skipped in scan_both(root).values():
        assert names == ["good.md"] and skipped == []


def test_folder_named_md_is_not_a_file(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inner.md").write_text(GOOD)
    for names, skipped in scan_both(root).values():
        assert sorted(names) == ["folder.md/inner.md", "good.md"]
        assert reasons(skipped) == [("folder.md", "not-a-file")]
        assert "directory" in skipped[0].detail


def test_fifo_is_not_a_file(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    os.mkfifo(root / "pipe.md")
    for names, skipped in scan_both(root).values():
        assert names == ["good.md"]
        assert reasons(skipped) == [("pipe.md", "not-a-file")]


def test_dangling_link_and_deleted_file_are_missing(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    os.symlink(root / "nowhere.md", root / "dangling.md")
    for names, skipped in scan_both(root).values():
        assert names == ["good.md"]
        assert reasons(skipped) == [("dangling.md", "missing")]
    # Deleted between the listing and the read: the listing still names it.
    skipped: list[SkippedFile] = []
    headers = headers_of(str(root), ["gone.md", "good.md"], skipped=skipped)
    assert [h.filename for h in headers] == ["good.md"]
    assert reasons(skipped) == [("gone.md", "missing")]


def test_link_loop_file_is_unreadable_even_for_root(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    os.symlink("loop.md", root / "loop.md")  # ELOOP on open, whoever runs it
    for names, skipped in scan_both(root).values():
        assert names == ["good.md"]
        assert reasons(skipped) == [("loop.md", "unreadable")]
        assert skipped[0].detail  # the OS error text


def test_links_out_are_reported_only_by_the_hardened_scan(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(GOOD)
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside, root / "outdir")
    result = scan_both(root)
    names, skipped = result["faithful"]
    assert sorted(names) == ["good.md", "leak.md", "outdir/secret.md"] and skipped == []
    names, skipped = result["hardened"]
    assert names == ["good.md"]
    assert reasons(skipped) == [("leak.md", "outside-memdir"), ("outdir", "outside-memdir")]
    assert str(outside.resolve()) in skipped[1].detail


def test_beyond_the_200_newest_are_reported_newest_first(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    for i in range(MAX_MEMORY_FILES + 3):
        path = root / f"m{i:03d}.md"
        path.write_text(GOOD)
        ms = T0 + i * 1000
        os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
    for names, skipped in scan_both(root).values():
        assert len(names) == MAX_MEMORY_FILES and names[0] == "m202.md"
        assert reasons(skipped) == [(f"m{i:03d}.md", "over-200-newest") for i in (2, 1, 0)]
        assert "2025-01-01T00:00:02.000Z" in skipped[0].detail


def test_listing_cap_is_reported_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = memdir(tmp_path)
    for name in ("a.md", "b.md", "c.md"):
        (root / name).write_text(GOOD)
    monkeypatch.setattr(scan_module, "MAX_LISTED_ENTRIES", 2)
    skipped: list[SkippedFile] = []
    headers = scan_memory_files(root, skipped=skipped)
    assert sorted(h.filename for h in headers) == ["a.md", "b.md"]
    assert reasons(skipped) == [("b.md", "listing-cap")]
    assert "2 entries" in skipped[0].detail


def test_unlistable_memdir_and_subfolder(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("a file, not a folder")
    for scan in (scan_memory_files, scan_confined):
        skipped: list[SkippedFile] = []
        assert scan(plain, skipped=skipped) == []
        assert reasons(skipped) == [(".", "unlistable")]
        missing: list[SkippedFile] = []
        assert scan(tmp_path / "none", skipped=missing) == [] and missing == []


def test_unlistable_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sub-folder that cannot be listed (no access, as root cannot reproduce): the
    faithful listing fails whole, as Node's does; the hardened one keeps the rest.
    Both say which folder and why."""
    root = memdir(tmp_path)
    (root / "sub").mkdir()
    (root / "sub" / "inner.md").write_text(GOOD)
    from memeval.session import scan as confined_module

    def refuse(real: object) -> object:
        def names(folder: str) -> list:
            if os.path.basename(folder) == "sub":
                raise PermissionError(13, "Permission denied", os.fsencode(folder))
            return real(folder)  # type: ignore[operator]
        return names

    monkeypatch.setattr(scan_module, "_entries", refuse(scan_module._entries))
    monkeypatch.setattr(confined_module, "_sorted_names", refuse(confined_module._sorted_names))
    result = scan_both(root)
    names, skipped = result["faithful"]
    assert names == [] and reasons(skipped) == [("sub", "unlistable")]
    assert "whole listing failed" in skipped[0].detail
    names, skipped = result["hardened"]
    assert names == ["good.md"] and reasons(skipped) == [("sub", "unlistable")]
    assert "Permission denied" in skipped[0].detail


def test_scan_dir_passes_skips_through(tmp_path: Path) -> None:
    root = memdir(tmp_path)
    (root / "folder.md").mkdir()
    for follow in (True, False):
        skipped: list[SkippedFile] = []
        assert [h.filename for h in scan_dir(root, follow_symlinks_out=follow,
                                             skipped=skipped)] == ["good.md"]
        assert reasons(skipped) == [("folder.md", "not-a-file")]
        assert skipped[0].to_dict()["reason"] == "not-a-file"


def _eager_headers_of(root: str, entries: list[str], skipped: list[SkippedFile]) -> list:
    """`headers_of` as it was before parses were deferred: every file's header built
    in listing order, then sorted; the reference the deferred scan must match."""
    from memeval.memdir.scan import is_candidate, read_header, skip_for_error

    headers = []
    for rel in entries:
        if not is_candidate(rel):
            continue
        try:
            headers.append(read_header(root, rel))
        except (OSError, ValueError) as exc:
            skipped.append(skip_for_error(rel, exc))
    headers.sort(key=lambda h: -h.mtime_ms)
    skipped.extend(SkippedFile(h.filename, "over-200-newest",
                               f"modified {iso_timestamp(h.mtime_ms)}; only the"
                               f" {MAX_MEMORY_FILES} newest are listed")
                   for h in headers[MAX_MEMORY_FILES:])
    return headers[:MAX_MEMORY_FILES]


# Frontmatter that parses fine, that is deferred, that the scan must not defer (a
# long decimal, which the parser refuses), and every value shape the header
# stringifies.
_DEFERRED_CASE_BLOCKS = [
    "name: a\ndescription: plain words\ntype: user\n",
    "description: [a, b, 'c']\ntags: {k: v}\n",
    "description: {a: [1, 2], b: {c: d}}\n",
    "description: 'it's broken'\n",
    "description: Note: retry quotes it\n",
    "description: " + "7" * 5000 + "\n",
    "description: &x [a, *x]\ntype: project\n",
    "description: !!binary aGVsbG8=\n",
    "description: " + "[" * 80 + "]" * 80 + "\n",
    "description: 0\ntype: feedback\n",
    "description: 12.50\n",
    "",
]


@pytest.mark.parametrize("files", [30, 260])
def test_deferred_parses_give_what_the_eager_scan_gave(tmp_path: Path, files: int) -> None:
    """Past the 200 newest, blocks that cannot raise are never parsed: the headers,
    their raw values and the skip list must still be the eager scan's, with files
    that do raise both among the newest and past them, and equal mtimes."""
    import random

    from memeval.memdir.scan import list_recursive

    rng = random.Random(files)
    root = tmp_path / "mem"
    for number in range(files):
        rel = f"{['', 'sub/', 'sub/deep/'][number % 3]}f{number}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        block = _DEFERRED_CASE_BLOCKS[number % len(_DEFERRED_CASE_BLOCKS)]
        path.write_text(f"---\n{block}---\nbody\n" if block or number % 2 else "no block\n",
                        encoding="utf-8")
        mtime_ns = (1_764_000_000 + rng.randrange(files // 2)) * 10**9
        os.utime(path, ns=(mtime_ns, mtime_ns))
    entries = list_recursive(str(root))
    got_skipped: list[SkippedFile] = []
    want_skipped: list[SkippedFile] = []
    got = headers_of(str(root), entries, skipped=got_skipped)
    want = _eager_headers_of(str(root), entries, want_skipped)
    assert [(h, repr(h.raw_description)) for h in got] == [
        (h, repr(h.raw_description)) for h in want]
    assert got_skipped == want_skipped
    # A decimal past Python's digit limit is YAML the parser refuses: the file stays a
    # candidate with empty frontmatter, never an unreadable file.
    huge = [h for h in want if h.filename.endswith(("f5.md", "f17.md"))]
    assert huge and all(h.description is None for h in huge)
    assert not any(s.reason == "unreadable" for s in want_skipped)
    if files > 200:
        assert sum(s.reason == "over-200-newest" for s in want_skipped) == files - 200 - sum(
            s.reason == "unreadable" for s in want_skipped)
