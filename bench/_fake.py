"""Point memeval's model door at a FakeMessagesServer for the length of a benchmark."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from memeval.llm import set_default_client
from memeval.testing import FakeMessagesServer


@contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (or, for None, unset) environment variables, restoring them afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        set_default_client(None)  # the next benchmark builds its own door


@contextmanager
def fake_api(**server_args: Any) -> Iterator[FakeMessagesServer]:
    """A running loopback Messages API that `memeval run -s claude` will talk to."""
    with FakeMessagesServer(**server_args) as server, environment({
        "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "offline-bench",
        "ANTHROPIC_AUTH_TOKEN": None, "MEMEVAL_REPLAY": None, "MEMEVAL_RECORD": None,
        "MEMEVAL_BATCHES": None, "MEMEVAL_MAX_COST": None,
    }):
        yield server
