"""The scan as a Session runs it: faithful, or confined to the memdir (hardened).

The faithful scan is `memeval.memdir.scan_memory_files`, which follows symlinks
wherever they lead, as Node's recursive listing does. The hardened scan lists the
same entries in the same order but never enters or reads anything whose real path
leaves the memdir, so a link cannot widen what a turn may open.
"""

from __future__ import annotations

import os

from memeval.memdir import MemoryHeader, scan_memory_files
from memeval.memdir.readfile import read_text, split_range
from memeval.memdir.scan import SkippedFile, scan_listed
from memeval.memdir.surface import MAX_MEMORY_BYTES, MAX_MEMORY_LINES


def scan_dir(
    memory_dir: str | os.PathLike[str],
    *,
    follow_symlinks_out: bool,
    skipped: list[SkippedFile] | None = None,
) -> list[MemoryHeader]:
    """Headers of a memdir, newest first, at most 200 (SPEC §2.3); what was left out
    and why is appended to `skipped` when given."""
    if follow_symlinks_out:
        return scan_memory_files(memory_dir, skipped=skipped)
    return scan_confined(memory_dir, skipped=skipped)


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _sorted_names(folder: str) -> list[str]:
    # Same order as the faithful listing: names sorted as bytes.
    raw = sorted(os.listdir(os.fsencode(folder)))
    return [name.decode("utf-8", "replace") for name in raw]


def list_confined(root: str, *, skipped: list[SkippedFile] | None = None) -> list[str]:
    """Relative paths under `root`, in the faithful listing's order, leaving out every
    entry whose real path is outside `root`'s real path, and entering each real folder
    once (a link back to an ancestor would otherwise loop).

    Entries left out as `outside-memdir` and sub-folders that cannot be listed
    (`unlistable`) are appended to `skipped` when given.

    Raises:
        OSError: the memdir itself cannot be listed.
    """
    root_real = os.path.realpath(root)
    result: list[str] = []
    entered = {root_real}
    stack: list[tuple[str, list[str]]] = [(root, _sorted_names(root))]
    while stack:
        folder, names = stack.pop()
        for name in names:
            full = os.path.join(folder, name)
            real = os.path.realpath(full)
            relative = os.path.relpath(full, root)
            if not _inside(real, root_real):
                if skipped is not None:
                    skipped.append(SkippedFile(
                        relative.replace(os.sep, "/"), "outside-memdir",
                        f"resolves to {real}, outside {root_real}; not entered or read"))
                continue
            result.append(relative)
            if os.path.isdir(full) and real not in entered:
                entered.add(real)
                try:
                    stack.append((full, _sorted_names(full)))
                except OSError as exc:
                    if skipped is not None:
                        skipped.append(SkippedFile(
                            relative.replace(os.sep, "/"), "unlistable", str(exc)))
                    continue
    return result


def scan_confined(
    memory_dir: str | os.PathLike[str], *, skipped: list[SkippedFile] | None = None
) -> list[MemoryHeader]:
    """`scan_memory_files` without following anything out of the memdir; what was
    left out and why is appended to `skipped` when given."""
    return scan_listed(memory_dir, list_confined, skipped=skipped)


def exact_200_line_file(path: str) -> bool:
    """Whether the file is exactly 200 newline-terminated lines within the byte cap,
    the case the faithful reader marks truncated although nothing is cut."""
    try:
        raw, _ = read_text(path)
    except OSError:
        return False
    _, total, by_bytes = split_range(raw, MAX_MEMORY_LINES, MAX_MEMORY_BYTES)
    text = raw[1:] if raw.startswith("\ufeff") else raw
    return total == MAX_MEMORY_LINES + 1 and not by_bytes and text.endswith("\n")
