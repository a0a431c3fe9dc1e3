"""Every metric declared once: what it is called, which way is better, what it counts.

What a number *means* — whether a drop is good news, which turns it rests on, how its
interval is made — is decided here and nowhere else. The per-turn scoring, the
aggregate tables, the CLI table and the report, `memeval compare` (better / worse,
colours, the forest plot), `memeval gate` (which way each one-sided test points),
`memeval calibrate` and docs/metrics.md all read these declarations; a test checks
that the doc's table is this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memeval.errors import MemevalError

Direction = Literal["higher", "lower"]
Kind = Literal["ratio", "proportion", "count"]
IntervalMethod = Literal["cluster bootstrap", "wilson"]
Stage = Literal["selection", "retrieval", "answer"]

CONFIDENCE = 0.95  # every interval's level, and the one-sided gate bound's
FALSE_FAILURE = 0.05  # the A/A failure rate a calibrated gate margin allows


@dataclass(frozen=True)
class Metric:
    """One figure memeval reports.

    Args:
        name: the column in per-turn tables, summary.json and compare.json.
        label: how tables and pages title it.
        direction: `higher` or `lower` is better.
        denominator: which turns (or pooled counts) the figure averages over.
        kind: `ratio` (a mean of per-turn ratios, or a ratio of pooled counts),
            `proportion` (a share of turns with a 0/1 outcome) or `count`.
        interval: how its 95 % interval is made: a cluster bootstrap over scenarios,
            or Wilson's score interval for a proportion.
        per_turn: a per-turn column (False: only an aggregate, pooled over turns).
        headline: shown in the CLI table and the report, and compared by `memeval compare`.
        gated: checked by the default gate against a baseline.
        decimals: digits a table shows.
        stage: what it measures: the `selection` (by the judge's verdicts), its
            `retrieval` ranking (rank metrics, `memeval.scoring.retrieval`) or the
            `answer` the agent gave with it (`memeval run --answerer`).
    """

    name: str
    label: str
    direction: Direction
    denominator: str
    kind: Kind
    interval: IntervalMethod
    per_turn: bool = True
    headline: bool = False
    gated: bool = False
    decimals: int = 3
    stage: Stage = "selection"

    @property
    def sign(self) -> int:
        """+1 when higher is better, −1 when lower is: `sign × (B − A)` > 0 is a gain."""
        return 1 if self.direction == "higher" else -1

    @property
    def arrow(self) -> str:
        return "↑" if self.direction == "higher" else "↓"

    def verdict(self, low: float, high: float) -> str:
        """`better`, `worse`, `no clear difference` or `undetermined` for an interval of B − A."""
        if not (low == low and high == high):  # NaN: no interval
            return "undetermined"
        gain_low, gain_high = sorted((self.sign * low, self.sign * high))
        if gain_low > 0:
            return "better"
        if gain_high < 0:
            return "worse"
        return "no clear difference"


_NEEDING = "turns that need memory"
RANKS: tuple[int, ...] = (1, 3, 5)  # k of the rank metrics: up to the five a turn surfaces
_RANKED = f"{_NEEDING}, under a judge that graded every candidate"
_RETRIEVAL_LABELS = {"recall_any": "recall_any@{k}", "recall_all": "recall_all@{k}",
                     "ndcg": "nDCG@{k}"}


def retrieval_name(family: str, k: int) -> str:
    """The column of a rank metric: `recall_any_at_5` (labelled `recall_any@5`)."""
    return f"{family}_at_{k}"


def _rank_metrics() -> tuple[Metric, ...]:
    return (*(Metric(retrieval_name(family, k), label.format(k=k), "higher", _RANKED,
                     "ratio" if family == "ndcg" else "proportion", "cluster bootstrap",
                     stage="retrieval")
              for family, label in _RETRIEVAL_LABELS.items() for k in RANKS),
            Metric("mrr", "MRR", "higher", _RANKED, "ratio", "cluster bootstrap",
                   stage="retrieval"))


CATALOG: tuple[Metric, ...] = (
    Metric("precision", "precision", "higher",
           f"{_NEEDING} on which something scorable surfaced (hits + false positives > 0)",
           "ratio", "cluster bootstrap", headline=True),
    Metric("recall", "recall", "higher",
           f"{_NEEDING}, under a judge that graded every candidate", "ratio",
           "cluster bootstrap", headline=True),
    Metric("f1", "F1", "higher", f"{_NEEDING}, under a judge that graded every candidate",
           "ratio", "cluster bootstrap", headline=True, gated=True),
    Metric("exact_match", "exact match", "higher", "scored turns", "proportion", "wilson",
           headline=True),
    Metric("false_alarm", "false alarm", "lower", "scored turns that need nothing",
           "proportion", "wilson", headline=True, gated=True),
    Metric("answer_surfaced", "answer surfaced", "higher",
           "scored turns of scenarios that carry an answer", "proportion", "wilson"),
    Metric("false_positives", "false positives", "lower", "scored turns", "count",
           "cluster bootstrap"),
    Metric("surfaced_bytes", "surfaced bytes", "lower", "every turn", "count",
           "cluster bootstrap", decimals=0),
    Metric("micro_precision", "micro precision", "higher",
           f"hits and false positives pooled over {_NEEDING}", "ratio", "cluster bootstrap",
           per_turn=False),
    Metric("micro_recall", "micro recall", "higher",
           f"found and needed memories (at most 5 a turn) pooled over {_NEEDING}", "ratio",
           "cluster bootstrap", per_turn=False),
    *_rank_metrics(),
    Metric("answer_f1", "answer F1", "higher",
           "answered turns with a reference answer (not questions whose answer is to decline)",
           "ratio", "cluster bootstrap", headline=True, stage="answer"),
    Metric("answer_em", "answer exact match", "higher",
           "answered turns with a reference answer (not questions whose answer is to decline)",
           "proportion", "cluster bootstrap", stage="answer"),
    Metric("answer_correct", "answer correct", "higher",
           "answered turns the answer judge graded (declining is correct where the question "
           "asks about what was never said)", "proportion", "cluster bootstrap",
           headline=True, stage="answer"),
)
BY_NAME: dict[str, Metric] = {m.name: m for m in CATALOG}

PRIMARY = "f1"  # the metric whose non-inferiority a gate decides first
PER_TURN: tuple[str, ...] = tuple(m.name for m in CATALOG if m.per_turn)
POOLED: tuple[str, ...] = tuple(m.name for m in CATALOG if not m.per_turn)
HEADLINE: tuple[str, ...] = tuple(m.name for m in CATALOG if m.headline)
GATED: tuple[str, ...] = tuple(m.name for m in CATALOG if m.gated)
WILSON: tuple[str, ...] = tuple(m.name for m in CATALOG if m.interval == "wilson")
TESTABLE: tuple[str, ...] = tuple(m.name for m in CATALOG if m.per_turn and m.kind != "count")
RETRIEVAL: tuple[str, ...] = tuple(m.name for m in CATALOG if m.stage == "retrieval")
ANSWER: tuple[str, ...] = tuple(m.name for m in CATALOG if m.stage == "answer")


def metric(name: str) -> Metric:
    """The declaration of `name`, or an error that lists the known metrics."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise MemevalError(f"unknown metric {name!r}; memeval reports "
                           f"{', '.join(BY_NAME)}") from None


__all__ = ["ANSWER", "BY_NAME", "CATALOG", "GATED", "HEADLINE", "PER_TURN", "POOLED", "PRIMARY",
           "RANKS", "RETRIEVAL", "TESTABLE", "WILSON", "Direction", "IntervalMethod", "Kind",
           "Metric", "Stage", "metric", "retrieval_name"]
