"""Listing a memdir into headers and printing the manifest the selector sees."""

from __future__ import annotations

import errno
import os
import re
import stat as statmod
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memeval.memdir.entrypoint import ENTRYPOINT_NAME
from memeval.memdir.frontmatter import frontmatter_block, load_mapping
from memeval.memdir.jsvalue import js_iso_string, js_string, js_truthy
from memeval.memdir.readfile import node_mtime_ms, read_open_range, stat_readable
from memeval.memdir.types import MemoryHeader, MemoryType, parse_memory_type

MAX_MEMORY_FILES = 200  # the selector sees at most this many, newest first
FRONTMATTER_MAX_LINES = 30  # only the header is needed to describe a file
# memeval's bound on one listing: links back to an ancestor multiply the walk at every
# level (two such links give 2**40 paths), which Node would never finish.
MAX_LISTED_ENTRIES = 100_000

# Why the scan left a listed entry out (`SkippedFile.reason`).
SCAN_SKIP_REASONS: tuple[str, ...] = (
    "not-a-file",  # a folder named `x.md`, a FIFO or a socket
    "missing",  # deleted mid-scan, or a link to nothing
    "unreadable",  # any other failed stat, open or read (no access, I/O error)
    "outside-memdir",  # hardened: its real path leaves the memdir
    "unlistable",  # a folder (or the memdir itself) that could not be listed
    "listing-cap",  # the listing stopped at MAX_LISTED_ENTRIES; later entries unseen
    "over-200-newest",  # read fine, but older than the 200 newest
)


@dataclass(frozen=True)
class SkippedFile:
    """An entry the scan listed (or could not list) but returned no header for, and why.

    Args:
        path: the entry relative to the memdir, `/`-separated as filenames are
            (`.` for the memdir itself).
        reason: one of `SCAN_SKIP_REASONS`.
        detail: the OS error text or the limit that applied.
    """

    path: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason, "detail": self.detail}


def _rel_name(relative_path: str) -> str:
    return relative_path.replace(os.sep, "/") or "."


def skip_for_error(relative_path: str, exc: BaseException) -> SkippedFile:
    """The skip record for an entry whose stat, open or read raised `exc`."""
    if isinstance(exc, IsADirectoryError) or (
        isinstance(exc, OSError) and exc.errno == errno.ENXIO
    ):
        reason = "not-a-file"  # stat_readable refuses folders (EISDIR) and pipes (ENXIO)
    elif isinstance(exc, FileNotFoundError):
        reason = "missing"
    else:
        reason = "unreadable"
    return SkippedFile(_rel_name(relative_path), reason, str(exc))


def list_recursive(root: str, *, skipped: list[SkippedFile] | None = None) -> list[str]:
    """Relative paths under `root` in the order Node's recursive `readdir` gives.

    Node reads each folder in byte order, appends its entries, and descends into
    folders (symlinks followed) last-found-first. A failing folder read fails it all.

    Raises:
        OSError: a folder cannot be listed.
    """
    result: list[str] = []
    # Each folder carries its path relative to `root` (listed names hold no separator,
    # so joining is `os.path.relpath` without its cost per entry).
    stack: list[tuple[str, str, list[tuple[str, os.DirEntry[bytes]]]]] = [
        (root, "", _entries(root))]
    while stack:
        folder, prefix, entries = stack.pop()
        for name, entry in entries:
            relative = prefix + name
            result.append(relative)
            if len(result) >= MAX_LISTED_ENTRIES:
                if skipped is not None:
                    skipped.append(SkippedFile(
                        _rel_name(relative), "listing-cap",
                        f"listing stopped after {MAX_LISTED_ENTRIES} entries at this one;"
                        " entries after it were not scanned"))
                return result  # keep what was listed: the memdir's own files come first
            if _is_dir(entry):
                full = os.path.join(folder, name)
                stack.append((full, relative + os.sep, _entries(full)))
    return result


def _entries(folder: str) -> list[tuple[str, os.DirEntry[bytes]]]:
    # Sorted as bytes (libuv's strcmp), decoded as Node decodes names. The entries
    # know which are folders without a `stat` each (unless the file system does not
    # say, or the entry is a link, when `is_dir` stats it as `isdir` would).
    with os.scandir(os.fsencode(folder)) as it:
        raw = sorted(it, key=_entry_name)
    return [(entry.name.decode("utf-8", "replace"), entry) for entry in raw]


def _entry_name(entry: os.DirEntry[bytes]) -> bytes:
    return entry.name


def _is_dir(entry: os.DirEntry[bytes]) -> bool:
    try:
        return entry.is_dir()
    except (OSError, ValueError):
        return False


_SEP_ENTRYPOINT = os.sep + ENTRYPOINT_NAME


def is_candidate(relative_path: str) -> bool:
    """A `.md` file whose basename is not exactly `MEMORY.md` (case-sensitive)."""
    return relative_path.endswith(".md") and not (
        relative_path == ENTRYPOINT_NAME or relative_path.endswith(_SEP_ENTRYPOINT))


# One read takes the first lines of nearly every memory file (they are small); a file
# whose first 30 lines do not fit is read again by the general reader.
HEAD_BYTES = 8192
_BOM = b"\xef\xbb\xbf"
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_header(memory_dir: str, relative_path: str) -> MemoryHeader:
    """Header of one file from its first lines.

    Raises:
        OSError: the file cannot be read (the scan drops it).
    """
    file_path = os.path.normpath(os.path.join(memory_dir, relative_path))
    block, mtime_ms = _read_block(file_path)
    return _header(relative_path, file_path, mtime_ms, block)


def _header(relative_path: str, file_path: str, mtime_ms: float,
            block: str | None) -> MemoryHeader:
    """The header of a file whose frontmatter block (None: none) `_read_block` read."""
    meta = {} if block is None else load_mapping(block)
    # The system keeps `frontmatter.description || null`: falsy values are no description.
    raw = meta.get("description")
    if type(raw) is str:  # the commonest value, its own `String()`; `""` is falsy
        description = raw = raw or None
    elif not js_truthy(raw):
        description = raw = None
    else:
        description = js_string(raw)
    return MemoryHeader(relative_path.replace(os.sep, "/"), file_path, mtime_ms, description,
                        parse_memory_type(meta.get("type")), raw)


# A block `_header` can be left for later (or never, past the 200 newest): nothing in
# it can make the parse or the header raise. The parser turns its own errors into
# `YamlError` (empty frontmatter), a long decimal included; what remains is nesting
# deep enough for a RecursionError in `js_string`, and aliases, anchors or tags (a
# billion-laughs value, `!!binary`, `!!timestamp`). Depth needs a line, a bracket, a
# dash, `?` or `:` per level, so a block with few of them is shallow.
_RISKY_BLOCK = re.compile(r"[*&!]|[0-9]{600}")  # Python's digit limit is at least 640
_MAX_INDICATORS = 64


def _deferrable(block: str | None) -> bool:
    if block is None:
        return True
    # `in` before the regex: the digit run needs a long block, and one search with
    # both alternatives cost more than the rest of a file's bookkeeping.
    if "*" in block or "&" in block or "!" in block or (
            len(block) >= 600 and _RISKY_BLOCK.search(block) is not None):
        return False
    return (block.count(":") + block.count("-") + block.count("[") + block.count("{")
            + block.count("?")) <= _MAX_INDICATORS


def _read_block(file_path: str) -> tuple[str | None, float]:
    """The frontmatter block of a file's first 30 lines (None where the mapping is
    `{}` without parsing) and its mtime, with one open, one `fstat` and usually one
    read.

    Raises:
        OSError: as `stat_readable` and `open` would, in that order.
    """
    try:
        # Non-blocking, so a pipe opens at once and is refused below instead of hanging.
        fd = os.open(file_path, _OPEN_FLAGS)
    except OSError:
        stat_readable(file_path)  # a folder, pipe or missing file fails as it always did
        raise
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not statmod.S_ISREG(mode):
            if statmod.S_ISDIR(mode):
                raise IsADirectoryError(21, "illegal operation on a directory", file_path)
            if statmod.S_ISFIFO(mode) or statmod.S_ISSOCK(mode):
                raise OSError(6, "not a regular file", file_path)
        data = os.read(fd, HEAD_BYTES)
        if not data[:8].removeprefix(_BOM).startswith(b"---"):
            # No leading `---`, no frontmatter: the rest is never read.
            return None, node_mtime_ms(st)
        if (len(data) < HEAD_BYTES and len(data) >= st.st_size) or (
                data.count(b"\n") >= FRONTMATTER_MAX_LINES):
            # The whole file, or a cut after line 30 (a cut never splits a `\n`, so
            # decoding gives the lines the incremental reader gives).
            block = frontmatter_block(data.decode("utf-8", "replace"),
                                      max_lines=FRONTMATTER_MAX_LINES)
            return block, node_mtime_ms(st)
        os.lseek(fd, 0, os.SEEK_SET)
        with open(fd, "rb", closefd=False) as fh:
            read = read_open_range(fh, st, FRONTMATTER_MAX_LINES)
        return frontmatter_block(read.content), read.mtime_ms
    finally:
        os.close(fd)


def scan_memory_files(
    memory_dir: str | os.PathLike[str], *, skipped: list[SkippedFile] | None = None
) -> list[MemoryHeader]:
    """Headers of the memdir's memory files, newest first, at most 200.

    A missing or unlistable memdir gives `[]`; a file that cannot be read is left out.
    Bad YAML in one file only empties that file's frontmatter. Pass a list as `skipped`
    to learn what was left out and why (a missing memdir is no skip: nothing was there).
    """
    return scan_listed(memory_dir, list_recursive, skipped=skipped)


def scan_listed(
    memory_dir: str | os.PathLike[str],
    lister: Callable[..., list[str]],
    *,
    skipped: list[SkippedFile] | None = None,
) -> list[MemoryHeader]:
    """List the memdir with `lister` (faithful or confined), then read the headers.

    Both scans share everything but how they list, so they cannot drift apart.
    """
    root = os.path.abspath(os.fspath(memory_dir))
    try:
        entries = lister(root, skipped=skipped)
    except OSError as exc:
        # The system returns nothing when the listing fails; so do we.
        note_unlistable(root, exc, skipped)
        return []
    return headers_of(root, entries, skipped=skipped)


def note_unlistable(root: str, exc: OSError, skipped: list[SkippedFile] | None) -> None:
    """Record a failed listing: the memdir (`.`) or the folder named in the error."""
    if skipped is None:
        return
    failed = exc.filename if isinstance(exc.filename, (str, bytes)) else root
    failed = os.fsdecode(failed)
    if failed == root and isinstance(exc, FileNotFoundError):
        return  # no memdir at all: an empty scope, not a skip
    detail = str(exc) if failed == root else f"{exc}; so the whole listing failed, as Node's does"
    skipped.append(SkippedFile(_rel_name(os.path.relpath(failed, root)), "unlistable", detail))


def headers_of(
    root: str, entries: Iterable[str], *, skipped: list[SkippedFile] | None = None
) -> list[MemoryHeader]:
    """Headers of the listed candidates, newest first, at most 200; a file that cannot
    be read is left out. Shared by the faithful and the confined scan.

    With a `skipped` list, each candidate left out is appended to it, unreadable ones
    in listing order, then those beyond the 200 newest, newest first.
    """
    # Every file is read (and its header built) in listing order, but when there are
    # more than 200 candidates a block that cannot raise (`_deferrable`) is parsed only
    # once it is known to be among the 200 newest: a first scan of a large memdir
    # parses 200 blocks, not all of them.
    candidates = [rel for rel in entries if is_candidate(rel)]
    defer = len(candidates) > MAX_MEMORY_FILES
    base = os.path.join(root, "")  # listed paths are normal: no `.`, `..` or `//`
    rows: list[tuple[float, str, str, str | None, MemoryHeader | None]] = []
    for rel in candidates:
        try:
            file_path = base + rel
            block, mtime_ms = _read_block(file_path)
            header = (None if defer and _deferrable(block)
                      else _header(rel, file_path, mtime_ms, block))
        except (OSError, ValueError) as exc:
            if skipped is not None:
                skipped.append(skip_for_error(rel, exc))
            continue
        rows.append((-mtime_ms, rel, file_path, block, header))
    # Stable: equal mtimes keep listing order, as Array.prototype.sort does.
    rows.sort(key=_newest_first)
    if skipped is not None:
        skipped.extend(
            SkippedFile(rel.replace(os.sep, "/"), "over-200-newest",
                        f"modified {iso_timestamp(-neg_mtime)}; only the"
                        f" {MAX_MEMORY_FILES} newest are listed")
            for neg_mtime, rel, _, _, _ in rows[MAX_MEMORY_FILES:]
        )
    return [header if header is not None else _header(rel, file_path, -neg_mtime, block)
            for neg_mtime, rel, file_path, block, header in rows[:MAX_MEMORY_FILES]]


def _newest_first(row: tuple[float, str, str, str | None, MemoryHeader | None]) -> float:
    return row[0]


def iso_timestamp(mtime_ms: float) -> str:
    """`new Date(mtime_ms).toISOString()`: whole milliseconds (truncated), UTC, `Z`."""
    return js_iso_string(mtime_ms)


_TAGS: dict[MemoryType | None, str] = {None: "", **{t: f"[{t.value}] " for t in MemoryType}}


def format_manifest_line(header: MemoryHeader) -> str:
    """`- [<type>] <filename> (<iso>): <description>`, optional parts omitted."""
    line = f"- {_TAGS[header.type]}{header.filename} ({js_iso_string(header.mtime_ms)})"
    description = header.description
    return line if description is None else f"{line}: {description}"


def format_memory_manifest(headers: Iterable[MemoryHeader]) -> str:
    """One line per header, in the given order, joined by `\\n`."""
    return "\n".join(map(format_manifest_line, headers))
