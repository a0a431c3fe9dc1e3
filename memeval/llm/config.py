"""How a run's model calls are made, as two small frozen records.

`CallTiming` is what one component's calls may take (per-attempt timeout, per-call
deadline, retries); `DoorConfig` is what the whole run shares (cache, cassette,
budget, prices, call log, batches, concurrency, the default timing).
`door_config(...)` builds one from explicit options, each falling back to its
`MEMEVAL_*` environment variable, so `MEMEVAL_REPLAY=tape.jsonl memeval run -s
claude` works with no flags. A run turns its `DoorConfig` into one `ModelAccess`
(`memeval.llm.access`) and hands it to the components that call models.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memeval.llm.cache import default_cache_path
from memeval.llm.errors import LLMError

CACHE_ENV = "MEMEVAL_LLM_CACHE"  # SQLite path, or `off`
RECORD_ENV = "MEMEVAL_RECORD"  # cassette path to record into
REPLAY_ENV = "MEMEVAL_REPLAY"  # cassette path to replay from (no network)
MAX_COST_ENV = "MEMEVAL_MAX_COST"  # USD
BATCHES_ENV = "MEMEVAL_BATCHES"  # 1 to use the Message Batches API
LOG_ENV = "MEMEVAL_LLM_LOG"  # JSONL call log
CONCURRENCY_ENV = "MEMEVAL_MAX_CONCURRENCY"
TIMEOUT_ENV = "MEMEVAL_TIMEOUT"  # seconds per attempt
DEADLINE_ENV = "MEMEVAL_DEADLINE"  # seconds per call, retries included
OFF = frozenset({"", "0", "off", "no", "false", "none"})

DEFAULT_TIMEOUT_S = 60.0  # a selector call is small; a hung connection should not stall a run
DEFAULT_DEADLINE_S = 80.0  # a whole call, retries included; a selector call takes seconds
DEFAULT_MAX_RETRIES = 4  # the SDK retries 408/409/429/5xx/529 and connection errors
DEFAULT_MAX_CONCURRENCY = 8  # in-flight requests per endpoint; under typical rate limits
DEFAULT_POLL_INTERVAL_S = 10.0  # batches take minutes; polling faster only costs requests
DEFAULT_BATCH_WAIT_S = 24 * 3600.0  # the API expires a batch after 24 hours
DEFAULT_BATCH_WINDOW_S = 2.0  # long enough for concurrent sessions' calls to meet
DEFAULT_BATCH_MAX = 10_000  # well under the API's 100 000 requests / 256 MB per batch


@dataclass(frozen=True)
class CallTiming:
    """How long one call may take, and how often it is tried.

    Args:
        timeout: seconds per HTTP attempt (the `--timeout` option, `timeout=` in a spec).
        deadline: seconds per call, every retry included (`--deadline`, `deadline=`).
        max_retries: SDK retries on 429, 529, 5xx and connection errors.
    """

    timeout: float = DEFAULT_TIMEOUT_S
    deadline: float = DEFAULT_DEADLINE_S
    max_retries: int = DEFAULT_MAX_RETRIES

    def __post_init__(self) -> None:
        if not self.timeout > 0 or not self.deadline > 0:
            raise LLMError(f"timeout={self.timeout:g}, deadline={self.deadline:g}: both "
                           "must be positive seconds")
        if self.max_retries < 0:
            raise LLMError(f"max_retries={self.max_retries}: cannot be negative")


@dataclass(frozen=True)
class DoorConfig:
    """What every model call of a run shares.

    Args:
        cache: SQLite response cache; None disables caching.
        record: cassette to record every live exchange into.
        replay: cassette to answer from, never calling out.
        max_cost: USD; calls that would pass it are not sent (BudgetExceeded).
        prices: price table added to the bundled one.
        log_path: JSONL file receiving one CallRecord per call (no headers, no key).
        batches: send calls through the Message Batches API.
        max_concurrency: requests in flight per endpoint, unless a spec's
            `concurrency=` or the server's own `/props` says otherwise.
        timing: the timing of components whose spec sets none.
        poll_interval, batch_wait, batch_window, batch_max: Message Batches pacing.
    """

    cache: Path | None = None
    record: Path | None = None
    replay: Path | None = None
    max_cost: float | None = None
    prices: Path | None = None
    log_path: Path | None = None
    batches: bool = False
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    timing: CallTiming = field(default_factory=CallTiming)
    poll_interval: float = DEFAULT_POLL_INTERVAL_S
    batch_wait: float = DEFAULT_BATCH_WAIT_S
    batch_window: float = DEFAULT_BATCH_WINDOW_S
    batch_max: int = DEFAULT_BATCH_MAX

    def __post_init__(self) -> None:
        if self.record is not None and self.replay is not None:
            raise LLMError("cannot record and replay a cassette at once; pick one of "
                           "--record-cassette / --replay-cassette")
        if self.max_concurrency < 1:
            raise LLMError(f"max_concurrency={self.max_concurrency}: at least 1")


def configured_cache_path() -> Path | None:
    """The response cache the environment asks for: `$MEMEVAL_LLM_CACHE` (None when it
    says `off`), else the default path."""
    raw = os.environ.get(CACHE_ENV)
    if raw is not None and raw.strip().lower() in OFF:
        return None
    return Path(raw).expanduser() if raw else default_cache_path()


def _number(name: str, value: str | None) -> float | None:
    if value is None or value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError as exc:
        raise LLMError(f"${name}={value!r}: expected a number") from exc


def _env_number(name: str) -> float | None:
    return _number(name, os.environ.get(name))


def _path(value: str | Path | None) -> Path | None:
    return Path(value).expanduser() if value else None


def door_config(*, cache: str | Path | bool | None = None, record: str | Path | None = None,
                replay: str | Path | None = None, max_cost: float | None = None,
                prices: str | Path | None = None, batches: bool | None = None,
                log_path: str | Path | None = None, max_concurrency: int | None = None,
                timeout: float | None = None, deadline: float | None = None) -> DoorConfig:
    """A DoorConfig from explicit options, each falling back to its environment variable.

    Args:
        cache: SQLite path; True for the default path; False to disable. Default:
            `$MEMEVAL_LLM_CACHE`, else the default path (`off` disables).
        record: cassette to record into (`$MEMEVAL_RECORD`).
        replay: cassette to answer from (`$MEMEVAL_REPLAY`).
        max_cost: USD budget for the run (`$MEMEVAL_MAX_COST`).
        prices: price table path (else the bundled one).
        batches: use Message Batches (`$MEMEVAL_BATCHES`).
        log_path: JSONL log of every call (`$MEMEVAL_LLM_LOG`).
        max_concurrency: requests in flight per endpoint (`$MEMEVAL_MAX_CONCURRENCY`).
        timeout: seconds per attempt (`$MEMEVAL_TIMEOUT`).
        deadline: seconds per call, retries included (`$MEMEVAL_DEADLINE`).
    """
    env = os.environ
    if cache is None:
        cache = configured_cache_path() or False
    if cache is True:
        cache = default_cache_path()
    if batches is None:
        batches = env.get(BATCHES_ENV, "").strip().lower() not in OFF
    cost = max_cost if max_cost is not None else _env_number(MAX_COST_ENV)
    concurrency = max_concurrency or int(_env_number(CONCURRENCY_ENV)
                                         or DEFAULT_MAX_CONCURRENCY)
    timing = CallTiming(timeout=timeout or _env_number(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S,
                        deadline=deadline or _env_number(DEADLINE_ENV) or DEFAULT_DEADLINE_S)
    return DoorConfig(cache=_path(cache) if cache else None,
                      record=_path(record or env.get(RECORD_ENV)),
                      replay=_path(replay or env.get(REPLAY_ENV)), max_cost=cost,
                      prices=_path(prices), batches=bool(batches),
                      log_path=_path(log_path or env.get(LOG_ENV)),
                      max_concurrency=concurrency, timing=timing)
