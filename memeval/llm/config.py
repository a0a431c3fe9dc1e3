"""Build the run's model door from CLI options, falling back to environment variables.

The CLI (and pytest options) call `configure(...)` once; selectors and judges built
by the registry then share that client through `get_default_client()`. Without a
call, the default client reads the same settings from the environment, so
`MEMEVAL_REPLAY=tape.jsonl memeval run --selector claude` works with no flags.
"""

from __future__ import annotations

import os
from pathlib import Path

from memeval.llm.cache import default_cache_path
from memeval.llm.cassette import Cassette
from memeval.llm.client import DEFAULT_MAX_CONCURRENCY, LLMClient
from memeval.llm.errors import LLMError

CACHE_ENV = "MEMEVAL_LLM_CACHE"  # SQLite path, or `off`
RECORD_ENV = "MEMEVAL_RECORD"  # cassette path to record into
REPLAY_ENV = "MEMEVAL_REPLAY"  # cassette path to replay from (no network)
MAX_COST_ENV = "MEMEVAL_MAX_COST"  # USD
BATCHES_ENV = "MEMEVAL_BATCHES"  # 1 to use the Message Batches API
LOG_ENV = "MEMEVAL_LLM_LOG"  # JSONL call log
CONCURRENCY_ENV = "MEMEVAL_MAX_CONCURRENCY"
OFF = frozenset({"", "0", "off", "no", "false", "none"})


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


def build_client(*, cache: str | Path | bool | None = None, record: str | Path | None = None,
                 replay: str | Path | None = None, max_cost: float | None = None,
                 prices: str | Path | None = None, batches: bool | None = None,
                 log_path: str | Path | None = None, max_concurrency: int | None = None,
                 base_url: str | None = None) -> LLMClient:
    """An LLMClient from explicit options, each falling back to its environment variable.

    Args:
        cache: SQLite path; True for the default path; False to disable. Default:
            `$MEMEVAL_LLM_CACHE`, else the default path (`off` disables).
        record: cassette to record every live exchange into (`$MEMEVAL_RECORD`).
        replay: cassette to answer from, never calling out (`$MEMEVAL_REPLAY`).
        max_cost: USD budget for the run (`$MEMEVAL_MAX_COST`).
        prices: price table path (`$MEMEVAL_PRICES`, else the bundled one).
        batches: send selector/judge calls through Message Batches (`$MEMEVAL_BATCHES`).
        log_path: JSONL log of every call (`$MEMEVAL_LLM_LOG`).
        max_concurrency: requests in flight (`$MEMEVAL_MAX_CONCURRENCY`).
        base_url: API endpoint; default the SDK's (`$ANTHROPIC_BASE_URL`).
    """
    env = os.environ
    record = record or env.get(RECORD_ENV) or None
    replay = replay or env.get(REPLAY_ENV) or None
    if record and replay:
        raise LLMError("cannot record and replay a cassette at once; pick one of "
                       "--record-cassette / --replay-cassette")
    cassette = (Cassette(replay, "replay") if replay
                else Cassette(record, "record") if record else None)
    if cache is None:
        cache = configured_cache_path() or False
    if cache is True:
        cache = default_cache_path()
    if batches is None:
        batches = env.get(BATCHES_ENV, "").strip().lower() not in OFF
    cost = max_cost if max_cost is not None else _number(MAX_COST_ENV, env.get(MAX_COST_ENV))
    concurrency = max_concurrency or int(_number(CONCURRENCY_ENV, env.get(CONCURRENCY_ENV))
                                         or DEFAULT_MAX_CONCURRENCY)
    return LLMClient(base_url=base_url, cache=cache or None, cassette=cassette,
                     max_cost=cost, prices=prices, use_batches=bool(batches),
                     log_path=log_path or env.get(LOG_ENV) or None,
                     max_concurrency=concurrency)
