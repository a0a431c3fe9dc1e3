"""Properties of the memdir reference that must hold for any input (hypothesis)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.memdir import (
    MAX_ENTRYPOINT_BYTES,
    MAX_ENTRYPOINT_LINES,
    format_memory_manifest,
    parse_frontmatter,
    read_memory_for_surfacing,
    scan_memory_files,
    truncate_entrypoint_content,
    utf16_len,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOTE = "\n\n> This memory file was truncated ("

# Text rich in what breaks naive readers: multi-byte and astral characters, CR, BOM, tabs.
line_text = st.text(
    alphabet=st.sampled_from([*"ab -:#\t\r\ufeff", "é", "€", "😀", "\u2028", "\x85"]),
    max_size=120,
)
file_text = st.lists(line_text, max_size=260).map("\n".join) | st.text(max_size=6000)

segment = st.sampled_from(["a", "b", "MEMORY.md", "memory.md", "x.md", "sub", "é"])
rel_paths = st.lists(st.lists(segment, min_size=1, max_size=3).map("/".join), max_size=12)
descriptions = st.sampled_from(
    ["plain", "yes", "012", "[a, b]", "{a: 1}", "@x", "a---b", "0", "MEMORY.md index", '"q"']
)


@FAST
@given(rel_paths, st.data())
def test_scan_never_yields_memory_md_and_manifest_has_one_line_per_header(
    paths: list[str], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, rel in enumerate(paths):
            target = root / rel
            if any(p.is_file() for p in target.parents if p != root and p.is_relative_to(root)):
                continue
            if target.is_dir():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            desc = data.draw(descriptions)
            target.write_text(f"---\ndescription: {desc}\ntype: user\n---\n", encoding="utf-8")
            os.utime(target, ns=(i * 10**9, i * 10**9))
        headers = scan_memory_files(root)
        assert all(os.path.basename(h.filename) != "MEMORY.md" for h in headers)
        assert all(h.filename.endswith(".md") for h in headers)
        manifest = format_memory_manifest(headers)
        lines = manifest.split("\n") if headers else []
        assert len(lines) == len(headers)
        for header, line in zip(headers, lines, strict=True):
            tag = f"[{header.type}] " if header.type else ""
            assert line.startswith(f"- {tag}{header.filename} (")
        assert [h.mtime_ms for h in headers] == sorted((h.mtime_ms for h in headers), reverse=True)


@FAST
@given(file_text)
def test_surfaced_content_before_the_note_stays_within_the_caps(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.md"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        got = read_memory_for_surfacing(path, 0.0, now_ms=0.0)
    body, sep, _ = got.content.partition(NOTE)
    assert len(body.encode("utf-8", "surrogatepass")) <= 4096
    assert len(body.split("\n")) <= 200
    assert bool(sep) == got.truncated
    assert (got.line_limit is not None) == got.truncated
    if got.truncated:
        assert got.line_limit in ({0, 1} if body == "" else {len(body.split("\n"))})
    # What is kept is the file's start, with the BOM and CRs before newlines removed.
    normalized = text.removeprefix("\ufeff").replace("\r\n", "\n")
    assert normalized.startswith(body)


@FAST
@given(st.lists(line_text, max_size=400).map("\n".join))
def test_index_truncation_stays_within_limits(raw: str) -> None:
    got = truncate_entrypoint_content(raw)
    body, sep, warning = got.content.partition("\n\n> WARNING: MEMORY.md is ")
    truncated = got.was_line_truncated or got.was_byte_truncated
    assert bool(sep) == truncated or "\n\n> WARNING: MEMORY.md is " in raw
    if truncated:
        assert len(body.split("\n")) <= MAX_ENTRYPOINT_LINES
        assert utf16_len(body) <= MAX_ENTRYPOINT_BYTES
        reason = "lines" if got.was_line_truncated else "index entries are too long"
        assert reason in warning


@FAST
@given(st.text(max_size=300))
def test_frontmatter_parsing_never_raises(text: str) -> None:
    meta, rest = parse_frontmatter("---\n" + text + "\n---\nbody")
    assert isinstance(meta, dict)
    assert rest.endswith("body")


@FAST
@given(
    st.lists(line_text, max_size=240).map("\n".join)
    | st.binary(max_size=3000).map(lambda b: b.decode("utf-8", "replace")),
    st.sampled_from([(30, None), (200, 4096), (3, 10), (None, None)]),
    st.sampled_from([1, 2, 7, 64, 1 << 16]),
    st.booleans(),
)
def test_streaming_read_agrees_with_reading_the_whole_file(
    text: str, caps: tuple[int | None, int | None], chunk: int, raw_bytes: bool
) -> None:
    from memeval.memdir import readfile

    data = text.encode("utf-8", "surrogatepass")
    if raw_bytes:
        data = data[: len(data) // 2] + b"\xff\xe2\x82" + data[len(data) // 2 :]
    max_lines, max_bytes = caps
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "m.md")
        Path(path).write_bytes(data)
        old = readfile.CHUNK_SIZE
        readfile.CHUNK_SIZE = chunk
        try:
            got = readfile.read_file_in_range(path, max_lines, max_bytes)
        finally:
            readfile.CHUNK_SIZE = old
        raw, _ = readfile.read_text(path)
    kept, total, by_bytes = readfile.split_range(raw, max_lines, max_bytes)
    assert got.content == "\n".join(kept)
    assert got.line_count == len(kept)
    assert got.truncated_by_bytes == by_bytes
    limit = max_lines if max_lines is not None else 10**9
    # What callers decide from it: truncated = more lines than the cap, or the byte cap hit.
    assert (got.total_lines > limit or got.truncated_by_bytes) == (total > limit or by_bytes)
    assert got.total_lines <= total
