"""A model request as plain data, and the content address that caches and cassettes use."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from memeval.jsonenc import canonical_json
from memeval.llm.structured import StructuredMode, shape_body

KEY_VERSION = 1  # bump when the key layout changes, so old caches stop matching


@dataclass(frozen=True, eq=False)
class LLMRequest:
    """Everything that decides a Messages API answer.

    Args:
        model: model id, e.g. `claude-sonnet-4-6`.
        max_tokens: output cap.
        messages: Messages API `messages`, as JSON-ready dicts.
        system: system prompt text or content blocks; None for none.
        output_schema: JSON schema for structured output (`output_config.format`).
        params: any other Messages API parameters (temperature, metadata, ...).
        purpose: a label for logs and reports (`selector`, `judge`); not sent, not keyed.
        structured: how `output_schema` is asked for (`json_schema`, `tool`, `prompt`;
            see `memeval.llm.structured`).
    """

    model: str
    max_tokens: int
    messages: tuple[dict[str, Any], ...]
    system: str | tuple[dict[str, Any], ...] | None = None
    output_schema: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    purpose: str = ""
    structured: StructuredMode = "json_schema"

    def to_params(self) -> dict[str, Any]:
        """The JSON body of `POST /v1/messages` (and of one batch entry)."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                "messages": [dict(m) for m in self.messages]}
        if self.system is not None:
            body["system"] = (self.system if isinstance(self.system, str)
                              else [dict(b) for b in self.system])
        if self.output_schema is not None:
            body["output_config"] = {"format": {"type": "json_schema",
                                                "schema": self.output_schema}}
        body.update(self.params)
        return shape_body(body, self.structured)

    def key(self, repeat: int = 0) -> str:
        """Content address of this request's `repeat`-th answer (64 hex digits)."""
        payload = canonical_json({"v": KEY_VERSION, "body": self.to_params(), "repeat": repeat})
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def input_chars(self) -> int:
        """Characters of input, for a rough pre-call cost estimate."""
        return len(canonical_json({"s": self.system, "m": list(self.messages)}))
