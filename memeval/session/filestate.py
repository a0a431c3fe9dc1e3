"""The read-file state: which files the model has in context, as a bounded LRU.

Claude Code keeps it in an LRU cache of at most 100 entries keyed by the
`path.normalize`d path, so a file read long ago is forgotten and a memory the model
read (or was shown) 100 reads earlier can surface again. Each entry carries a
timestamp — the file's modification time in ms — because compaction restores the
entries with the newest timestamps.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from memeval.memdir.nodepath import node_normalize

READ_FILE_STATE_MAX_ENTRIES = 100
"""How many files the state remembers before the least recently used one goes."""


@dataclass(frozen=True)
class FileStateEntry:
    """One remembered file.

    Args:
        how: how it got there: `tool:<name>`, `memory` (surfaced) or `restored`
            (put back by compaction).
        timestamp: the file's mtime in ms when it entered (floored for tool reads,
            Node's exact `mtimeMs` for surfaced memories); 0 when it could not be
            stat'ed.
    """

    how: str
    timestamp: float


class ReadFileState:
    """An LRU map from normalized path to `FileStateEntry`.

    Membership tests do not refresh an entry (the cache's `has`); `set` does, and
    evicts the least recently used entries beyond `max_entries`.
    """

    def __init__(self, max_entries: int = READ_FILE_STATE_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, FileStateEntry] = OrderedDict()

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and node_normalize(path) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def get(self, path: str) -> FileStateEntry | None:
        """The entry for `path` without refreshing it (for reports and tests)."""
        return self._entries.get(node_normalize(path))

    def set(self, path: str, entry: FileStateEntry) -> None:
        key = node_normalize(path)
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def copy(self) -> ReadFileState:
        twin = ReadFileState(self.max_entries)
        twin._entries = OrderedDict(self._entries)
        return twin

    def newest_first(self) -> list[tuple[str, FileStateEntry]]:
        """Entries from most to least recently used, as the cache iterates them."""
        return list(reversed(self._entries.items()))

    def as_dict(self) -> dict[str, str]:
        """Path → how it got there, least recently used first."""
        return {path: entry.how for path, entry in self._entries.items()}
