"""On-disk response cache, content-addressed, safe for many threads and processes.

SQLite in WAL mode lets readers and one writer work at once across processes; each
operation opens its own short connection, so threads never share one. Only complete,
validated answers are stored (the client decides), never errors or refusals.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from memeval.llm.errors import LLMError


def default_cache_path() -> Path:
    """`$XDG_CACHE_HOME/memeval/llm.sqlite` (default `~/.cache/...`): reruns cost nothing."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memeval" / "llm.sqlite"


_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def _disk_full(exc: BaseException) -> bool:
    return (getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
            or getattr(exc, "errno", None) == errno.ENOSPC)


BUSY_TIMEOUT_S = 30.0  # concurrent writers wait this long for the lock before failing

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


class ResponseCache:
    """Maps a request key (request + repeat index) to the Messages API answer body.

    Args:
        path: the SQLite file; its folder is created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
                conn.commit()
                verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
                # Take the write lock once, so a cache that could be read but not
                # written is refused now rather than after the first paid answer.
                conn.execute("BEGIN IMMEDIATE")
                conn.rollback()
        except (OSError, sqlite3.Error) as exc:
            raise LLMError(self._cannot(exc, "open")) from exc
        if verdict != "ok":
            raise LLMError(self._corrupt(verdict))

    def _corrupt(self, detail: str) -> str:
        return (f"{self.path}: the response cache is corrupt ({detail}); delete the file "
                "(answers are fetched again) or run with --no-cache")

    def _cannot(self, exc: BaseException, doing: str) -> str:
        """Why the cache failed: a full disk and an unwritable place are said as such
        (deleting the file would throw paid answers away); only real damage is corrupt."""
        if _disk_full(exc):
            return (f"{self.path}: disk full: cannot {doing} the response cache ({exc}); "
                    "its answers are intact: free some space and rerun, or run with "
                    "--no-cache")
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(exc, sqlite3.DatabaseError) and code in _DAMAGED:
            return self._corrupt(str(exc))
        return (f"{self.path}: cannot {doing} the response cache ({exc}); pass a "
                "writable --cache path or --no-cache")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for `key`, or None."""
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT message FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, message: dict[str, Any]) -> None:
        """Store an answer; the first writer of a key wins (answers are interchangeable).

        Raises:
            LLMError: the answer could not be stored (a full disk says so).
        """
        try:
            with closing(self._connect()) as conn:
                conn.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?)",
                             (key, model, json.dumps(message, ensure_ascii=False),
                              time.time()))
                conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise LLMError(self._cannot(exc, "store an answer in")) from exc

    def stats(self) -> list[dict[str, Any]]:
        """Per model: answers stored, their bytes, and the oldest and newest (UTC epoch s)."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT model, COUNT(*), SUM(LENGTH(message)), MIN(created_at), "
                "MAX(created_at) FROM responses GROUP BY model ORDER BY model").fetchall()
        return [{"model": m, "answers": int(n), "bytes": int(b or 0), "oldest": lo,
                 "newest": hi} for m, n, b, lo, hi in rows]

    def prune(self, *, older_than_s: float | None = None, model: str | None = None) -> int:
        """Delete answers stored more than `older_than_s` ago and/or of models starting
        with `model` (both given: both must hold); returns how many went."""
        where, args = [], []
        if older_than_s is not None:
            where.append("created_at < ?")
            args.append(time.time() - older_than_s)
        if model is not None:
            where.append("substr(model, 1, ?) = ?")
            args += [len(model), model]
        if not where:
            raise LLMError("prune what? give --older-than DAYS and/or --model PREFIX")
        with closing(self._connect()) as conn:
            gone = conn.execute(f"DELETE FROM responses WHERE {' AND '.join(where)}",
                                args).rowcount
            conn.commit()
            conn.execute("VACUUM")  # give the space back to the disk
        return int(gone)

    def __len__(self) -> int:
        with closing(self._connect()) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
