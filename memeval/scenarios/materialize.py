"""Write a scenario's memory base to disk, where the scanner will find it.

The reference scanner reads real files and real mtimes, so a scenario becomes a
folder tree: the project memdir under the memory base, agent memdirs at the place
their scope gives, every file with the exact mtime the scenario states.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memeval.errors import MemevalError
from memeval.labels import PROJECT_SCOPE, memory_key, split_memory_key
from memeval.memdir.paths import agent_memory_dir, project_memory_dir
from memeval.scenarios._write import write_file
from memeval.scenarios.schema import MemdirSpec, Scenario

MEMORY_BASE_DIRNAME = "memory-base"  # stands in for ~/.claude
CWD_DIRNAME = "project"  # the session's working directory (project/local agent scopes)


@dataclass(frozen=True)
class MaterializedScenario:
    """Where a scenario's memory base was written.

    Args:
        scenario: the scenario written.
        root: the folder given to `materialize`.
        memory_base: the memory base (what `~/.claude` is for Claude Code).
        cwd: the session's working directory (holds project/local agent memdirs).
        project_dir: the project's auto-memory dir.
        agent_dirs: agent type -> its memdir, for agents with a memory scope.
        files: memory key (or key-like name for non-candidates such as `MEMORY.md`)
            -> absolute path of every file written.
    """

    scenario: Scenario
    root: Path
    memory_base: Path
    cwd: Path
    project_dir: Path
    agent_dirs: Mapping[str, Path]
    files: Mapping[str, Path]

    def memdir_for(self, scope: str) -> Path:
        """The memdir of `project` or of an agent type.

        Raises:
            MemevalError: the scenario has no such agent, or it has no memory scope.
        """
        if scope == PROJECT_SCOPE:
            return self.project_dir
        try:
            return self.agent_dirs[scope]
        except KeyError:
            known = ", ".join(sorted(self.agent_dirs)) or "none"
            raise MemevalError(f"scenario {self.scenario.id!r} has no agent memdir {scope!r} "
                               f"(agents with memory: {known})") from None

    def path_for_key(self, key: str) -> Path:
        """The absolute path a memory key names (whether or not the file exists)."""
        scope, filename = split_memory_key(key)
        return self.memdir_for(scope) / filename

    def key_for_path(self, path: str | os.PathLike[str]) -> str | None:
        """The memory key of a path inside one of the memdirs, else `None`."""
        raw = Path(os.path.abspath(path))
        for candidate in dict.fromkeys((raw, raw.resolve())):
            for scope, folder in self._dirs():
                try:
                    relative = candidate.relative_to(folder)
                except ValueError:
                    continue
                if relative.parts:
                    return memory_key(scope, relative.as_posix())
        return None

    def _dirs(self) -> list[tuple[str, Path]]:
        dirs = [(PROJECT_SCOPE, self.project_dir), *self.agent_dirs.items()]
        # Deepest first: a project-scope agent dir can sit under cwd, never under
        # another memdir, but resolved twins are tried too (e.g. /tmp -> /private/tmp).
        resolved = [(scope, folder.resolve()) for scope, folder in dirs]
        return sorted(dict.fromkeys([*dirs, *resolved]), key=lambda d: -len(d[1].parts))


def _write_memdir(folder: Path, memdir: MemdirSpec, scope: str,
                  files: dict[str, Path]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, spec in memdir.files.items():
        path = folder / name
        try:
            data = spec.content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MemevalError(f"{memory_key(scope, name)}: content is not encodable as "
                               f"UTF-8 ({exc.reason}); remove lone surrogates") from None
        write_file(path, data, spec.mtime_ms)
        files[memory_key(scope, name)] = path


def materialize(scenario: Scenario, root: str | os.PathLike[str]) -> MaterializedScenario:
    """Write the scenario's memdirs under `root` with exact mtimes.

    Layout: `<root>/memory-base/projects/<sanitized project_root>/memory/` for the
    project; agent memdirs at `<root>/memory-base/agent-memory/<type>/` (user scope)
    or under the working directory `<root>/project/.claude/...` (project, local).

    Args:
        scenario: a loaded scenario.
        root: an empty or missing folder; it is created.

    Raises:
        MemevalError: `root` already holds a memory base, or a file cannot be written.
    """
    root = Path(os.path.abspath(root))
    base = root / MEMORY_BASE_DIRNAME
    cwd = root / CWD_DIRNAME
    if base.exists() and any(base.iterdir()):
        raise MemevalError(f"{base} already holds a memory base; materialize each scenario "
                           "into a fresh folder")
    cwd.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    project_dir = project_memory_dir(base, scenario.project_root)
    _write_memdir(project_dir, scenario.project, PROJECT_SCOPE, files)
    agent_dirs: dict[str, Path] = {}
    for agent in scenario.agents.values():
        if agent.memdir is None or agent.scope == "none":
            continue
        folder = agent_memory_dir(agent.type, agent.scope, memory_base=base, cwd=cwd)
        _write_memdir(folder, agent.memdir, agent.type, files)
        agent_dirs[agent.type] = folder
    return MaterializedScenario(scenario=scenario, root=root, memory_base=base, cwd=cwd,
                                project_dir=project_dir, agent_dirs=agent_dirs, files=files)


def remove_written(world: MaterializedScenario) -> None:
    """Delete the files `materialize` wrote and the folders they leave empty, deepest
    first; anything else in the tree stays for the caller's sweep. Removing known
    paths saves the listing and `stat` of every entry a tree walk makes (0.35 → 0.25
    ms for a world of 21 files)."""
    root = os.fspath(world.root)
    folders: set[str] = set()
    for path in world.files.values():
        name = os.fspath(path)
        try:
            os.unlink(name)
        except OSError:
            continue
        folder = os.path.dirname(name)
        while folder not in folders and len(folder) > len(root) and folder.startswith(root):
            folders.add(folder)
            folder = os.path.dirname(folder)
    for folder in sorted(folders, key=len, reverse=True):  # a child is longer than its parent
        with contextlib.suppress(OSError):  # not empty: something else was written there
            os.rmdir(folder)
