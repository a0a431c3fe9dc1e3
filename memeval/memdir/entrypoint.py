"""The MEMORY.md index limits at startup (SPEC §4.3)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import jinja2

from memeval.memdir.text import js_trim, utf16_last_index_of, utf16_len, utf16_slice

ENTRYPOINT_NAME = "MEMORY.md"
MAX_ENTRYPOINT_LINES = 200  # an index line per memory; more lines are cut
MAX_ENTRYPOINT_BYTES = 25_000  # UTF-16 units; catches indexes of overlong lines

# `> WARNING: MEMORY.md is <reason>.` is the system's; the rest is our wording.
ENTRYPOINT_WARNING_TEMPLATE = (
    "\n\n> WARNING: {{ name }} is {{ reason }}. Only the first part was loaded. "
    "Keep each index entry to one short line and put the details in topic files."
)

_ENV = jinja2.Environment(autoescape=False, keep_trailing_newline=True)


@dataclass(frozen=True)
class EntrypointTruncation:
    """The index as loaded, with the measurements that decided its truncation.

    Args:
        content: trimmed index, cut and followed by the warning when over a limit.
        line_count: lines of the trimmed index.
        byte_count: length of the trimmed index in UTF-16 units (the system's "bytes").
        was_line_truncated: more than 200 lines.
        was_byte_truncated: more than 25 000 units.
    """

    content: str
    line_count: int
    byte_count: int
    was_line_truncated: bool
    was_byte_truncated: bool


def _to_fixed_1(value: float) -> str:
    # Number.prototype.toFixed(1) rounds the exact binary value half up.
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_file_size(size: int) -> str:
    """`N bytes` below 1 KiB, else KB/MB/GB with one decimal and `.0` dropped."""
    kb = size / 1024
    if kb < 1:
        return f"{size} bytes"
    for unit, value in (("KB", kb), ("MB", kb / 1024)):
        if value < 1024:
            return _to_fixed_1(value).removesuffix(".0") + unit
    return _to_fixed_1(kb / 1024 / 1024).removesuffix(".0") + "GB"


def truncate_entrypoint_content(
    raw: str, *, warning_template: str | None = None
) -> EntrypointTruncation:
    """Apply the index's line and size caps as the system does at startup.

    Args:
        raw: the index file's text (BOM included, if any; trimming removes it).
        warning_template: replaces our warning (jinja2, gets `name` and `reason`).
    """
    trimmed = js_trim(raw)
    lines = trimmed.split("\n")
    line_count = len(lines)
    byte_count = utf16_len(trimmed)
    by_lines = line_count > MAX_ENTRYPOINT_LINES
    by_bytes = byte_count > MAX_ENTRYPOINT_BYTES
    if not by_lines and not by_bytes:
        return EntrypointTruncation(trimmed, line_count, byte_count, False, False)
    cut = "\n".join(lines[:MAX_ENTRYPOINT_LINES]) if by_lines else trimmed
    if utf16_len(cut) > MAX_ENTRYPOINT_BYTES:
        at = utf16_last_index_of(cut, "\n", MAX_ENTRYPOINT_BYTES)
        cut = utf16_slice(cut, 0, at if at > 0 else MAX_ENTRYPOINT_BYTES)
    if by_bytes and not by_lines:
        reason = (
            f"{format_file_size(byte_count)} (limit: {format_file_size(MAX_ENTRYPOINT_BYTES)})"
            " — index entries are too long"
        )
    elif by_lines and not by_bytes:
        reason = f"{line_count} lines (limit: {MAX_ENTRYPOINT_LINES})"
    else:
        reason = f"{line_count} lines and {format_file_size(byte_count)}"
    warning = _ENV.from_string(warning_template or ENTRYPOINT_WARNING_TEMPLATE).render(
        name=ENTRYPOINT_NAME, reason=reason
    )
    return EntrypointTruncation(cut + warning, line_count, byte_count, by_lines, by_bytes)
