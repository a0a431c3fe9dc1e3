"""A small memory world on disk for Session tests: base, repo, memdirs, files, clock."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.memdir import agent_memory_dir, project_memory_dir
from memeval.session import Session

DAY_MS = 86_400_000
NOW_MS = 1_796_040_000_000.0  # 2026-12-01T12:00:00Z


def memory_text(
    description: str | None = None, body: str = "body\n", type_: str | None = None
) -> str:
    lines = ["---"]
    if description is not None:
        lines.append(f"description: {description}")
    if type_ is not None:
        lines.append(f"type: {type_}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body


@dataclass
class World:
    root: Path
    agents: dict[str, str | None] = field(default_factory=dict)

    @property
    def base(self) -> Path:
        return self.root / "base"

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def project_dir(self) -> Path:
        return project_memory_dir(self.base, self.repo)

    def agent_dir(self, agent_type: str) -> Path:
        scope = self.agents[agent_type]
        assert scope is not None
        return agent_memory_dir(agent_type, scope, memory_base=self.base, cwd=self.repo)

    def write(
        self,
        memdir: Path,
        rel: str,
        text: str | None = None,
        *,
        age_days: float = 3,
        description: str | None = None,
    ) -> Path:
        """Write one file with an mtime `age_days` before NOW_MS; returns its path."""
        path = memdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            text = memory_text(description or f"notes about {rel}")
        path.write_text(text, encoding="utf-8")
        mtime_ns = int((NOW_MS - age_days * DAY_MS) * 1_000_000)
        os.utime(path, ns=(mtime_ns, mtime_ns))
        return path

    def session(self, selector: Any, **kwargs: Any) -> Session:
        kwargs.setdefault("now_ms", NOW_MS)
        kwargs.setdefault("agents", self.agents)
        return Session(self.base, self.repo, selector=selector, **kwargs)


def make_world(tmp_path: Path, agents: dict[str, str | None] | None = None) -> World:
    world = World(tmp_path, dict(agents or {}))
    world.repo.mkdir(parents=True, exist_ok=True)
    world.project_dir.mkdir(parents=True, exist_ok=True)
    return world
