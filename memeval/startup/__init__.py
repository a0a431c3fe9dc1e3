"""Phase 1: the startup context — instruction files, the MEMORY.md index, rendering.

Reproduces how Claude Code builds the context a session starts with (SPEC §0, §4):
which files load and in what order, what each file's text becomes, how the index is
truncated, and the meta message that carries it all. Every root comes from a
`StartupEnv`, so nothing here reads the real home unless asked to.
"""

from memeval.startup.context import (
    StartupContext,
    build_user_context,
    index_link_targets,
    startup_context_for,
    startup_reachable,
)
from memeval.startup.discover import (
    Discovery,
    discover,
    discover_memory_files,
    memory_dir_for,
    project_root,
)
from memeval.startup.env import DEFAULT_MANAGED_DIR, MemoryFileType, StartupEnv
from memeval.startup.gitroot import find_canonical_git_root, find_git_root
from memeval.startup.pipeline import MAX_INCLUDE_DEPTH, MemoryFile
from memeval.startup.render import DESCRIPTIONS, Mode, render_claude_md, render_user_context

__all__ = [
    "DEFAULT_MANAGED_DIR",
    "DESCRIPTIONS",
    "MAX_INCLUDE_DEPTH",
    "Discovery",
    "MemoryFile",
    "MemoryFileType",
    "Mode",
    "StartupContext",
    "StartupEnv",
    "build_user_context",
    "discover",
    "discover_memory_files",
    "find_canonical_git_root",
    "find_git_root",
    "index_link_targets",
    "memory_dir_for",
    "project_root",
    "render_claude_md",
    "render_user_context",
    "startup_context_for",
    "startup_reachable",
]
