"""Node's POSIX path arithmetic, where Python's differs and the difference shows.

Claude Code keys its read-file state with `path.normalize` and expands tool and
`@include` paths with its own `expandPath`; `os.path.normpath` and
`os.path.expanduser` disagree with both on details that decide whether two paths
are the same key (a leading `//`, a trailing `/`, `~user`, Unicode normal form,
which whitespace is trimmed). Session and startup both go through these helpers.
"""

from __future__ import annotations

import os
import unicodedata

from memeval.memdir.text import js_trim


def _collapse(path: str, allow_above_root: bool) -> str:
    """Node's `normalizeString`: resolve `.` and `..`, drop empty segments."""
    out: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out and out[-1] != "..":
                out.pop()
            elif allow_above_root:
                out.append("..")
            continue
        out.append(segment)
    return "/".join(out)


def node_normalize(path: str) -> str:
    """`path.posix.normalize`: a trailing `/` is kept and a leading `//` becomes `/`,
    unlike `os.path.normpath`; `""` is `"."`."""
    if not path:
        return "."
    absolute = path.startswith("/")
    body = _collapse(path, allow_above_root=not absolute)
    if not body and not absolute:
        body = "."
    if body and path.endswith("/"):
        body += "/"
    return "/" + body if absolute else body


def node_resolve(base: str, path: str) -> str:
    """`path.posix.resolve(base, path)` for an absolute `base`: normalized, no
    trailing `/` (except the root)."""
    joined = path if path.startswith("/") else f"{base}/{path}"
    return "/" + _collapse(joined, allow_above_root=False)


def expand_path(path: str, base_dir: str | os.PathLike[str], home: str | os.PathLike[str]) -> str:
    """Claude Code's `expandPath`: JS-trimmed, `~` and `~/…` taken from `home` (never
    `~user`), absolute paths normalized, relative ones resolved against `base_dir`,
    and the result NFC-normalized.

    Raises:
        ValueError: the path or the base holds a NUL byte.
    """
    base = os.fspath(base_dir)
    if "\0" in path or "\0" in base:
        raise ValueError("path contains null bytes")
    trimmed = js_trim(path)
    home_s = os.fspath(home)
    if not trimmed:
        result = node_normalize(base)
    elif trimmed == "~":
        result = home_s
    elif trimmed.startswith("~/"):
        result = node_normalize(f"{home_s}/{trimmed[2:]}")
    elif trimmed.startswith("/"):
        result = node_normalize(trimmed)
    else:
        result = node_resolve(base, trimmed)
    return unicodedata.normalize("NFC", result)
