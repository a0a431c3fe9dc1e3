"""What a server says about itself: how many requests it serves at once, and whether
it calls tools. llama.cpp's `llama-server` states both at `GET /props`
(`total_slots`, `chat_template_caps.supports_tool_calls`); a run asks once, before
any call, and takes the slots as its concurrency for that endpoint unless the spec
sets `concurrency=`. Servers that do not answer (most others) state nothing.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from typing import Any

from memeval.llm.endpoint import Endpoint

PROPS_TIMEOUT_S = 2.0  # a server on this machine answers at once; a remote one may not


@dataclass(frozen=True)
class ServerProps:
    """What a server stated; None where it said nothing."""

    total_slots: int | None = None
    supports_tool_calls: bool | None = None


def props_url(endpoint: Endpoint) -> str:
    """`/props` at the server's root (an OpenAI-style base URL ends in `/v1`)."""
    url = endpoint.url
    return (url[: -len("/v1")] if url.endswith("/v1") else url) + "/props"


def _tool_calls(data: dict[str, Any]) -> bool | None:
    caps = data.get("chat_template_caps")
    found = caps.get("supports_tool_calls") if isinstance(caps, dict) else None
    if found is None:
        found = data.get("supports_tool_calls")
    return found if isinstance(found, bool) else None


def server_props(endpoint: Endpoint) -> ServerProps:
    """Ask a Chat Completions server other than the providers' own what it can take
    (never raises); llama.cpp's servers are reached through that API."""
    if endpoint.public or endpoint.transport != "openai":
        return ServerProps()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
    try:
        with opener.open(props_url(endpoint), timeout=PROPS_TIMEOUT_S) as answer:
            data = json.loads(answer.read(1_000_000))
    except (OSError, ValueError):  # no /props, not JSON, not there: it stated nothing
        return ServerProps()
    if not isinstance(data, dict):
        return ServerProps()
    slots = data.get("total_slots")
    fits = isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1
    return ServerProps(total_slots=slots if fits else None,
                       supports_tool_calls=_tool_calls(data))
