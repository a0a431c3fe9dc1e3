"""What every model-backed component (selector, judge) has alike: the server it talks to,
its sampling parameters, and a rendered system prompt named in config.json."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memeval.llm.access import ModelAccess
from memeval.llm.client import LLMClient
from memeval.llm.config import CallTiming, door_config
from memeval.llm.endpoint import ANTHROPIC, Endpoint, Transport
from memeval.llm.openai_chat import require_openai
from memeval.llm.prices import ModelPrice
from memeval.llm.structured import STRUCTURED_MODES, StructuredMode
from memeval.llm.templates import PromptTemplate, text_hash


class PromptedModel:
    """Mixin; the subclass sets `template`, `system_prompt` and `_client` and calls
    `set_endpoint` in `__init__`.

    A run hands the component its client with `connect(access)`: the access's client
    for the component's endpoint, sharing the run's cache, cassette and budget. A
    component given `client=` keeps that one; one used on its own, never connected,
    builds an access of its own from the `MEMEVAL_*` environment on first use.
    """

    template: PromptTemplate
    system_prompt: str
    _client: LLMClient | None
    model: str

    temperature: float | None = None
    top_p: float | None = None
    sampling_seed: int | None = None
    endpoint: Endpoint = ANTHROPIC
    structured: StructuredMode = "json_schema"
    price: ModelPrice | None = None
    timeout: float | None = None  # the spec's seconds per attempt (None: the run's)
    deadline: float | None = None  # the spec's seconds per call (None: the run's)
    concurrency: int | None = None  # the spec's cap on calls in flight to its endpoint

    def set_limits(self, timeout: float | None, deadline: float | None,
                   concurrency: int | None) -> None:
        """Keep the spec's time limits and concurrency (None: the run's)."""
        for name, value in (("timeout", timeout), ("deadline", deadline)):
            if value is not None and not value > 0:
                raise ValueError(f"{name}={value}: give a positive number of seconds")
        if concurrency is not None and concurrency < 1:
            raise ValueError(f"concurrency={concurrency}: at least 1 call at a time")
        self.timeout, self.deadline, self.concurrency = timeout, deadline, concurrency

    def timing(self, default: CallTiming) -> CallTiming:
        """The run's timing with this spec's own limits over it."""
        own = {k: float(v) for k, v in (("timeout", self.timeout), ("deadline", self.deadline))
               if v is not None}
        return replace(default, **own) if own else default

    def set_price(self, price_in: float | None, price_out: float | None) -> None:
        """A price for the model, USD per million tokens, when the table has none (a
        local or new model); both or neither."""
        if (price_in is None) != (price_out is None):
            raise ValueError("give both price_in and price_out (USD per million tokens)")
        if price_in is None or price_out is None:
            return
        if price_in < 0 or price_out < 0:
            raise ValueError("price_in and price_out cannot be negative")
        self.price = ModelPrice(input=price_in, output=price_out, cache_write=price_in,
                                cache_read=price_in)

    def set_endpoint(self, transport: Transport, base_url: str | None,
                     api_key_env: str | None, structured: str) -> None:
        """Check and keep where calls go; a Claude spec that cannot reach a Claude model,
        or a seed the Messages API has no field for, fails here, before any call."""
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured={structured!r}: use one of "
                             f"{', '.join(STRUCTURED_MODES)}")
        self.structured = structured  # type: ignore[assignment]
        self.endpoint = Endpoint(transport, base_url, api_key_env)
        if transport == "openai":
            require_openai()  # a missing extra is a spec error, not a run of failed calls
        if transport == "anthropic" and self._client is None and self.endpoint.public \
                and not self.model.startswith("claude"):
            raise ValueError(f"{self.model!r} is not a Claude model, and Anthropic's API "
                             f"serves only those; for another provider write "
                             f"openai:{self.model}?base_url=URL")
        if transport == "anthropic" and self.sampling_seed is not None:
            raise ValueError("the Messages API has no sampling seed; drop seed= or use an "
                             "openai: spec")

    @property
    def spec_name(self) -> str:
        """`claude` or `openai`: the spec name, for error messages."""
        return "openai" if self.endpoint.transport == "openai" else "claude"

    def sampling(self) -> dict[str, Any]:
        """Request parameters that set sampling, when the spec gave them."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = float(self.temperature)
        if self.top_p is not None:
            params["top_p"] = float(self.top_p)
        if self.sampling_seed is not None:
            params["seed"] = int(self.sampling_seed)
        return params

    def connect(self, access: ModelAccess) -> None:
        """Use the run's `access` for every call: its client for this endpoint."""
        self._client = LLMClient.of(access, self.endpoint, self.timing(access.config.timing))
        if self.concurrency is not None:
            access.set_capacity(self.endpoint, self.concurrency,
                                f"concurrency={self.concurrency} in the spec")
        if self.price is not None:
            access.use_price(self.model, self.price)

    @property
    def client(self) -> LLMClient:
        """The client calls go through (see the class docstring for where it comes from)."""
        if self._client is None:
            self.connect(ModelAccess(door_config()))
        elif self.price is not None and self._client.prices.price_for(self.model) != self.price:
            self._client.access.use_price(self.model, self.price)  # a client given as is
        assert self._client is not None
        return self._client

    def endpoint_config(self) -> dict[str, Any]:
        """Where calls went and how, for config.json (the key's variable, never the key)."""
        timing = self._client.timing if self._client is not None \
            else self.timing(CallTiming())
        return {"transport": self.endpoint.transport, "base_url": self.endpoint.base_url,
                "api_key_env": self.endpoint.key_env, "structured": self.structured,
                "sampling": self.sampling(), "timeout": timing.timeout,
                "deadline": timing.deadline,
                "concurrency": self._client.max_concurrency if self._client is not None
                else self.concurrency}

    @property
    def prompt_name(self) -> str:
        """The bundled prompt name or the template path, for config.json."""
        return self.template.name

    @property
    def prompt_hash(self) -> str:
        """Hash of the rendered system prompt, so results name the exact prompt used."""
        return text_hash(self.system_prompt)
