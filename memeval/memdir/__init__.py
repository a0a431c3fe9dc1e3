"""The memory directory half of the system under test, re-implemented exactly.

Scan a memdir into headers, print the manifest a selector sees, read a selected
memory as it is surfaced, and apply the MEMORY.md index limits (SPEC §1, §2.3-2.7, §4.3).
"""

from memeval.memdir.age import (
    STALENESS_TEMPLATE,
    memory_age,
    memory_age_days,
    memory_freshness_text,
    memory_header,
)
from memeval.memdir.entrypoint import (
    ENTRYPOINT_NAME,
    ENTRYPOINT_WARNING_TEMPLATE,
    MAX_ENTRYPOINT_BYTES,
    MAX_ENTRYPOINT_LINES,
    EntrypointTruncation,
    format_file_size,
    truncate_entrypoint_content,
)
from memeval.memdir.frontmatter import parse_frontmatter
from memeval.memdir.paths import (
    agent_memory_dir,
    canonical_git_root,
    memory_base,
    project_memory_dir,
    sanitize_path,
)
from memeval.memdir.scan import (
    FRONTMATTER_MAX_LINES,
    MAX_MEMORY_FILES,
    SCAN_SKIP_REASONS,
    SkippedFile,
    format_memory_manifest,
    iso_timestamp,
    scan_memory_files,
)
from memeval.memdir.surface import (
    MAX_MEMORY_BYTES,
    MAX_MEMORY_LINES,
    MAX_SESSION_BYTES,
    MAX_SURFACED_PER_TURN,
    TRUNCATION_NOTE,
    MemoryReadError,
    SurfacedMemory,
    read_memory_for_surfacing,
)
from memeval.memdir.text import js_trim, utf16_len
from memeval.memdir.types import MemoryHeader, MemoryType, parse_memory_type

__all__ = [
    "ENTRYPOINT_NAME",
    "ENTRYPOINT_WARNING_TEMPLATE",
    "FRONTMATTER_MAX_LINES",
    "MAX_ENTRYPOINT_BYTES",
    "MAX_ENTRYPOINT_LINES",
    "MAX_MEMORY_BYTES",
    "MAX_MEMORY_FILES",
    "MAX_MEMORY_LINES",
    "MAX_SESSION_BYTES",
    "MAX_SURFACED_PER_TURN",
    "SCAN_SKIP_REASONS",
    "STALENESS_TEMPLATE",
    "TRUNCATION_NOTE",
    "EntrypointTruncation",
    "MemoryHeader",
    "MemoryReadError",
    "MemoryType",
    "SkippedFile",
    "SurfacedMemory",
    "agent_memory_dir",
    "canonical_git_root",
    "format_file_size",
    "format_memory_manifest",
    "iso_timestamp",
    "js_trim",
    "memory_age",
    "memory_age_days",
    "memory_base",
    "memory_freshness_text",
    "memory_header",
    "parse_frontmatter",
    "parse_memory_type",
    "project_memory_dir",
    "read_memory_for_surfacing",
    "sanitize_path",
    "scan_memory_files",
    "truncate_entrypoint_content",
    "utf16_len",
]
