"""The offline answerer: the sentence of the agent's context that best matches the question.

Deterministic and free, so the whole answer stage runs and is tested without a key,
and it answers only from what is in the context: with no memory surfaced it can
only quote the startup context, so better selection shows up as better answers.
Sentences are scored by the summed inverse document frequency (over the context's
sentences) of the question's content words they contain; the earliest best
sentence wins a tie, and a context sharing no content word with the question gets
the refusal `DECLINE`.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from memeval.answers._request import AnswerRequest

DECLINE = "I don't know: nothing in my context says."
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+")
# Words too common to say what a question is about.
_STOP_WORDS = """a an and are as at be by did do does for from had has have he her his how i
in is it its me my of on or our she so that the their them they this to was we were what
when where which who why will with would you your"""
_STOP = frozenset(_STOP_WORDS.split())
_REMINDER_TAGS = re.compile(r"</?system-reminder>")
# A memory file's YAML header (name, description, type): metadata, not what it says.
_FRONTMATTER = re.compile(r"^---\n.*?\n---$", re.S | re.M)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def sentences(passages: tuple[str, ...]) -> list[str]:
    """The context cut into sentences (and lines), reminder tags and blanks removed."""
    out = []
    for passage in passages:
        text = _FRONTMATTER.sub("\n", _REMINDER_TAGS.sub("\n", passage))
        for piece in _SENTENCE_END.split(text):
            piece = " ".join(piece.split())
            if _content_words(piece):
                out.append(piece)
    return out


class ExtractiveAnswerer:
    """Answers with the context's best-matching sentence (see the module docstring)."""

    name = "extractive"
    inline = True  # pure computation: the runner calls it on its event loop

    def answer(self, request: AnswerRequest) -> str:
        asked = _content_words(request.question)
        found = sentences(request.context)
        if not asked or not found:
            return DECLINE
        words = [_content_words(s) for s in found]
        frequency = Counter(w for ws in words for w in ws)
        total = len(found)

        def score(ws: set[str]) -> float:
            return sum(math.log(1 + total / frequency[w]) for w in asked & ws)

        best = max(range(total), key=lambda i: (score(words[i]), -i))
        return found[best] if score(words[best]) > 0 else DECLINE
