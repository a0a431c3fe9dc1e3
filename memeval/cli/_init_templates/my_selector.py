"""Your memory selector, registered under the spec name `mine`.

memeval calls `select` once per memdir per turn with a `SelectionRequest`: the
user's `query`, the `manifest` text the model would see, the `candidates` (one
`MemoryHeader` each: `filename`, `description`, `type`, `mtime_ms`), the
`recent_tools` and the `turn_id`. Answer with the filenames to surface (at most five
are kept). Replace the body with your own logic; keep the name, or change it and
`memeval_selector` in pytest.ini with it.
"""

import re

from memeval.selectors import SelectionResult, SyncSelector, selector


@selector("mine")
class MySelector(SyncSelector):
    """Picks the memories whose description shares the most words with the query."""

    def __init__(self, k: int = 3) -> None:
        self.k = k

    def select(self, request):
        query = words(request.query)
        overlap = {h.filename: len(query & words(h.description or "")) for h in request.candidates}
        ranked = sorted((n for n, score in overlap.items() if score), key=lambda n: -overlap[n])
        names = tuple(ranked[: self.k])
        return SelectionResult(names=names, raw_output=f"mine: {len(names)} by word overlap")


def words(text):
    """The words of four letters or more: short words like 'the' match everything."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}
