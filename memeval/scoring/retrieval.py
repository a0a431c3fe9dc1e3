"""Rank metrics the retrieval literature reports, computed by `ir_measures` (trec_eval).

A turn is a query, the memories that reached the model are its ranked list (the
selector's answer order: no built-in selector returns scores, so rank i gets score
n − i), and the judge's labels are its relevance: relevant 1, everything else 0
(an acceptable memory is judged, not relevant, as trec_eval reads 0). The figures,
for k in `RANKS`:

- `recall_any@k` (LongMemEval's): 1 when some relevant memory is in the top k
  (trec_eval's `success@k`);
- `recall_all@k` (LongMemEval's): 1 when every relevant memory is in the top k
  (trec_eval's `recall@k` equal to 1);
- `ndcg@k` and `mrr` (reciprocal rank of the first relevant memory).

They are defined on turns that need memory under a judge that knows every relevant
memory (as recall is); a turn with no pick scores 0 on each (`trec_eval -c`).
`memeval export --format trec` writes the same queries, so ranx, ir_measures or
trec_eval recompute every figure from the files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from memeval.scoring.catalog import RANKS, retrieval_name

_UNSAFE = re.compile(r"[^\w@:/.\-~+=,]")  # what `doc_id` percent-encodes
# Each family's trec_eval measure; `recall_all` is recall@k equal to 1.
_FAMILIES = {"recall_any": "Success", "recall_all": "R", "ndcg": "nDCG"}


@dataclass(frozen=True)
class RankedQuery:
    """One turn as an IR query: its ranked picks and the labels of its judge."""

    ranked: tuple[str, ...]
    relevant: frozenset[str]
    acceptable: frozenset[str] = frozenset()

    @property
    def run(self) -> list[tuple[str, float]]:
        """(document, score) in rank order; a repeated pick counts at its first rank."""
        picks = list(dict.fromkeys(self.ranked))
        return [(doc_id(k), float(len(picks) - i)) for i, k in enumerate(picks)]

    def qrels(self, *, judged: bool = True) -> list[tuple[str, int]]:
        """(document, relevance): relevant 1 and, when `judged`, acceptable 0 (a 0
        changes none of the rank metrics here; the export writes it for the record)."""
        graded = {doc_id(k): 0 for k in self.acceptable - self.relevant} if judged else {}
        graded.update({doc_id(k): 1 for k in self.relevant})
        return sorted(graded.items())


def doc_id(key: str) -> str:
    """A memory key as a TREC document id: no whitespace (TREC files split on it)."""
    return quote(key, safe="@:/._-~+=,") if _UNSAFE.search(key) else key


def measure_names() -> list[str]:
    """The catalog names of the rank metrics, in the order `rank_metrics` fills them."""
    return [*(retrieval_name(f, k) for f in _FAMILIES for k in RANKS), "mrr"]


def rank_metrics(queries: Sequence[RankedQuery | None]) -> list[dict[str, float]]:
    """Each query's rank metrics (NaN for None: a turn they are undefined on)."""
    import ir_measures

    nan_row = dict.fromkeys(measure_names(), math.nan)
    live = [i for i, q in enumerate(queries) if q is not None and q.relevant]
    out = [dict(nan_row) for _ in queries]
    if not live:
        return out
    measures = {ir_measures.parse_measure(f"{m}@{k}"): (family, k)
                for family, m in _FAMILIES.items() for k in RANKS}
    measures[ir_measures.parse_measure("RR")] = ("mrr", 0)
    qrels, run = [], []
    for i in live:
        query = queries[i]
        assert query is not None
        qrels += [ir_measures.Qrel(str(i), d, rel) for d, rel in query.qrels(judged=False)]
        run += [ir_measures.ScoredDoc(str(i), d, s) for d, s in query.run]
    for i in live:  # a query without picks is absent from the run: it scores 0 (`-c`)
        out[i] = {name: 0.0 for name in nan_row}
    # ir_measures hands back the measures it was given; hashing one builds its repr
    by_id = {id(m): named for m, named in measures.items()}  # `measures` keeps them alive
    for found in ir_measures.iter_calc(list(measures), qrels, run):
        family, k = by_id.get(id(found.measure)) or measures[found.measure]
        value = float(found.value)
        if family == "recall_all":
            value = float(math.isclose(value, 1.0))
        name = "mrr" if family == "mrr" else retrieval_name(family, k)
        out[int(found.query_id)][name] = value
    return out


def ranked_query(selected: Sequence[str], relevant: Collection[str],
                 acceptable: Collection[str] = ()) -> RankedQuery:
    return RankedQuery(tuple(selected), frozenset(relevant), frozenset(acceptable))
