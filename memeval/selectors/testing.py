"""Tiny selectors for tests: fixed, scripted, everything, adversarial.

They answer instantly and offline, and remember the requests they were sent, so a
test can drive a Session exactly and then check what the selector was shown. The
adversarial one builds hostile answers from each request (names that are not
candidates, paths that leave the memdir, duplicates, non-strings) to prove that the
Session, not the selector, decides what may be opened.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector

# What a scripted answer may be: names (any values; the session validates them), a
# ready SelectionResult, or an exception to raise.
Answer = Sequence[Any] | SelectionResult | BaseException


class RecordingSelector(SyncSelector):
    """Keeps every request, in order; the base of the selectors below."""

    inline = True  # quick, pure computation: runs on the event loop

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[SelectionRequest] = []

    def select(self, request: SelectionRequest) -> SelectionResult:
        self.requests.append(request)
        return self.answer(request)

    def answer(self, request: SelectionRequest) -> SelectionResult:
        raise NotImplementedError

    @property
    def queries(self) -> list[str]:
        return [r.query for r in self.requests]


def _as_result(answer: Answer, trace: str) -> SelectionResult:
    if isinstance(answer, BaseException):
        raise answer
    if isinstance(answer, SelectionResult):
        return answer
    return SelectionResult(names=tuple(answer), raw_output=trace)


class FixedSelector(RecordingSelector):
    """Returns the same names for every request."""

    name = "fixed"

    def __init__(self, names: Sequence[Any] = ()) -> None:
        super().__init__()
        self.names = tuple(names)

    def answer(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult(names=self.names, raw_output=f"fixed: {list(self.names)!r}")


class ScriptedSelector(RecordingSelector):
    """Answers per query (and optionally per memdir scope).

    Args:
        script: query → answer, or query → {scope → answer}, or a function of the
            request returning an answer. An answer is a list of names, a
            SelectionResult, or an exception (raised, so the session records it).
        default: the answer for a query (or scope) the script does not name.
    """

    name = "scripted"

    def __init__(
        self,
        script: Mapping[str, Answer | Mapping[str, Answer]]
        | Callable[[SelectionRequest], Answer],
        default: Answer = (),
    ) -> None:
        super().__init__()
        self.script = script
        self.default = default

    def answer(self, request: SelectionRequest) -> SelectionResult:
        if callable(self.script):
            return _as_result(self.script(request), "scripted: function")
        entry: Any = self.script.get(request.query, self.default)
        if isinstance(entry, Mapping):
            entry = entry.get(request.scope, self.default)
        return _as_result(entry, f"scripted: {request.query!r} @ {request.scope}")


class EverythingSelector(RecordingSelector):
    """Names every candidate, newest first: the upper bound of recall."""

    name = "everything"

    def answer(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult(names=request.filenames, raw_output="everything")


@dataclass(frozen=True)
class Move:
    """One hostile name, built from the request when the selector answers.

    Kinds:
        `pick` — the candidate at `arg` (modulo the count): a legitimate name, and,
        repeated, a duplicate.
        `absolute` — that candidate's absolute path (not a manifest filename).
        `parent` — `../` before that candidate's filename.
        `case` — that filename with its case swapped.
        `nfd` / `nfc` — that filename in another Unicode normalization.
        `literal` — `arg` itself (`MEMORY.md`, `../outside.md`, `/etc/passwd`, another
        memdir's filename...).
        `nonstring` — `arg` itself, a value that is not a string (42, None, a list).
    """

    kind: str
    arg: Any = 0

    def build(self, request: SelectionRequest) -> list[Any]:
        if self.kind in ("literal", "nonstring"):
            return [self.arg]
        names = request.filenames
        if not names:
            return []
        index = int(self.arg) % len(names)
        name = names[index]
        if self.kind == "pick":
            return [name]
        if self.kind == "absolute":
            return [os.fspath(request.candidates[index].file_path)]
        if self.kind == "parent":
            return ["../" + name]
        if self.kind == "case":
            return [name.swapcase()]
        if self.kind in ("nfd", "nfc"):
            return [unicodedata.normalize(self.kind.upper(), name)]
        raise ValueError(f"unknown adversarial move {self.kind!r}")


MOVE_KINDS: tuple[str, ...] = (
    "pick", "absolute", "parent", "case", "nfd", "nfc", "literal", "nonstring",
)


class AdversarialSelector(RecordingSelector):
    """Answers with hostile names: too many, duplicates, the index, paths out of the
    memdir, another memdir's files, case and normalization variants, non-strings.

    Args:
        moves: the names to build, in order, for every request; or a mapping scope →
            moves to answer differently per memdir.
    """

    name = "adversarial"

    def __init__(self, moves: Sequence[Move] | Mapping[str, Sequence[Move]]) -> None:
        super().__init__()
        self.moves = moves

    def answer(self, request: SelectionRequest) -> SelectionResult:
        moves = self.moves.get(request.scope, ()) if isinstance(self.moves, Mapping) else self.moves
        names: list[Any] = []
        for move in moves:
            names.extend(move.build(request))
        return SelectionResult(names=tuple(names), raw_output=f"adversarial: {names!r}")


__all__ = [
    "MOVE_KINDS",
    "AdversarialSelector",
    "Answer",
    "EverythingSelector",
    "FixedSelector",
    "Move",
    "RecordingSelector",
    "ScriptedSelector",
]
