"""Did the answer reach the model? Reference answers checked against what surfaced.

Recall says the right file surfaced; it does not say the answer was in the part
that surfaced. A memory is cut at 4 KB / 200 lines and a memdir scan stops at 200
files, so the fact a question needs can be lost even when the file is picked. For
sets with reference answers (LoCoMo, LongMemEval), `answer_surfaced` asks whether
the answer text appears in the surfaced content, after the caps.

The rule: both texts are lower-cased, every run of characters that are not letters
or digits becomes one space, and the answer must appear as a whole-word substring.
"Lisbon," matches "...to lisbon next...", "2023" does not match "20230".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    return " " + _NON_WORD.sub(" ", text.casefold()).strip() + " "


def answer_surfaced(answer: str, surfaced: Iterable[str]) -> bool:
    """Whether `answer` (normalised) occurs in any of the surfaced texts."""
    needle = normalise(answer)
    if needle.strip() == "":
        return False
    return any(needle in normalise(text) for text in surfaced)
