"""The side-query selector (SPEC §2.5): a separate Claude call with structured output.

One user message carries the query, the manifest and, when there are any, the
recently used tools; the system prompt comes from a jinja2 template. The model's
names are returned in its order and unfiltered: the session validates them. Any
failure (API error, refusal, output that is not the schema) is a recorded error,
never an empty pick.

The stateful variant keeps one conversation per memdir (and repeat) per session:
the first user message holds the manifest as a cached block and the first query;
each later query is a new turn. Surfaced memories leave the manifest, so it
changes nearly every turn: when the new manifest is the last one minus some lines,
the turn only names the files that are gone; when lines were added or changed, it
restates the manifest. Cache breakpoints sit on the manifest, the previous turn and
the newest turn (3 of the API's 4), so the whole history is read from the prompt
cache; restating the manifest every turn made the stateful variant cost ~10x the
stateless one.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.llm import LLMClient, LLMRequest, LLMResponse
from memeval.llm.endpoint import Transport
from memeval.llm.prompted import PromptedModel
from memeval.llm.templates import load_prompt
from memeval.memdir import MAX_SURFACED_PER_TURN
from memeval.selectors.base import SelectionRequest, SelectionResult

DEFAULT_SELECTOR_MODEL = "claude-sonnet-4-6"  # the side query's default Sonnet model
MODEL_ENV = "ANTHROPIC_DEFAULT_SONNET_MODEL"  # Claude Code's override of that default
SELECTOR_MAX_TOKENS = 256  # a short list of file names needs no more
MAX_SELECTED = MAX_SURFACED_PER_TURN  # the prompt asks for no more than the session keeps
DEFAULT_PROMPT = "conservative"
PROMPTS_DIR = Path(__file__).parent / "prompts"

SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}

# prompt caching for the stateful variant's manifest block and newest turn
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
# `- [<type>] <filename> (<iso>)...`: the filename is what precedes the timestamp
_MANIFEST_LINE = re.compile(r"^- (?:\[[^\]]*\] )?(?P<name>.+?) \([+-]?\d{4,6}-\d\d-\d\dT[^)]*Z\)")


def default_selector_model() -> str:
    """`$ANTHROPIC_DEFAULT_SONNET_MODEL` when set, else `claude-sonnet-4-6`."""
    return os.environ.get(MODEL_ENV) or DEFAULT_SELECTOR_MODEL


def tools_suffix(recent_tools: Sequence[str]) -> str:
    return f"\n\nRecently used tools: {', '.join(recent_tools)}" if recent_tools else ""


def build_user_message(query: str, manifest: str, recent_tools: Sequence[str] = ()) -> str:
    """`Query: <q>\\n\\nAvailable memories:\\n<manifest>` plus the tools line when tools exist."""
    return f"Query: {query}\n\nAvailable memories:\n{manifest}{tools_suffix(recent_tools)}"


def parse_selection(text: str) -> tuple[tuple[Any, ...], str | None]:
    """The names in an answer, or the problem that makes it unusable.

    Names are not checked against the manifest (the session does that), but the
    answer must be the schema's object with a list.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        shown = text if len(text) <= 80 else text[:77] + "..."
        return (), f"answer is not JSON ({exc.msg} at char {exc.pos}): {shown!r}"
    if not isinstance(value, dict):
        return (), f"answer is a JSON {type(value).__name__}, expected an object"
    if "selected_memories" not in value:
        return (), f"answer lacks 'selected_memories' (keys: {sorted(value)})"
    names = value["selected_memories"]
    if not isinstance(names, list):
        return (), f"'selected_memories' is a {type(names).__name__}, expected a list"
    return tuple(names), None


def _validate(text: str) -> str | None:
    return parse_selection(text)[1]


def manifest_filename(line: str) -> str:
    """The filename in a manifest line; the whole line when it is not in that format."""
    match = _MANIFEST_LINE.match(line)
    return match["name"] if match else line


def removed_lines(old: str, new: str) -> list[str] | None:
    """The lines of `old` missing from `new` when `new` is `old` minus them, else None.

    None means something was added, changed or reordered, so a note of removals
    would leave the model with a wrong manifest and the turn must restate it.
    """
    old_lines = old.split("\n") if old else []
    new_lines = new.split("\n") if new else []
    kept = set(new_lines)
    if [line for line in old_lines if line in kept] != new_lines:
        return None
    return [line for line in old_lines if line not in kept]


def removal_note(gone: Sequence[str]) -> str:
    """Our wording for memories that left the manifest since the model last saw it."""
    names = "\n".join(f"- {manifest_filename(line)}" for line in gone)
    return f"These memories are no longer available and cannot be selected:\n{names}"


def _older_breakpoints_dropped(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history keeping only the manifest's and the previous turn's breakpoints.

    The API allows four breakpoints a request and each turn adds one on its newest
    block, so older ones go. The previous turn's stays: its prefix is the one the
    last request wrote, and a read there covers the whole history without relying
    on the API's look-back from the newest breakpoint.
    """
    previous = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        content = message.get("content")
        if index in (0, previous) or not isinstance(content, list):
            out.append(message)
            continue
        blocks = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
        out.append({**message, "content": blocks})
    return out


@dataclass
class _Conversation:
    manifest: str
    messages: list[dict[str, Any]]


class ClaudeSelector(PromptedModel):
    """Claude as the memory selector.

    Args:
        model: the model id; default `default_selector_model()`.
        prompt: a bundled prompt name (`conservative`, `recall`, `staleness`) or the
            path of the user's own jinja2 template (it receives `max_memories`).
        stateful: keep one conversation per memdir per session (see module doc).
        client: the model door to use as is; a run hands one over with `connect`.
        name: the spec string this selector was built from (for reports).
        max_tokens: output cap; the reference uses 256.
        temperature, top_p: sampling, sent when given (and part of the cache key).
        seed: sampling seed (Chat Completions servers only; the Messages API has none).
        base_url: the server (default `$ANTHROPIC_BASE_URL`, then Anthropic's API).
        api_key_env: the variable holding the key (default `ANTHROPIC_API_KEY`).
        price_in, price_out: USD per million input / output tokens, for a model the
            price table lacks (else its cost is unknown).
        timeout, deadline: seconds per attempt and per call (retries included) for
            this component's calls; default the run's (`--timeout`, `--deadline`).
        concurrency: most calls in flight to this endpoint; default what the server
            states (llama.cpp's `/props`), else the run's `--concurrency`.
        structured: how the JSON answer is asked for: `json_schema` (the API's
            structured output), `tool` (a forced tool call) or `prompt` (the shape
            described in the system prompt, the answer parsed leniently).
    """

    transport: Transport = "anthropic"

    def __init__(self, model: str | None = None, *, prompt: str | Path = DEFAULT_PROMPT,
                 stateful: bool = False, client: LLMClient | None = None,
                 name: str | None = None, max_tokens: int = SELECTOR_MAX_TOKENS,
                 temperature: float | None = None, top_p: float | None = None,
                 seed: int | None = None, base_url: str | None = None,
                 api_key_env: str | None = None, structured: str = "json_schema",
                 price_in: float | None = None, price_out: float | None = None,
                 timeout: float | None = None, deadline: float | None = None,
                 concurrency: int | None = None) -> None:
        self.model = model or self._default_model()
        self.set_price(price_in, price_out)
        self.set_limits(timeout, deadline, concurrency)
        self.temperature, self.top_p, self.sampling_seed = temperature, top_p, seed
        self.template = load_prompt(prompt, PROMPTS_DIR)
        self.system_prompt = self.template.render(max_memories=MAX_SELECTED)
        self.stateful = stateful
        self.max_tokens = max_tokens
        self._client = client
        self.set_endpoint(self.transport, base_url, api_key_env, structured)
        self.name = name or self._default_name()
        self._conversations: dict[tuple[str, int], _Conversation] = {}
        self._lock = threading.Lock()

    def _default_name(self) -> str:
        options = []
        if self.template.name != DEFAULT_PROMPT:
            options.append(f"prompt={self.template.name}")
        if self.stateful:
            options.append("stateful=1")
        return f"{self.spec_name}:{self.model}" + ("?" + "&".join(options) if options else "")

    def _default_model(self) -> str:
        return default_selector_model()

    def config(self) -> dict[str, Any]:
        """What to write into a run's config.json."""
        return {"selector": self.name, "model": self.model, "prompt": self.template.name,
                "prompt_hash": self.prompt_hash, "stateful": self.stateful,
                "max_tokens": self.max_tokens, "schema": SELECTION_SCHEMA,
                **self.endpoint_config()}

    # -- requests -------------------------------------------------------------------------
    def _llm_request(self, messages: Sequence[dict[str, Any]]) -> LLMRequest:
        return LLMRequest(model=self.model, max_tokens=self.max_tokens,
                          messages=tuple(messages), system=self.system_prompt,
                          output_schema=SELECTION_SCHEMA, purpose="selector",
                          params=self.sampling(), structured=self.structured)

    def build_request(self, request: SelectionRequest) -> LLMRequest:
        """The stateless side query for `request`."""
        text = build_user_message(request.query, request.manifest, request.recent_tools)
        return self._llm_request([{"role": "user", "content": text}])

    def _stateful_messages(self, request: SelectionRequest) -> list[dict[str, Any]]:
        conversation = self._conversations.get(self._key(request))
        if conversation is None:
            return [{"role": "user", "content": [
                {"type": "text", "text": f"Available memories:\n{request.manifest}",
                 "cache_control": CACHE_CONTROL},
                {"type": "text",
                 "text": f"Query: {request.query}{tools_suffix(request.recent_tools)}"},
            ]}]
        query = f"Query: {request.query}{tools_suffix(request.recent_tools)}"
        gone = removed_lines(conversation.manifest, request.manifest)
        if gone is None:  # added or changed lines: the model needs the whole list again
            text = build_user_message(request.query, request.manifest, request.recent_tools)
        elif gone:
            text = f"{removal_note(gone)}\n\n{query}"
        else:
            text = query
        newest = {"role": "user",
                  "content": [{"type": "text", "text": text, "cache_control": CACHE_CONTROL}]}
        return [*_older_breakpoints_dropped(conversation.messages), newest]

    @staticmethod
    def _key(request: SelectionRequest) -> tuple[str, int]:
        return str(request.memory_dir), request.repeat

    def reset(self, memory_dir: Path | str | None = None) -> None:
        """Forget stateful conversations (all, or one memdir's), as compaction does."""
        with self._lock:
            if memory_dir is None:
                self._conversations.clear()
            else:
                for key in [k for k in self._conversations if k[0] == str(memory_dir)]:
                    del self._conversations[key]

    def _result(self, request: SelectionRequest, llm_request: LLMRequest,
                response: LLMResponse) -> SelectionResult:
        if not response.ok:
            return SelectionResult.failure(f"{self.spec_name} selector: {response.error}",
                                           raw_output=response.text or None,
                                           usage=response.usage)
        names, problem = parse_selection(response.text)
        if problem:  # validated by the client already; kept for answers from old caches
            return SelectionResult.failure(f"{self.spec_name} selector: {problem}",
                                           raw_output=response.text, usage=response.usage)
        if self.stateful:  # the turn joins the conversation only once it succeeded
            with self._lock:
                self._conversations[self._key(request)] = _Conversation(
                    manifest=request.manifest,  # the latest manifest the model has seen
                    messages=[*llm_request.messages,
                              {"role": "assistant", "content": response.text}])
        return SelectionResult(names=names, raw_output=response.text, usage=response.usage)

    def _prepare(self, request: SelectionRequest) -> LLMRequest:
        if self.stateful:
            with self._lock:
                return self._llm_request(self._stateful_messages(request))
        return self.build_request(request)

    # -- the Selector protocol ----------------------------------------------------------
    def select(self, request: SelectionRequest) -> SelectionResult:
        llm_request = self._prepare(request)
        response = self.client.complete(llm_request, repeat=request.repeat, validate=_validate)
        return self._result(request, llm_request, response)

    async def aselect(self, request: SelectionRequest) -> SelectionResult:
        llm_request = self._prepare(request)
        response = await self.client.acomplete(llm_request, repeat=request.repeat,
                                               validate=_validate)
        return self._result(request, llm_request, response)

    def select_many(self, requests: Sequence[SelectionRequest]) -> list[SelectionResult]:
        """Answer many independent side queries at once (Message Batches when enabled).

        A stateful selector answers in order instead, since each turn builds on the last.
        """
        if self.stateful:
            return [self.select(r) for r in requests]
        llm_requests = [self.build_request(r) for r in requests]
        responses = self.client.run_batch(
            [(lr, r.repeat) for lr, r in zip(llm_requests, requests, strict=True)],
            validate=_validate)
        return [self._result(r, lr, resp)
                for r, lr, resp in zip(requests, llm_requests, responses, strict=True)]



class OpenAISelector(ClaudeSelector):
    """The same side query sent to any Chat Completions server: OpenAI, Ollama, vLLM,
    llama.cpp, LM Studio, OpenRouter... (`openai:<model>?base_url=...`; needs
    `pip install 'openai>=1.40'`). Its key is read from `$OPENAI_API_KEY` or the
    variable `api_key_env` names; a server other than OpenAI's needs none."""

    transport: Transport = "openai"

    def _default_model(self) -> str:
        raise ValueError("an openai selector needs its model: openai:<model>, e.g. "
                         "openai:gpt-5-mini or openai:qwen3:8b?base_url=http://localhost:11434/v1")
