"""Output files of the model door checked before the first call, not after it was paid.

A cassette or call log that cannot be written is otherwise found at the first
answer: the call is paid, its record lost, and every rerun pays again.
"""

from __future__ import annotations

import os
from pathlib import Path

from memeval.llm.errors import LLMError


def require_appendable(path: Path, what: str, fix: str) -> None:
    """Raise `LLMError` now when `path` cannot be appended to (an empty file is left
    where none was: the door would create it at the first call anyway).

    Args:
        path: the file.
        what: what the file is, for the message (`cassette`, `call log`).
        fix: how to give a usable path instead.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
    except OSError as exc:
        raise LLMError(f"{path}: cannot write the {what} there ({exc.strerror or exc}); "
                       f"{fix}. Checked before any model call: nothing was sent") from None
