"""Conformance against real Claude Code output on hostile memdirs (tests/golden/*.tar.gz).

Each tarball holds a memdir, `case.json` (clock and mtimes) and `expected.json` (what
Claude Code 2.1.88 on Node returned). Prose the system shows the model is ours by
default; to compare byte for byte, the production wording is lifted from
`expected.json` at test time and passed in as the replaceable template.
"""

from __future__ import annotations

import json
import math
import os
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest

from memeval.memdir import (
    format_memory_manifest,
    read_memory_for_surfacing,
    scan_memory_files,
    truncate_entrypoint_content,
)

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name.removesuffix(".tar.gz") for p in GOLDEN.glob("*.tar.gz"))
STALE = re.compile(r"^This memory is (\d+) days old\. (.*)\n\nMemory: (.*):$", re.S)


def _extract(name: str, dest: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    with tarfile.open(GOLDEN / f"{name}.tar.gz") as tar:
        tar.extractall(dest, filter="tar")
    root = dest / name
    case = json.loads((root / "case.json").read_text(encoding="utf-8"))
    memdir = root / "memdir"
    for entry in case["entries"]:
        p = memdir / entry["path"]
        if "mtimeMs" in entry and (p.exists() or p.is_symlink()):
            ns = int(entry["mtimeMs"]) * 1_000_000
            os.utime(p, ns=(ns, ns), follow_symlinks=False)
    expected = json.loads((root / "expected.json").read_text(encoding="utf-8"))
    return memdir, case, expected


@pytest.fixture(scope="module", params=CASES)
def golden(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    memdir, case, expected = _extract(request.param, tmp_path_factory.mktemp(request.param))
    return str(memdir), case, expected


def _sub(value: Any, memdir: str) -> Any:
    if isinstance(value, str):
        return value.replace("<MEMDIR>", memdir)
    return value


def _json_value(value: Any) -> Any:
    """Our raw YAML value as JSON.stringify would have written it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes):
        return {"type": "Buffer", "data": list(value)}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def test_golden_cases_are_bundled() -> None:
    assert len(CASES) >= 4


def test_scan_headers_match(golden) -> None:
    memdir, _, expected = golden
    got = [
        {
            "filename": h.filename,
            "filePath": h.file_path,
            "mtimeMs": h.mtime_ms,
            "description": _json_value(h.raw_description),
            "type": None if h.type is None else h.type.value,
        }
        for h in scan_memory_files(memdir)
    ]
    want = [{k: _sub(v, memdir) for k, v in h.items()} for h in expected["scan"]["headers"]]
    assert got == want


def test_manifest_matches(golden) -> None:
    memdir, _, expected = golden
    manifest = format_memory_manifest(scan_memory_files(memdir))
    assert manifest == _sub(expected["scan"]["manifest"], memdir)


def test_surfacing_matches(golden) -> None:
    memdir, _, expected = golden
    now = expected["nowMs"]
    headers = scan_memory_files(memdir)
    assert len(headers) == len(expected["surface"])
    for h, want in zip(headers, expected["surface"], strict=True):
        got = read_memory_for_surfacing(h.file_path, h.mtime_ms, now_ms=now)
        assert got.path == _sub(want["path"], memdir)
        assert got.content == _sub(want["content"], memdir), h.filename
        assert got.mtime_ms == want["mtimeMs"]
        assert got.line_limit == want["limit"]
        assert got.truncated == (want["limit"] is not None)
        want_header = _sub(want["header"], memdir)
        stale = STALE.match(want_header)
        if stale is None:
            assert got.header == want_header
            continue
        # Our own wording by default, with the system's machine parts...
        assert got.header.startswith(f"This memory is {stale.group(1)} days old. ")
        assert got.header.endswith(f"\n\nMemory: {got.path}:")
        # ...and the production wording reproduced exactly when a user supplies it.
        template = "This memory is {{ days }} days old. " + stale.group(2)
        again = read_memory_for_surfacing(
            h.file_path, h.mtime_ms, now_ms=now, staleness_template=template
        )
        assert again.header == want_header


def test_entrypoint_matches(golden) -> None:
    memdir, _, expected = golden
    want = expected["entrypoint"]
    index = Path(memdir) / "MEMORY.md"
    if want is None:
        assert not index.exists()
        return
    raw = index.read_bytes().decode("utf-8", "replace")
    got = truncate_entrypoint_content(raw)
    assert (got.line_count, got.byte_count) == (want["lineCount"], want["byteCount"])
    assert got.was_line_truncated == want["wasLineTruncated"]
    assert got.was_byte_truncated == want["wasByteTruncated"]
    content = want["content"]
    warned = re.search(r"\n\n> WARNING: MEMORY\.md is (.*?)\. (.*)$", content, re.S)
    if warned is None:
        assert got.content == content
        return
    head = content[: warned.start()]
    assert got.content.startswith(head + f"\n\n> WARNING: MEMORY.md is {warned.group(1)}. ")
    template = "\n\n> WARNING: {{ name }} is {{ reason }}. " + warned.group(2)
    assert truncate_entrypoint_content(raw, warning_template=template).content == content
