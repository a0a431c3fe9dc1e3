"""Gold labels: the truth a scenario states about which memories a turn needs.

Memories are named by a *memory key* that is unique across the memdirs of one
memory base: the project memdir's files by their manifest filename
(`testing.md`, `notes/db.md`), an agent's files as `@<agent-type>/<filename>`.
"""

from __future__ import annotations

from dataclasses import dataclass

PROJECT_SCOPE = "project"
GOLD = "gold"  # the judge that reads these labels


def memory_key(scope: str, filename: str) -> str:
    """The key of `filename` (relative to its memdir) in the memdir named `scope`.

    Args:
        scope: `"project"` for the project's auto-memory dir, else an agent type.
        filename: the path relative to the memdir, as the manifest shows it.
    """
    return filename if scope == PROJECT_SCOPE else f"@{scope}/{filename}"


def split_memory_key(key: str) -> tuple[str, str]:
    """Inverse of `memory_key`: `(scope, filename)`."""
    if key.startswith("@") and "/" in key:
        scope, filename = key[1:].split("/", 1)
        return scope, filename
    return PROJECT_SCOPE, key


@dataclass(frozen=True)
class GoldLabels:
    """Which memories a turn needs.

    Args:
        relevant: keys that must surface for the turn to be served well.
        acceptable: keys that are harmless if surfaced (neither hit nor false positive).
        category: the kind of difficulty the turn tests (`direct`, `keyword-trap`, ...).
        why: one line defending the label, shown in reports.
    """

    relevant: frozenset[str] = frozenset()
    acceptable: frozenset[str] = frozenset()
    category: str = "uncategorized"
    why: str = ""

    def verdict_for(self, key: str) -> str:
        """`relevant`, `acceptable` or `irrelevant` for one memory key."""
        if key in self.relevant:
            return "relevant"
        if key in self.acceptable:
            return "acceptable"
        return "irrelevant"
