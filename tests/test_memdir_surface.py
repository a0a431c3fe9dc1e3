"""Reading a selected memory for the attachment, its truncation note and age header."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval.memdir import (
    MAX_MEMORY_BYTES,
    MAX_MEMORY_LINES,
    MAX_SESSION_BYTES,
    MemoryReadError,
    memory_age,
    memory_age_days,
    memory_freshness_text,
    memory_header,
    read_memory_for_surfacing,
)

DAY = 86_400_000
NOW = 1_796_040_000_000


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "m.md"
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def note(kind: str, path: str) -> str:
    return (
        f"\n\n> This memory file was truncated ({kind}). "
        f"Use the Read tool to view the complete file at: {path}"
    )


def test_constants() -> None:
    assert (MAX_MEMORY_LINES, MAX_MEMORY_BYTES, MAX_SESSION_BYTES) == (200, 4096, 61440)


@pytest.mark.parametrize(
    ("lines", "final_newline", "truncated"),
    [
        (199, True, False),
        (199, False, False),
        (200, False, False),
        (200, True, True),
        (201, False, True),
        (201, True, True),
        (250, True, True),
    ],
)
def test_line_cap_counts_the_fragment_after_the_last_newline(
    tmp_path: Path, lines: int, final_newline: bool, truncated: bool
) -> None:
    body = "\n".join(f"line {i}" for i in range(lines)) + ("\n" if final_newline else "")
    path = write(tmp_path, body)
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    kept = "\n".join(f"line {i}" for i in range(min(lines, 200)))
    if truncated:
        assert got.content == kept + note("first 200 lines", path)
        assert got.line_limit == 200
    else:
        # Untruncated content keeps the file as is (a final newline reads as an empty line).
        assert got.content == body
        assert got.line_limit is None
    assert got.truncated is truncated


def test_exactly_4096_bytes_fit_and_4097_do_not(tmp_path: Path) -> None:
    path = write(tmp_path, "a" * 4096)
    assert read_memory_for_surfacing(path, NOW, now_ms=NOW).truncated is False
    path = write(tmp_path, "a" * 4097)
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == note("4096 byte limit", path)
    assert got.line_limit == 0


def test_joining_newlines_count_one_byte_each(tmp_path: Path) -> None:
    path = write(tmp_path, "a" * 2047 + "\n" + "b" * 2048)  # 2047 + 1 + 2048 = 4096
    assert not read_memory_for_surfacing(path, NOW, now_ms=NOW).truncated
    path = write(tmp_path, "a" * 2048 + "\n" + "b" * 2048)
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == "a" * 2048 + note("4096 byte limit", path)
    assert got.line_limit == 1


def test_multibyte_line_crossing_the_edge_is_dropped_whole(tmp_path: Path) -> None:
    path = write(tmp_path, "a" * 4000 + "\n" + "é" * 47 + "\n" + "more\n")  # 4000+1+94 = 4095
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == "a" * 4000 + "\n" + "é" * 47 + note("4096 byte limit", path)
    path = write(tmp_path, "a" * 4000 + "\n" + "é" * 48)  # 4000+1+96 = 4097
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == "a" * 4000 + note("4096 byte limit", path)


def test_first_line_over_the_cap_gives_only_the_note(tmp_path: Path) -> None:
    path = write(tmp_path, "x" * 5000 + "\nsecond\n")
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == note("4096 byte limit", path)
    assert (got.truncated, got.line_limit) == (True, 0)


def test_byte_reason_wins_when_both_caps_apply(tmp_path: Path) -> None:
    path = write(tmp_path, ("y" * 100 + "\n") * 300)
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content.endswith(note("4096 byte limit", path))
    assert got.line_limit == 40  # 40 * 100 + 39 = 4039; one more line would be 4140


def test_bom_and_crlf_are_stripped_before_counting(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff" + "---\r\ndescription: x\r\n---\r\n" + "z" * 4070)
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == "---\ndescription: x\n---\n" + "z" * 4070  # 23 + 4070 = 4093
    assert not got.truncated


def test_frontmatter_stays_in_the_content(tmp_path: Path) -> None:
    path = write(tmp_path, "---\ndescription: d\n---\nbody")
    assert (
        read_memory_for_surfacing(path, NOW, now_ms=NOW).content == "---\ndescription: d\n---\nbody"
    )


def test_unreadable_file_raises_a_named_error(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(MemoryReadError, match=r"dir\.md"):
        read_memory_for_surfacing(tmp_path / "dir.md", NOW)
    with pytest.raises(MemoryReadError):
        read_memory_for_surfacing(tmp_path / "missing.md", NOW)


def test_mtime_defaults_to_the_files(tmp_path: Path) -> None:
    path = write(tmp_path, "x")
    os.utime(path, ns=(NOW * 10**6 - 3 * DAY * 10**6,) * 2)
    got = read_memory_for_surfacing(path, now_ms=NOW)
    assert got.mtime_ms == NOW - 3 * DAY
    assert got.header.startswith("This memory is 3 days old. ")


@pytest.mark.parametrize(
    ("age_ms", "days", "label"),
    [
        (-5 * DAY, 0, "today"),
        (0, 0, "today"),
        (DAY - 1, 0, "today"),
        (DAY, 1, "yesterday"),
        (2 * DAY - 1, 1, "yesterday"),
        (2 * DAY, 2, "2 days ago"),
        (400 * DAY, 400, "400 days ago"),
    ],
)
def test_age(age_ms: int, days: int, label: str) -> None:
    assert memory_age_days(NOW - age_ms, NOW) == days
    assert memory_age(NOW - age_ms, NOW) == label


def test_headers() -> None:
    assert memory_header("/m/a.md", NOW, NOW) == "Memory (saved today): /m/a.md:"
    assert memory_header("/m/a.md", NOW - DAY, NOW) == "Memory (saved yesterday): /m/a.md:"
    stale = memory_header("/m/a.md", NOW - 9 * DAY, NOW)
    text = memory_freshness_text(NOW - 9 * DAY, NOW)
    assert text.startswith("This memory is 9 days old. ")
    assert stale == f"{text}\n\nMemory: /m/a.md:"
    assert memory_freshness_text(NOW - DAY, NOW) == ""


def test_staleness_wording_is_replaceable(tmp_path: Path) -> None:
    template = "This memory is {{ days }} days old. Check it."
    assert memory_header("/a", NOW - 2 * DAY, NOW, template=template) == (
        "This memory is 2 days old. Check it.\n\nMemory: /a:"
    )
    path = write(tmp_path, "x")
    got = read_memory_for_surfacing(path, NOW - 5 * DAY, now_ms=NOW, staleness_template=template)
    assert got.header == f"This memory is 5 days old. Check it.\n\nMemory: {path}:"


def test_a_huge_file_surfaces_its_start_only(tmp_path: Path) -> None:
    path = tmp_path / "huge.md"
    with path.open("wb") as fh:
        fh.write(b"---\ndescription: big\n---\n" + b"line\n" * 300)
        fh.truncate(200 * 1024 * 1024)  # sparse: costs no disk
    got = read_memory_for_surfacing(path, NOW, now_ms=NOW)
    assert got.content == "---\ndescription: big\n---\n" + "\n".join(["line"] * 197) + note(
        "first 200 lines", str(path)
    )
    assert got.line_limit == 200


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs a character device")
def test_a_memory_that_is_a_device_is_never_read_for_surfacing(tmp_path: Path) -> None:
    """A terminal named like a memory would block a blocking read for ever (issue 37):
    only regular files are read; a device is a memory that cannot be read."""
    device = tmp_path / "tty.md"
    device.symlink_to("/dev/null")
    with pytest.raises(MemoryReadError, match="not a regular file"):
        read_memory_for_surfacing(device, now_ms=0.0)
