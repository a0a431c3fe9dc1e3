"""Memory selectors and the registry that builds them from spec strings.

Example:
    >>> from memeval.selectors import resolve_selector
    >>> resolve_selector("bm25?k=3").name
    'bm25?k=3'

Built in: `bm25`, `recency`, `random`, `none`, `all`, `oracle`, `embedding` (needs the
`embed` extra: `pip install -e '.[embed]'` in a checkout) and `claude:<model>` (loaded
on first use).
Third-party selectors register under the entry-point group `memeval.selectors`.
"""

from memeval.selectors._registry import (
    ENTRY_POINT_GROUP,
    SELECTORS,
    available_selectors,
    resolve_selector,
    selector,
    selector_params,
)
from memeval.selectors.base import (
    SelectionRequest,
    SelectionResult,
    Selector,
    SyncSelector,
    safe_aselect,
    safe_select,
)
from memeval.selectors.baselines import (
    AllSelector,
    NoneSelector,
    OracleSelector,
    RandomSelector,
    RecencySelector,
)
from memeval.selectors.embedding import EmbeddingSelector, embedding_available
from memeval.selectors.lexical import BM25Selector

__all__ = [
    "ENTRY_POINT_GROUP",
    "SELECTORS",
    "AllSelector",
    "BM25Selector",
    "EmbeddingSelector",
    "NoneSelector",
    "OracleSelector",
    "RandomSelector",
    "RecencySelector",
    "SelectionRequest",
    "SelectionResult",
    "Selector",
    "SyncSelector",
    "available_selectors",
    "embedding_available",
    "resolve_selector",
    "safe_aselect",
    "safe_select",
    "selector",
    "selector_params",
]
