"""Three ways to get a JSON answer of a given shape, because servers differ in what they honour.

- `json_schema`: the API's structured output (`output_config` on the Messages API,
  `response_format` on Chat Completions). The server enforces the shape.
- `tool`: one forced tool whose input schema is the shape; the answer is the tool
  call's arguments. Works on servers with tool calling but no structured output.
- `prompt`: the shape is described in the system prompt and the answer is parsed
  leniently (the first JSON object in the text, code fences and chatter around it
  ignored). Works on any server that follows instructions.

Whatever the mode, callers get the answer as JSON text, so validators and parsers
stay the same.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from memeval.llm.records import message_text

StructuredMode = Literal["json_schema", "tool", "prompt"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("json_schema", "tool", "prompt")
TOOL_NAME = "answer"  # the one tool of `tool` mode
TOOL_DESCRIPTION = "Give your answer by calling this tool with it."


def describe_schema(schema: dict[str, Any]) -> str:
    """Our instruction appended to the system prompt in `prompt` mode."""
    shape = json.dumps(schema, indent=2, sort_keys=True)
    return ("Reply with one JSON object and nothing else (no prose, no code fence). "
            f"It must match this JSON schema:\n{shape}")


def extract_json(text: str) -> str | None:
    """The first JSON object in `text` (prose and code fences around it ignored), re-serialised.

    None when the text holds no parseable object.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        start = text.find("{", start + 1)
    return None


def shape_body(body: dict[str, Any], mode: StructuredMode) -> dict[str, Any]:
    """A Messages API body asking for its `output_config` schema the way `mode` says."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    if mode == "json_schema" or fmt.get("type") != "json_schema":
        return body
    out = {k: v for k, v in body.items() if k != "output_config"}
    schema = fmt.get("schema") or {}
    if mode == "tool":
        out["tools"] = [{"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                         "input_schema": schema}]
        out["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        return out
    note = describe_schema(schema)
    system = out.get("system")
    if system is None:
        out["system"] = note
    elif isinstance(system, str):
        out["system"] = f"{system}\n\n{note}"
    else:
        out["system"] = [*system, {"type": "text", "text": note}]
    return out


def answer_text(message: dict[str, Any], mode: StructuredMode) -> str:
    """The answer as JSON text whatever the mode: the tool's input, or the object in prose."""
    if mode == "tool":
        found = tool_input(message)
        return json.dumps(found, ensure_ascii=False) if found is not None \
            else message_text(message)
    text = message_text(message)
    if mode == "prompt":
        return extract_json(text) or text
    return text


def tool_input(message: dict[str, Any], name: str = TOOL_NAME) -> Any:
    """The input of the answer tool's call in a Messages API body, or None."""
    for block in message.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_use" \
                and block.get("name") == name:
            return block.get("input")
    return None


# Words an error names when a server refuses a structured mode, e.g. llama-cpp-python's
# HTTP 500 "Input should be 'text' or 'json_object'" for `response_format: json_schema`,
# or llama-server's 400 "tools param requires --jinja flag".
_REJECTION_WORDS: dict[StructuredMode, tuple[str, ...]] = {
    "json_schema": ("json_schema", "response_format", "json_object", "output_config",
                    "output_format", "structured output"),
    "tool": ("tool", "function"),
}
INSTEAD: dict[StructuredMode, str] = {"json_schema": "structured=tool (or structured=prompt)",
                                      "tool": "structured=prompt (or structured=json_schema)"}


def asked_mode(body: dict[str, Any]) -> StructuredMode:
    """The structured mode a wire request body (either API) asks for."""
    fmt = body.get("response_format")
    if (isinstance(fmt, dict) and fmt.get("type") == "json_schema") \
            or "output_config" in body or "output_format" in body:
        return "json_schema"
    return "tool" if body.get("tool_choice") else "prompt"


def rejects_mode(mode: StructuredMode, error_text: str) -> bool:
    """Whether an error answer to a request in `mode` says the server refuses that mode
    (retrying it would only fail again)."""
    text = error_text.lower()
    return any(word in text for word in _REJECTION_WORDS.get(mode, ()))


def rejection_message(mode: StructuredMode, detail: str) -> str:
    """Our error for a server that refused `mode`: what it said and the mode to try."""
    return (f"the server rejected structured={mode} ({detail}); this server needs "
            f"{INSTEAD[mode]} in the spec")


def ignored_tool_message(text: str) -> str | None:
    """Our problem for a forced tool answered with prose (None when a tool was called)."""
    shown = text if len(text) <= 80 else text[:77] + "..."
    return ("the server ignored the forced tool and answered prose "
            f"({shown!r}); it does not honour tool calls (llama-server needs --jinja and "
            "a chat template with tools): use structured=prompt or structured=json_schema")
