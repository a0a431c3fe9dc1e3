"""What compaction puts back: the recently read files (Claude Code's post-compact restore).

Compaction clears the read-file state, then reads back the five entries with the
newest timestamps, leaving out the session's plan file and every memory type's
instruction or index file. A file read back is in the read-file state again, so a
memory surfaced or read just before a compaction is still "already read" after it.
This module decides which files come back and how; the Session applies it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memeval.memdir.nodepath import expand_path
from memeval.memdir.readfile import read_text, split_range
from memeval.memdir.text import utf16_len
from memeval.session.filestate import FileStateEntry, ReadFileState

MAX_FILES_TO_RESTORE = 5
MAX_TOKENS_PER_FILE = 5_000  # over this a file comes back as a reference only
RESTORE_TOKEN_BUDGET = 50_000  # restored attachments are kept while their sum fits

RestoreOutcome = Literal["restored", "reference", "unreadable", "over-budget"]


@dataclass(frozen=True)
class RestoredFile:
    """One of the newest entries compaction tried to read back.

    Args:
        path: its key in the read-file state.
        outcome: `restored` (read and put back), `reference` (over the per-file
            token limit: only its name is shown, not put back), `unreadable` (gone
            or not a file: dropped), `over-budget` (read and put back, but its
            attachment did not fit the restore budget).
        tokens: the estimate that decided it (0 when unreadable).
    """

    path: str
    outcome: RestoreOutcome
    tokens: int = 0

    @property
    def put_back(self) -> bool:
        """Whether the read left the file in the read-file state again."""
        return self.outcome in ("restored", "over-budget")

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "outcome": self.outcome, "tokens": self.tokens}


def estimate_tokens(text: str) -> int:
    """The system's rough estimate: UTF-16 length / 4, rounded as `Math.round` does."""
    return math.floor(utf16_len(text) / 4 + 0.5)


def _serialized_tokens(path: str, content: str | None) -> int:
    # The budget is measured on the attachment as JSON; the path and the escaped text
    # are what vary between files (the envelope's ids and timestamps are left out).
    payload = {"filename": path} if content is None else {"filename": path, "content": content}
    return estimate_tokens(json.dumps(payload, ensure_ascii=False))


def restore_candidates(
    entries: Sequence[tuple[str, FileStateEntry]], excluded: Iterable[str],
    cwd: str, home: str,
) -> list[str]:
    """The keys compaction tries to read back: newest timestamp first (ties keep the
    state's most-recently-used-first order), excluded paths left out, at most five.

    Args:
        entries: the read-file state before compaction, most recently used first.
        excluded: expanded paths never restored (plan file, instruction and index
            files of every memory type).
        cwd: what a relative key would be expanded against.
        home: what `~` means.
    """
    skip = set(excluded)
    eligible = [(key, entry) for key, entry in entries
                if expand_path(key, cwd, home) not in skip]
    eligible.sort(key=lambda item: item[1].timestamp, reverse=True)
    return [key for key, _ in eligible[:MAX_FILES_TO_RESTORE]]


def restore_recent_files(
    before: ReadFileState, state: ReadFileState, excluded: Iterable[str], *,
    cwd: str, home: str,
) -> tuple[RestoredFile, ...]:
    """Read back the newest entries of `before` into the (cleared) `state`.

    Each is read as the file-read tool reads it: a file over `MAX_TOKENS_PER_FILE`
    estimated tokens comes back as a reference and is not put back; an unreadable
    one is dropped; the others are put back under their expanded path with the
    file's mtime in whole ms. Restored attachments are then kept in order while
    their estimated total stays within `RESTORE_TOKEN_BUDGET` (a file whose
    attachment does not fit was still read, so it stays in the state).
    """
    results: list[RestoredFile] = []
    used = 0
    for key in restore_candidates(before.newest_first(), excluded, cwd, home):
        path = expand_path(key, cwd, home)
        try:
            raw, mtime_ms = read_text(path)
        except (OSError, ValueError):
            results.append(RestoredFile(key, "unreadable"))
            continue
        lines, _, _ = split_range(raw)
        content = "\n".join(lines)
        if estimate_tokens(content) > MAX_TOKENS_PER_FILE:
            tokens = _serialized_tokens(key, None)
            outcome: RestoreOutcome = "reference"
        else:
            state.set(path, FileStateEntry("restored", float(math.floor(mtime_ms))))
            tokens = _serialized_tokens(key, content)
            outcome = "restored"
        if used + tokens <= RESTORE_TOKEN_BUDGET:
            used += tokens
        elif outcome == "restored":
            outcome = "over-budget"
        results.append(RestoredFile(key, outcome, tokens))
    return tuple(results)
