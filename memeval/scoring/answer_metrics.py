"""How an answer is scored against the reference, as LoCoMo and mem0 score it.

Both texts are normalised the way SQuAD's script does and LoCoMo's evaluation copies:
lower case, punctuation removed, the articles `a`, `an`, `the` (and LoCoMo's `and`)
dropped, whitespace collapsed. *Exact match* asks that the two normalised texts be
equal; *token F1* is the harmonic mean of the precision and recall of the bag of
normalised tokens. Questions whose right answer is to decline (LoCoMo's adversarial
category, LongMemEval's `_abs` questions) have no reference span: token scores are
undefined there and only the answer judge, which counts a refusal as correct,
grades them.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable
from typing import Any

ABSTENTION_TAGS = frozenset({"adversarial", "abstention"})  # the importers' tags
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’´`“”")


def normalise_answer(text: str) -> str:
    """LoCoMo's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = str(text).replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(given: str, reference: str) -> float:
    """1.0 when the normalised texts are equal, else 0.0."""
    return float(normalise_answer(given) == normalise_answer(reference))


def token_f1(given: str, reference: str) -> float:
    """F1 of the normalised token bags (0.0 when they share no token)."""
    got, want = normalise_answer(given).split(), normalise_answer(reference).split()
    if not got or not want:
        return float(got == want)
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def is_abstention(tags: Iterable[str]) -> bool:
    """Is the right answer to decline? (The question asks about what was never said.)"""
    return bool(ABSTENTION_TAGS.intersection(tags))


def answer_scores(given: str | None, reference: str | None, *, abstention: bool,
                  failed: bool) -> tuple[float, float]:
    """(token F1, exact match) of one answer; NaN when undefined: no answer was
    given, the answerer failed, there is no reference, or the question asks to
    decline."""
    if failed or given is None or reference is None or abstention:
        return math.nan, math.nan
    return token_f1(given, reference), exact_match(given, reference)


F1_CORRECT = 0.5  # token F1 at or above this counts as a correct answer for agreement


def answer_agreement(frame: Any) -> list[dict[str, Any]]:
    """How far the answer judge agrees with the token scores, per selector: on turns
    with both, the share and Cohen's κ of agreement between its verdict and exact
    match, and between its verdict and token F1 ≥ `F1_CORRECT`, and the mean F1 of
    the answers it called correct and incorrect. Rows of one judge only (answer
    columns are the same under every selection judge)."""
    from memeval.scoring.agreement import cohens_kappa

    if frame.empty or "answer_correct" not in frame:
        return []
    frame = frame[frame["judge"] == sorted(frame["judge"].unique())[0]]
    both = frame[frame["answer_correct"].notna() & frame["answer_f1"].notna()]
    out = []
    for selector, rows in both.groupby("selector", sort=True):
        verdict = ["correct" if v > 0.5 else "incorrect" for v in rows["answer_correct"]]
        row: dict[str, Any] = {"selector": selector, "n": len(rows)}
        for name, token in (("exact_match", rows["answer_em"] > 0.5),
                            ("f1", rows["answer_f1"] >= F1_CORRECT)):
            said = ["correct" if t else "incorrect" for t in token]
            row[f"agreement_{name}"] = sum(a == b for a, b in zip(verdict, said, strict=True)) \
                / len(rows)
            row[f"kappa_{name}"] = cohens_kappa(verdict, said, ("correct", "incorrect"))
        correct = rows["answer_correct"] > 0.5
        row["f1_when_correct"] = float(rows.loc[correct, "answer_f1"].mean()) \
            if correct.any() else math.nan
        row["f1_when_incorrect"] = float(rows.loc[~correct, "answer_f1"].mean()) \
            if (~correct).any() else math.nan
        out.append(row)
    return out
