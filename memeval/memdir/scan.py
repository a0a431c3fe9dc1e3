"""Listing a memdir into headers and printing the manifest the selector sees."""

from __future__ import annotations

import os
from collections.abc import Iterable

from memeval.memdir.entrypoint import ENTRYPOINT_NAME
from memeval.memdir.frontmatter import parse_frontmatter
from memeval.memdir.jsvalue import js_iso_string, js_string, js_truthy
from memeval.memdir.readfile import node_mtime_ms, read_open_range, stat_readable
from memeval.memdir.types import MemoryHeader, parse_memory_type

MAX_MEMORY_FILES = 200  # the selector sees at most this many, newest first
FRONTMATTER_MAX_LINES = 30  # only the header is needed to describe a file
# memeval's bound on one listing: links back to an ancestor multiply the walk at every
# level (two such links give 2**40 paths), which Node would never finish.
MAX_LISTED_ENTRIES = 100_000


def list_recursive(root: str) -> list[str]:
    """Relative paths under `root` in the order Node's recursive `readdir` gives.

    Node reads each folder in byte order, appends its entries, and descends into
    folders (symlinks followed) last-found-first. A failing folder read fails it all.

    Raises:
        OSError: a folder cannot be listed.
    """
    result: list[str] = []
    # Each folder carries its path relative to `root` (listed names hold no separator,
    # so joining is `os.path.relpath` without its cost per entry).
    stack: list[tuple[str, str, list[str]]] = [(root, "", _names(root))]
    while stack:
        folder, prefix, names = stack.pop()
        for name in names:
            full = os.path.join(folder, name)
            relative = prefix + name
            result.append(relative)
            if len(result) >= MAX_LISTED_ENTRIES:
                return result  # keep what was listed: the memdir's own files come first
            if _is_dir(full):
                stack.append((full, relative + os.sep, _names(full)))
    return result


def _names(folder: str) -> list[str]:
    # Sorted as bytes (libuv's strcmp), decoded as Node decodes names.
    raw = sorted(os.listdir(os.fsencode(folder)))
    return [name.decode("utf-8", "replace") for name in raw]


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def is_candidate(relative_path: str) -> bool:
    """A `.md` file whose basename is not exactly `MEMORY.md` (case-sensitive)."""
    return relative_path.endswith(".md") and os.path.basename(relative_path) != ENTRYPOINT_NAME


def read_header(memory_dir: str, relative_path: str) -> MemoryHeader:
    """Header of one file from its first lines.

    Raises:
        OSError: the file cannot be read (the scan drops it).
    """
    file_path = os.path.normpath(os.path.join(memory_dir, relative_path))
    st = stat_readable(file_path)
    with open(file_path, "rb") as fh:
        head = fh.read(8).removeprefix(b"\xef\xbb\xbf")
        if head.startswith(b"---"):
            fh.seek(0)
            read = read_open_range(fh, st, FRONTMATTER_MAX_LINES)
            meta, _ = parse_frontmatter(read.content)
            mtime_ms = read.mtime_ms
        else:
            # No leading `---`, no frontmatter: skip reading the rest (a 200 MB line costs
            # nothing).
            meta, mtime_ms = {}, node_mtime_ms(st)
    # The system keeps `frontmatter.description || null`: falsy values are no description.
    raw = meta.get("description")
    raw = raw if js_truthy(raw) else None
    return MemoryHeader(
        filename=relative_path.replace(os.sep, "/"),
        file_path=file_path,
        mtime_ms=mtime_ms,
        description=None if raw is None else js_string(raw),
        type=parse_memory_type(meta.get("type")),
        raw_description=raw,
    )


def scan_memory_files(memory_dir: str | os.PathLike[str]) -> list[MemoryHeader]:
    """Headers of the memdir's memory files, newest first, at most 200.

    A missing or unlistable memdir gives `[]`; a file that cannot be read is left out.
    Bad YAML in one file only empties that file's frontmatter.
    """
    root = os.path.abspath(os.fspath(memory_dir))
    try:
        entries = list_recursive(root)
    except OSError:
        # The system returns nothing when the listing fails; so do we.
        return []
    return headers_of(root, entries)


def headers_of(root: str, entries: Iterable[str]) -> list[MemoryHeader]:
    """Headers of the listed candidates, newest first, at most 200; a file that cannot
    be read is left out. Shared by the faithful and the confined scan."""
    headers: list[MemoryHeader] = []
    for rel in entries:
        if not is_candidate(rel):
            continue
        try:
            headers.append(read_header(root, rel))
        except (OSError, ValueError):
            continue
    # Stable: equal mtimes keep listing order, as Array.prototype.sort does.
    headers.sort(key=lambda h: -h.mtime_ms)
    return headers[:MAX_MEMORY_FILES]


def iso_timestamp(mtime_ms: float) -> str:
    """`new Date(mtime_ms).toISOString()`: whole milliseconds (truncated), UTC, `Z`."""
    return js_iso_string(mtime_ms)


def format_manifest_line(header: MemoryHeader) -> str:
    """`- [<type>] <filename> (<iso>): <description>`, optional parts omitted."""
    tag = f"[{header.type.value}] " if header.type is not None else ""
    line = f"- {tag}{header.filename} ({iso_timestamp(header.mtime_ms)})"
    if header.description is not None:
        line += f": {header.description}"
    return line


def format_memory_manifest(headers: Iterable[MemoryHeader]) -> str:
    """One line per header, in the given order, joined by `\\n`."""
    return "\n".join(format_manifest_line(h) for h in headers)
