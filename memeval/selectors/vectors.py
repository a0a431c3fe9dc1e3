"""A cache of text embeddings: each distinct text is encoded once, across turns and runs.

An embedding selector sees the same descriptions on every turn of a session and in
every run of a suite; re-encoding them was most of a run's time. Vectors are kept
by (model, SHA-256 of the text) in memory and, when a path is given, in a SQLite
file beside the response cache, so a rerun encodes only what changed (an edited
memory has a new text, hence a new key).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

import numpy as np

from memeval.errors import MemevalError

Encode = Callable[[list[str]], np.ndarray]  # texts -> one unit vector per row
_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


def _key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x1f{text}".encode()).hexdigest()


class VectorCache:
    """Vectors by (model, text); `path` adds a SQLite file shared across runs."""

    def __init__(self, model: str, path: Path | None = None) -> None:
        self.model = model
        self.path = path
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded = 0  # texts actually sent to the encoder (for tests and benches)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with closing(sqlite3.connect(path)) as conn:
                    conn.execute(_SCHEMA)
                    conn.commit()
                    if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                        raise sqlite3.DatabaseError("quick_check failed")
            except sqlite3.Error as exc:
                raise MemevalError(f"{path}: the embedding cache is unusable ({exc}); delete "
                                   "it (vectors are computed again)") from exc

    def vectors(self, texts: Sequence[str], encode: Encode) -> np.ndarray:
        """One vector per text, encoding only those seen nowhere before."""
        keys = [_key(self.model, t) for t in texts]
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._memory]
        if missing and self.path is not None:
            self._load(missing)
            with self._lock:
                missing = [k for k in missing if k not in self._memory]
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            fresh = np.asarray(encode([by_key[k] for k in missing]), dtype=np.float32)
            with self._lock:
                self._memory.update(zip(missing, fresh, strict=True))
                self.encoded += len(missing)
            self._store(missing, fresh)
        with self._lock:
            return np.stack([self._memory[k] for k in keys])

    def _load(self, keys: list[str]) -> None:
        with closing(sqlite3.connect(self.path)) as conn:  # type: ignore[arg-type]
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                rows = conn.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk).fetchall()
                with self._lock:
                    for key, blob in rows:
                        self._memory[key] = np.frombuffer(blob, dtype=np.float32)

    def _store(self, keys: list[str], vectors: np.ndarray) -> None:
        if self.path is None:
            return
        with closing(sqlite3.connect(self.path, timeout=30)) as conn:
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)",
                             [(k, v.tobytes()) for k, v in zip(keys, vectors, strict=True)])
            conn.commit()
