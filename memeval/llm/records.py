"""What a model call returned and what it cost, as frozen records."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from memeval.usage import Usage

Source = Literal["api", "batch", "cache", "replay", "shared", "none"]

# stop reasons that mean the model finished its answer; anything else is not cached
COMPLETE_STOP_REASONS = frozenset({"end_turn", "stop_sequence", "tool_use"})


@dataclass(frozen=True)
class CallRecord:
    """One logical call through the door, successful or not.

    Args:
        key: the request's content address (with repeat index).
        model: the model asked.
        purpose: the caller's label (`selector`, `judge`).
        source: where the answer came from: the API, a batch, the cache, a cassette,
            `shared` (an identical call in flight at the same time answered it), or
            `none` when no answer was had.
        input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens:
            billed tokens (zero for cache and replay hits, which cost nothing).
        cost_usd: price of those tokens; None when the model is not in the price table.
        latency_s: wall time waiting for the model, retries included.
        request_id: the API's `request-id`, for support tickets.
        stop_reason: why the model stopped.
        error: why there is no usable answer; None on success.
    """

    key: str
    model: str
    purpose: str
    source: Source
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    request_id: str | None = None
    stop_reason: str | None = None
    error: str | None = None

    def usage(self) -> Usage:
        """This call as a `Usage` (calls counts requests sent, cached counts free answers)."""
        sent = self.source in ("api", "batch")
        return Usage(
            calls=1 if sent else 0,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens,
            cost_usd=self.cost_usd or 0.0,
            latency_s=self.latency_s,
            cached=1 if self.source in ("cache", "replay") else 0,
            unpriced=1 if sent and self.cost_usd is None else 0,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class LLMResponse:
    """The answer to one request.

    Args:
        text: the concatenated text blocks ("" when there is none).
        message: the Messages API response body as JSON (None when no answer).
        record: how the answer was obtained and what it cost.
    """

    text: str
    message: dict[str, Any] | None
    record: CallRecord

    @property
    def ok(self) -> bool:
        return self.record.error is None

    @property
    def error(self) -> str | None:
        return self.record.error

    @property
    def usage(self) -> Usage:
        return self.record.usage()


def message_text(message: dict[str, Any]) -> str:
    """Text of a Messages API response body: its text blocks joined."""
    return "".join(block.get("text", "") for block in message.get("content") or []
                   if isinstance(block, dict) and block.get("type") == "text")
