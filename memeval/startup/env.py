"""The filesystem roots and flags phase 1 depends on, as one explicit record.

Claude Code reads these from the process (home, cwd, env vars, settings); memeval takes
them as data so a test or a scenario can point every root at a temporary folder and
never touch the real home.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from memeval.memdir.paths import memory_base as resolve_memory_base

DEFAULT_MANAGED_DIR = Path("/etc/claude-code")
"""Where Linux installs keep policy-managed instructions."""

ADDITIONAL_DIRS_ENV = "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD"
"""Env flag that lets `--add-dir` folders contribute instruction files."""

DISABLE_AUTO_MEMORY_ENV = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
"""Env flag that turns auto-memory (and so the index) off."""

DISABLE_CLAUDE_MDS_ENV = "CLAUDE_CODE_DISABLE_CLAUDE_MDS"
"""Env flag that leaves every instruction file (and the index) out of the context."""

SETTING_SOURCES: frozenset[str] = frozenset({"user", "project", "local"})
"""The setting sources that gate instruction files (`--setting-sources user,project,local`):
`user` → the user's `CLAUDE.md` and rules, `project` → the checked-in project files of
the walk, `local` → `CLAUDE.local.md`. Managed files and `--add-dir` folders load
whatever the sources are."""

_TRUTHY = {"1", "true", "yes", "on"}


class MemoryFileType(StrEnum):
    """Where an instruction file came from; decides its description and its mode filter."""

    MANAGED = "Managed"
    USER = "User"
    PROJECT = "Project"
    LOCAL = "Local"
    AUTO_MEM = "AutoMem"
    TEAM_MEM = "TeamMem"


INDEX_TYPES = frozenset({MemoryFileType.AUTO_MEM, MemoryFileType.TEAM_MEM})
"""Types that are a memdir index; recall mode leaves them out of the context."""


@dataclass(frozen=True)
class StartupEnv:
    """Everything discovery reads besides the files themselves.

    Args:
        cwd: the folder the session starts in (the walk goes from `/`'s child down to it).
        config_home: the user's config folder (`~/.claude` or `$CLAUDE_CONFIG_DIR`).
        memory_base: root of per-project memory (`$CLAUDE_CODE_REMOTE_MEMORY_DIR`, else
            the config home).
        home: what `~/` in an `@~/x` include means.
        managed_dir: policy folder (`/etc/claude-code` on Linux).
        git_root: canonical git root naming the project memdir; `None` detects it from
            `cwd` (a worktree maps to its main repository; outside git, `cwd`).
        memory_dir: the project memdir itself, overriding the one derived from
            `memory_base` and the git root (scenarios materialize memdirs anywhere).
        auto_memory_enabled: whether the project memdir's `MEMORY.md` is loaded.
        team_memory_enabled: whether `<memdir>/team/MEMORY.md` is loaded.
        additional_dirs: `--add-dir` folders.
        additional_dirs_claude_md: the env flag that lets those folders contribute.
        external_includes_approved: the project approved `@include`s outside `cwd`.
        walk_root: where the upward walk for project files stops (inclusive): a
            materialized session's own folder, so nothing above it is read. `None`
            climbs to the filesystem root, as the system does on a real machine.
        recall_mode: the mode flag of SPEC §0 (`tengu_moth_copse`): when on, the index
            blocks are left out of the context because per-turn recall runs instead.
        quirk_symlink_reload: reproduce Claude Code's dedupe, which checks only the
            requested path, so a symlink met *after* its target loads the same file
            again. Off = hardened: a file whose real path was loaded is skipped.
        quirk_nfd_rules_folder_skipped: resolve real paths to their NFC form, as
            Claude Code's filesystem layer does; a rules folder holding an entry whose
            name is not NFC then loses all its rules (the entry's stat fails and the
            folder is given up). Off = hardened: real paths are used as they are.
        setting_sources: which of `user`, `project`, `local` are allowed (all by
            default); a source left out leaves its instruction files out.
        claude_md_excludes: `claudeMdExcludes` glob patterns; a user, project or
            local instruction file (or one it includes) whose path matches is skipped.
        instruction_files_disabled: `CLAUDE_CODE_DISABLE_CLAUDE_MDS`: no file is
            loaded and the context carries only the date.
    """

    cwd: Path
    config_home: Path
    memory_base: Path
    home: Path
    managed_dir: Path = DEFAULT_MANAGED_DIR
    git_root: Path | None = None
    memory_dir: Path | None = None
    auto_memory_enabled: bool = True
    team_memory_enabled: bool = False
    additional_dirs: tuple[Path, ...] = field(default=())
    additional_dirs_claude_md: bool = False
    external_includes_approved: bool = False
    walk_root: Path | None = None
    recall_mode: bool = False
    quirk_symlink_reload: bool = True
    quirk_nfd_rules_folder_skipped: bool = True
    setting_sources: frozenset[str] = SETTING_SOURCES
    claude_md_excludes: tuple[str, ...] = ()
    instruction_files_disabled: bool = False

    def __post_init__(self) -> None:
        from memeval.errors import MemevalError

        unknown = set(self.setting_sources) - SETTING_SOURCES
        if unknown:
            raise MemevalError(
                f"StartupEnv.setting_sources: unknown {sorted(unknown)}; "
                f"use any of {sorted(SETTING_SOURCES)}")
        object.__setattr__(self, "setting_sources", frozenset(self.setting_sources))
        object.__setattr__(self, "claude_md_excludes", tuple(self.claude_md_excludes))

    def source_enabled(self, source: str) -> bool:
        """Whether instruction files of setting source `source` may load."""
        return source in self.setting_sources

    @property
    def mode(self) -> str:
        """`"recall"` or `"index"`, the scenario format's names for the two modes."""
        return "recall" if self.recall_mode else "index"

    @classmethod
    def in_folder(
        cls, root: Path, cwd: Path | str = "work/project", **overrides: object
    ) -> StartupEnv:
        """An env whose every root lies under `root` (tests, scenarios, sandboxes).

        Layout: home `root/home/user`, config home and memory base `~/.claude`,
        managed dir `root/etc/claude-code`, cwd `root/<cwd>`.
        """
        root = Path(root)
        home = root / "home" / "user"
        values: dict[str, object] = {
            "cwd": root / cwd,
            "config_home": home / ".claude",
            "memory_base": home / ".claude",
            "home": home,
            "managed_dir": root / "etc" / "claude-code",
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def from_os(cls, cwd: Path | None = None, **overrides: object) -> StartupEnv:
        """The env a real Claude Code process would see on this machine.

        Never used by tests; they build a `StartupEnv` on temporary folders.
        """
        home = Path.home()
        config_home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        values: dict[str, object] = {
            "cwd": Path(cwd or Path.cwd()),
            "config_home": config_home,
            "memory_base": resolve_memory_base(),
            "home": home,
            "additional_dirs_claude_md": _env_flag(ADDITIONAL_DIRS_ENV),
            "auto_memory_enabled": not _env_flag(DISABLE_AUTO_MEMORY_ENV),
            "instruction_files_disabled": _env_flag(DISABLE_CLAUDE_MDS_ENV),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUTHY
