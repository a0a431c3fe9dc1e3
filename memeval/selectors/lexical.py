"""BM25 over what the real selector sees: each candidate's filename and description.

The offline default. It knows nothing a model would know (synonyms, intent), which
is the point: it is the floor a model-backed selector has to beat, and it costs
nothing to run. Scoring is `bm25s` (Lucene's BM25 variant) over English-stemmed
tokens, so `test`, `tests` and `testing` count as one term.
"""

from __future__ import annotations

import re
import warnings
from functools import cache, lru_cache

import bm25s
import Stemmer

from memeval.errors import MemevalError
from memeval.memdir import MAX_SURFACED_PER_TURN
from memeval.selectors._registry import SELECTORS, selector
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector

DEFAULT_K = MAX_SURFACED_PER_TURN  # more would be cut anyway
# Absolute BM25 score a memory needs to be picked, chosen on the bundled fixtures
# (mean F1 over 156 project turns: 0.30 at 0, 0.43 at 2, 0.35 at 3). Below it one
# shared common word ("file", "config") surfaces a memory; above it real matches drop.
DEFAULT_THRESHOLD = 2.0
TRACE_TOP = 8  # scores shown in raw_output: enough to see why, short enough to read
INDEX_CACHE_SIZE = 64  # distinct manifests kept indexed; one per memdir state in a run
STOPWORDS = "en_plus"  # NLTK's list; bm25s's "en" keeps "how", "should", "what"

# Filenames are slugs: `run-tests_locally.md` should read as three words.
_SLUG_SEPARATORS = re.compile(r"[-_./\\]+")


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def candidate_text(filename: str, description: str | None) -> str:
    """The text BM25 indexes for one memory: filename words, then its description."""
    stem = filename[:-3] if filename.lower().endswith(".md") else filename
    return f"{_SLUG_SEPARATORS.sub(' ', stem)} {description or ''}".strip()


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens, the same way for docs and queries."""
    return bm25s.tokenize(texts, stopwords=STOPWORDS, stemmer=_stemmer(),
                          return_ids=False, show_progress=False)


@lru_cache(maxsize=INDEX_CACHE_SIZE)
def _index(documents: tuple[str, ...]) -> bm25s.BM25 | None:
    """The BM25 index of one manifest; a session asks the same manifest many times."""
    doc_tokens = tokenize(list(documents))
    if not any(doc_tokens):
        return None
    retriever = bm25s.BM25()
    with warnings.catch_warnings():
        # bm25s divides by the mean length, which mostly-empty corpora make tiny.
        warnings.simplefilter("ignore", RuntimeWarning)
        retriever.index(doc_tokens, show_progress=False)
    return retriever


def bm25_scores(query: str, documents: list[str]) -> list[float]:
    """BM25 score of each document for `query`; zeros when nothing can match."""
    query_tokens = tokenize([query])[0]
    retriever = _index(tuple(documents)) if query_tokens else None
    if retriever is None:
        return [0.0] * len(documents)
    return [float(s) for s in retriever.get_scores(query_tokens)]


@selector("bm25")
class BM25Selector(SyncSelector):
    """BM25 over filename + description; picks the top k above a score threshold."""

    inline = True  # quick, pure computation: runs on the event loop

    def __init__(self, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
                 relative: float = 0.0) -> None:
        """
        Args:
            k: at most this many memories are picked (the session caps at 5 anyway).
            threshold: the BM25 score a memory must reach; raise it to abstain more.
            relative: also require this fraction (0..1) of the turn's best score, so
                one strong match is not diluted by weak ones; 0 turns it off.
        """
        if k < 0:
            raise MemevalError(f"bm25: k={k} must be 0 or more")
        if threshold < 0:
            raise MemevalError(f"bm25: threshold={threshold} must be 0 or more")
        if not 0.0 <= relative <= 1.0:
            raise MemevalError(f"bm25: relative={relative} must lie in [0, 1]")
        self.k = k
        self.threshold = threshold
        self.relative = relative
        self.name = SELECTORS.canonical("bm25", k=k, threshold=threshold, relative=relative)

    def select(self, request: SelectionRequest) -> SelectionResult:
        headers = request.candidates
        if not headers:
            return SelectionResult(names=(), raw_output="bm25: no candidates")
        documents = [candidate_text(h.filename, h.description) for h in headers]
        scores = bm25_scores(request.query, documents)
        # Highest score first; ties keep manifest order (newest first), as sorted() is stable.
        ranked = sorted(range(len(headers)), key=lambda i: -scores[i])
        bar = max(self.threshold, self.relative * max(scores))
        picked = [headers[i].filename for i in ranked
                  if scores[i] > 0 and scores[i] >= bar][: self.k]
        shown = " ".join(f"{headers[i].filename}={scores[i]:.2f}"
                         for i in ranked[:TRACE_TOP] if scores[i] > 0)
        trace = (f"bm25 k={self.k} bar={bar:.2f} "
                 f"terms={' '.join(tokenize([request.query])[0])} "
                 f"scores: {shown or 'none matched'}")
        return SelectionResult(names=tuple(picked), raw_output=trace)
