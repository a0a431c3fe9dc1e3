"""Record / replay cassettes: a run's model exchanges in a JSONL file safe to commit.

A line holds the request key, the server it was recorded from (`endpoint`), the
request body and the response body; never HTTP headers, so no API key or auth token
can land there. Replay answers only from the file, and only for the server the
answer came from: answers recorded from memeval's loopback fake never replay as the
real API's. A line without `endpoint` (a suite's normalized stand-in cassette, or
one recorded before servers were named) replays for any server. A request the file
does not hold is reported naming the file and the fix.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from memeval.llm.errors import CassetteMiss, LLMError

CassetteMode = Literal["record", "replay"]
REDACTED = "<redacted>"


MIN_SECRET_PIECE = 8  # a run this long of a key is redacted wherever it appears


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """Redact every secret that reached `text`, whole or as any piece of at least
    `MIN_SECRET_PIECE` characters (a server may echo part of a key)."""
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if not secret:
            continue
        if len(secret) < MIN_SECRET_PIECE:
            start = text.find(secret)
            while start != -1:
                spans.append((start, start + len(secret)))
                start = text.find(secret, start + 1)
            continue
        for i in range(len(secret) - MIN_SECRET_PIECE + 1):
            piece = secret[i:i + MIN_SECRET_PIECE]
            start = text.find(piece)
            while start != -1:
                spans.append((start, start + MIN_SECRET_PIECE))
                start = text.find(piece, start + 1)
    if not spans:
        return text
    out, last = [], 0
    for start, end in sorted(spans):
        if start > last:
            out += [text[last:start], REDACTED]
        elif not out:
            out.append(REDACTED)
        last = max(last, end)
    return "".join(out) + text[last:]


def scrub_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """`scrub` on every string inside a JSON value; a string that is itself JSON (a
    model's structured answer) is scrubbed inside too, so `\\u`-escapes hide nothing."""
    if isinstance(value, str):
        text = scrub(value, secrets)
        if text.lstrip()[:1] in ("{", "[") and "\\u" in text:
            try:
                inner = json.loads(text)
            except ValueError:
                return text
            cleaned = scrub_value(inner, secrets)
            if cleaned != inner:
                return json.dumps(cleaned, ensure_ascii=False)
        return text
    if isinstance(value, dict):
        return {k: scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, secrets) for v in value]
    return value


class Cassette:
    """A JSONL file of exchanges, opened for recording or for replay.

    Args:
        path: the cassette file.
        mode: `record` appends every live exchange (keeping existing lines, so a
            rerun tops a cassette up); `replay` answers from it and never calls out.
        secrets: values to scrub before writing (the client passes its key).
    """

    def __init__(self, path: str | Path, mode: CassetteMode,
                 *, secrets: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.mode = mode
        self._secrets = secrets
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], dict[str, Any]] = {}
        if mode == "replay" and not self.path.exists():
            raise LLMError(f"{self.path}: cassette not found; record one first with "
                           "--record-cassette PATH (needs ANTHROPIC_API_KEY)")
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                self._entries[(str(entry.get("endpoint") or ""), entry["key"])] = entry
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise LLMError(f"{self.path}: line {lineno}: not a cassette entry ({exc}); "
                               "delete the line or re-record the cassette") from exc

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, endpoint: str = "") -> dict[str, Any] | None:
        """The answer recorded for `key` from `endpoint` (or from no named server)."""
        entry = self._entries.get((endpoint, key)) or self._entries.get(("", key))
        return entry["response"] if entry else None

    def require(self, key: str, body: dict[str, Any], endpoint: str = "") -> dict[str, Any]:
        """The recorded answer for `key`; CassetteMiss when it was never recorded.

        An answer recorded from another server is a miss that names both servers.
        """
        found = self.get(key, endpoint)
        if found is not None:
            return found
        recorded = sorted({e for e, k in self._entries if e and k == key})
        if recorded:
            raise CassetteMiss(
                f"{self.path}: this request was recorded from {', '.join(recorded)}, but "
                f"this run calls {endpoint}; answers never replay for another server: give "
                "the same base_url, or re-record with --record-cassette")
        raise CassetteMiss(
            f"{self.path}: no recorded answer for request {key[:12]} "
            f"(model {body.get('model')!r}); the prompt, model or scenario changed "
            "since recording: re-record with --record-cassette")

    def add(self, key: str, body: dict[str, Any], response: dict[str, Any],
            endpoint: str = "") -> None:
        """Append one exchange (recording mode only; replay never writes)."""
        if self.mode != "record":
            return
        entry = {"key": key, "request": body, "response": response}
        if endpoint:
            entry["endpoint"] = endpoint
        line = scrub(json.dumps(entry, ensure_ascii=False, sort_keys=True), self._secrets)
        with self._lock:
            if (endpoint, key) in self._entries:
                return
            self._entries[(endpoint, key)] = json.loads(line)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # one O_APPEND write per line, so processes recording together never interleave
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (line + "\n").encode("utf-8"))
            finally:
                os.close(fd)
