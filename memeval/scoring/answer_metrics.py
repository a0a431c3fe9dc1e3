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
