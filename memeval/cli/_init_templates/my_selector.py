"""Your memory selector, registered under the spec name `mine`.

memeval calls `select` once per memdir per turn with a `SelectionRequest`: the
user's `query`, the `manifest` text the model would see, the `candidates` (one
`MemoryHeader` each: `filename`, `description`, `type`, `mtime_ms`), the
`recent_tools` and the `turn_id`. Answer with the filenames to surface (at most five
are kept). Replace the body with your own logic; keep the name, or change it and the
`--memeval-selector` option with it.
"""

from memeval.selectors import SelectionResult, SyncSelector, selector


@selector("mine")
class MySelector(SyncSelector):
    """Picks the memories whose description shares the most words with the query."""

    def __init__(self, k: int = 3) -> None:
        self.k = k

    def select(self, request):
        words = set(request.query.lower().split())
        scored = sorted(request.candidates,
                        key=lambda h: -len(words & set((h.description or "").lower().split())))
        names = tuple(h.filename for h in scored[: self.k]
                      if words & set((h.description or "").lower().split()))
        return SelectionResult(names=names, raw_output=f"mine: {len(names)} by word overlap")
