"""What every Claude-backed component (selector, judge) has alike: a model door that
defaults to the process-wide one, and a rendered system prompt named in config.json."""

from __future__ import annotations

from memeval.llm import LLMClient, get_default_client
from memeval.llm.templates import PromptTemplate, text_hash


class PromptedModel:
    """Mixin; the subclass sets `template`, `system_prompt` and `_client` in `__init__`.

    The door is looked up on each use, not at construction, so a component built before
    `set_default_client` still talks through the configured door.
    """

    template: PromptTemplate
    system_prompt: str
    _client: LLMClient | None

    temperature: float | None = None

    def sampling(self) -> dict[str, float]:
        """Request parameters that set sampling, when the spec gave them."""
        return {} if self.temperature is None else {"temperature": float(self.temperature)}

    @property
    def client(self) -> LLMClient:
        return self._client or get_default_client()

    @property
    def prompt_name(self) -> str:
        """The bundled prompt name or the template path, for config.json."""
        return self.template.name

    @property
    def prompt_hash(self) -> str:
        """Hash of the rendered system prompt, so results name the exact prompt used."""
        return text_hash(self.system_prompt)
