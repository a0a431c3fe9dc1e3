"""Chat Completions at the edge: OpenAI and every server that speaks its API.

Ollama, vLLM, llama.cpp's server, LM Studio, SGLang, OpenRouter, Together, Groq and
LiteLLM proxies all serve `/v1/chat/completions`. The official `openai` SDK (the
optional extra `memeval[openai]`) talks to them. This module only translates: a
Messages API request body in, a Messages API response body out, so the cache,
cassettes, budget, records and report never learn which API answered.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from memeval.llm.errors import LLMError

INSTALL_HINT = "pip install 'openai>=1.40'"  # the openai extra of memeval-harness

# finish_reason -> the Messages API stop_reason the rest of memeval reads
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                "function_call": "tool_use", "content_filter": "refusal"}


def require_openai() -> Any:
    """The `openai` module, or an LLMError saying how to install it."""
    try:
        return importlib.import_module("openai")
    except ImportError as exc:
        raise LLMError(f"openai: specs need the openai SDK ({exc}); install it with: "
                       f"{INSTALL_HINT}") from None


def _text(content: Any) -> str:
    """Messages API content (a string or blocks) as one chat message string."""
    if isinstance(content, str):
        return content
    return "\n\n".join(str(b.get("text", "")) for b in content or []
                       if isinstance(b, dict) and b.get("type") == "text")


def chat_body(body: dict[str, Any], *, official: bool) -> dict[str, Any]:
    """A Messages API request body as a Chat Completions request body.

    The system prompt and text blocks become chat messages (cache breakpoints are
    dropped: these servers cache prefixes on their own), `output_config`'s schema
    becomes `response_format`, the forced answer tool a forced function.

    Args:
        body: what `LLMRequest.to_params()` returns.
        official: the server is OpenAI's own API, whose newer models reject
            `max_tokens` in favour of `max_completion_tokens`.
    """
    rest = dict(body)
    messages: list[dict[str, Any]] = []
    system = rest.pop("system", None)
    if system is not None:
        messages.append({"role": "system", "content": _text(system)})
    for message in rest.pop("messages", []):
        messages.append({"role": message.get("role", "user"),
                         "content": _text(message.get("content"))})
    out: dict[str, Any] = {"model": rest.pop("model"), "messages": messages}
    cap = rest.pop("max_tokens", None)
    if cap is not None:
        out["max_completion_tokens" if official else "max_tokens"] = cap
    fmt = (rest.pop("output_config", None) or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": fmt.get("schema") or {}, "strict": True}}
    tools = rest.pop("tools", None)
    if tools:
        out["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t.get("input_schema") or {}}} for t in tools]
    choice = rest.pop("tool_choice", None)
    if isinstance(choice, dict) and choice.get("type") == "tool":
        out["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    if "stop_sequences" in rest:
        out["stop"] = rest.pop("stop_sequences")
    out.update(rest)  # temperature, top_p, seed pass through under the same names
    return out


def message_body(completion: dict[str, Any], max_tokens: int | None = None) -> dict[str, Any]:
    """A Chat Completions response body as a Messages API response body.

    Text becomes a text block, a function call a `tool_use` block (arguments that are
    not JSON stay text, so validation names them), `finish_reason` becomes
    `stop_reason`, and cached prompt tokens count as cache reads. A tool call that
    used all of `max_tokens` is a cut answer (`max_tokens`), whatever the server says:
    llama-cpp-python reports one as `finish_reason: tool_calls`.
    """
    choices = completion.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    reply = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    if reply.get("content"):
        content.append({"type": "text", "text": str(reply["content"])})
    for call in reply.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        try:
            content.append({"type": "tool_use", "id": call.get("id", ""),
                            "name": function.get("name", ""), "input": json.loads(arguments)})
        except (json.JSONDecodeError, TypeError):
            content.append({"type": "text", "text": str(arguments)})
    # servers that invent their own finish reasons (`eos`, none at all) finished normally
    stop = "refusal" if reply.get("refusal") else \
        STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn")
    usage = completion.get("usage") or {}
    spent = usage.get("completion_tokens")
    if stop == "tool_use" and max_tokens and isinstance(spent, int) and spent >= max_tokens:
        stop = "max_tokens"
    prompt, cached = usage.get("prompt_tokens"), \
        (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    uncached = prompt - cached if isinstance(prompt, int) and isinstance(cached, int) \
        else prompt  # a broken figure goes on to the usage check, which names it
    return {"id": completion.get("id", ""), "type": "message", "role": "assistant",
            "model": completion.get("model", ""), "content": content, "stop_reason": stop,
            "usage": {"input_tokens": uncached,
                      "output_tokens": usage.get("completion_tokens") or 0,
                      "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}}
