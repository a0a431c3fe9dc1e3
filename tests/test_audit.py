"""memeval audit: agreement against gold is listed; a dissenting judge or selector hides it."""

from __future__ import annotations

from dataclasses import replace

from memeval.judges.base import Judgement, MemoryVerdict
from memeval.scoring.audit import audit
from memeval.testing.synthetic import synthetic_rows


def _row(selector: str, picks: tuple[str, ...], *, judge_says: str | None = None):
    base = synthetic_rows(turns=1, selectors=("bm25",))[0]
    judgements = {"gold": Judgement("t0", "gold", (), relevant=("a.md",))}
    if judge_says:
        judgements["claude"] = Judgement("t0", "claude",
                                         tuple(MemoryVerdict(k, judge_says) for k in picks))
    return replace(base, selector=selector, selected=picks, relevant=("a.md",),
                   acceptable=(), in_context=(), selector_error=None, judgements=judgements)


def test_a_memory_every_selector_picks_against_gold_is_listed_with_a_patch() -> None:
    (finding,) = audit([_row("bm25", ("a.md", "b.md")), _row("claude", ("b.md",)),
                        _row("oracle", ("a.md",))])
    assert (finding.key, finding.pickers) == ("b.md", ("bm25", "claude"))
    assert "acceptable: [..., b.md]" in finding.patch()


def test_a_dissenting_selector_or_model_judge_hides_it() -> None:
    assert audit([_row("bm25", ("b.md",)), _row("recency", ("c.md",))]) == []
    assert audit([_row("bm25", ("b.md",), judge_says="irrelevant"),
                  _row("claude", ("b.md",), judge_says="irrelevant")]) == []
    (kept,) = audit([_row("bm25", ("b.md",), judge_says="acceptable"),
                     _row("claude", ("b.md",), judge_says="relevant")])
    assert kept.judges == ("claude",)
