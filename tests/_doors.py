"""Test clients in one line: `open_door(url, max_retries=0, cache=path)` sorts the keywords
into the client's `DoorConfig` and `CallTiming`."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from memeval.llm import CallTiming, DoorConfig, LLMClient
from memeval.llm.endpoint import Endpoint

TIMING = {f.name for f in fields(CallTiming)}


def open_door(endpoint: Endpoint | str | None = None, *, api_key: str | None = None,
         **settings: Any) -> LLMClient:
    timing = {k: settings.pop(k) for k in list(settings) if k in TIMING}
    return LLMClient(endpoint, DoorConfig(timing=CallTiming(**timing), **settings),
                     api_key=api_key)
