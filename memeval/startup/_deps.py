"""The memdir pieces phase 1 builds on, imported in one place."""

from __future__ import annotations

from memeval.memdir.entrypoint import ENTRYPOINT_NAME, truncate_entrypoint_content
from memeval.memdir.frontmatter import parse_frontmatter
from memeval.memdir.paths import canonical_git_root, project_memory_dir

__all__ = [
    "ENTRYPOINT_NAME",
    "canonical_git_root",
    "parse_frontmatter",
    "project_memory_dir",
    "truncate_entrypoint_content",
]
