"""What the answerer sees at a turn: what the agent itself would have in its context.

The startup context (instruction files and, in index mode, the MEMORY.md index), the
memories surfaced at the turn exactly as the model receives them (the system
reminders), the user's earlier messages when the scenario is one conversation (none
when its turns are independent questions), and the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memeval.scoring.answer_metrics import is_abstention


@dataclass(frozen=True)
class AnswerRequest:
    """One question put to the answerer, with the agent's context at that turn.

    Args:
        turn_id: the turn, for seeded choices and messages.
        question: the user's message.
        startup: the startup context text.
        reminders: each surfaced memory as rendered for the model, in order.
        conversation: the user's earlier messages of this conversation, oldest first.
        reference: the gold answer (for the answer judge only; never shown to the
            answerer).
        abstention: the right answer is to decline (the question asks about
            something never said).
    """

    turn_id: str
    question: str
    startup: str = ""
    reminders: tuple[str, ...] = ()
    conversation: tuple[str, ...] = ()
    reference: str | None = None
    abstention: bool = False

    @property
    def context(self) -> tuple[str, ...]:
        """The passages of the agent's context, most specific first: the surfaced
        memories, then the startup context, then the conversation."""
        return tuple(p for p in (*self.reminders, self.startup, *self.conversation) if p)


def answers_turn(answer: str | None, tags: Sequence[str]) -> bool:
    """Whether a turn is put to the answerer: it carries a gold answer, or it is a
    question whose right answer is to decline."""
    return answer is not None or is_abstention(tags)


def answer_request(*, turn_id: str, question: str, answer: str | None, tags: Sequence[str],
                   startup: str, reminders: Sequence[str],
                   conversation: Sequence[str] = ()) -> AnswerRequest:
    return AnswerRequest(turn_id=turn_id, question=question, startup=startup,
                         reminders=tuple(reminders), conversation=tuple(conversation),
                         reference=answer, abstention=is_abstention(tags))
