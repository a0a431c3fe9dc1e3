"""A model as the answerer, and a model as the answer judge (`claude:…`, `openai:…`).

Both are prompted models like the selector and the judge: the run hands them its
`ModelAccess` (`connect`), so their calls share the run's cache, cassette, budget,
deadlines, batches and price table; their prompts are jinja2 templates named and
hashed in config.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memeval.answers._request import AnswerRequest
from memeval.llm import LLMClient, LLMRequest, LLMResponse
from memeval.llm.endpoint import Transport
from memeval.llm.prompted import PromptedModel
from memeval.llm.templates import load_prompt

PROMPTS_DIR = Path(__file__).parent / "prompts"
ANSWER_MAX_TOKENS = 256  # a short answer; the prompt asks for a few words
JUDGE_MAX_TOKENS = 256
VERDICTS = ("correct", "incorrect")
NO_REFERENCE = "(none: the question asks about something never said; declining is right)"
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)},
                   "reason": {"type": "string"}},
    "required": ["verdict", "reason"], "additionalProperties": False,
}


def context_message(request: AnswerRequest) -> str:
    """The answerer's user message: the agent's context at the turn, then the question."""
    parts = []
    if request.startup:
        parts.append(f"<startup_context>\n{request.startup}\n</startup_context>")
    parts.extend(request.reminders)  # exactly as the model receives them
    if request.conversation:
        said = "\n".join(f"<message>{m}</message>" for m in request.conversation)
        parts.append(f"<earlier_messages>\n{said}\n</earlier_messages>")
    parts.append(f"<question>\n{request.question}\n</question>")
    return "\n\n".join(parts)


def judge_message(request: AnswerRequest, answer: str) -> str:
    reference = NO_REFERENCE if request.abstention else request.reference
    return (f"<question>\n{request.question}\n</question>\n\n"
            f"<gold_answer>\n{reference}\n</gold_answer>\n\n<answer>\n{answer}\n</answer>")


def parse_verdict(text: str) -> tuple[str | None, str]:
    """(verdict, reason) from the judge's JSON answer; (None, the problem) if unusable."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"answer judge's reply is not JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict) or value.get("verdict") not in VERDICTS:
        return None, "answer judge's reply lacks a verdict of correct or incorrect"
    return str(value["verdict"]), str(value.get("reason", ""))


class _Prompted(PromptedModel):
    transport: Transport = "anthropic"
    default_prompt = "default"

    def __init__(self, model: str, *, prompt: str | Path | None = None,
                 client: LLMClient | None = None, name: str | None = None,
                 max_tokens: int = ANSWER_MAX_TOKENS, temperature: float | None = None,
                 top_p: float | None = None, seed: int | None = None,
                 base_url: str | None = None, api_key_env: str | None = None,
                 structured: str = "json_schema", price_in: float | None = None,
                 price_out: float | None = None, timeout: float | None = None,
                 deadline: float | None = None, concurrency: int | None = None) -> None:
        self.temperature, self.top_p = temperature, top_p
        if seed is not None:
            self.sampling_seed = seed
        self.set_price(price_in, price_out)
        self.set_limits(timeout, deadline, concurrency)
        self.model = model
        self.template = load_prompt(prompt or self.default_prompt, PROMPTS_DIR)
        self.system_prompt = self.template.render()
        self.max_tokens = max_tokens
        self._client = client
        self.set_endpoint(self.transport, base_url, api_key_env, structured)
        self.name = name or f"{self.spec_name}:{model}"


class ModelAnswerer(_Prompted):
    """Claude answers the question from the agent's context at the turn.

    Args:
        model: the model id (`claude:<model>`).
        prompt: a bundled prompt name (`default`) or a jinja2 template path.
        client, name, max_tokens, temperature, top_p, seed, base_url, api_key_env,
            structured, price_in, price_out, timeout, deadline, concurrency: as for
            the Claude selector (`memeval.selectors.claude.ClaudeSelector`).
    """

    def request(self, request: AnswerRequest) -> LLMRequest:
        return LLMRequest(model=self.model, max_tokens=self.max_tokens,
                          system=self.system_prompt, purpose="answer",
                          messages=({"role": "user", "content": context_message(request)},),
                          params=self.sampling())

    async def aanswer(self, request: AnswerRequest) -> LLMResponse:
        return await self.client.acomplete(self.request(request))


class OpenAIAnswerer(ModelAnswerer):
    """The same answerer on any Chat Completions server (`openai:<model>?base_url=…`)."""

    transport: Transport = "openai"


class AnswerJudge(_Prompted):
    """Claude grades an answer against the gold answer: correct or incorrect.

    A question whose right answer is to decline is correct when the answer declines.
    Parameters as for `ModelAnswerer` (`prompt` defaults to the bundled `judge`).
    """

    default_prompt = "judge"

    def request(self, request: AnswerRequest, answer: str) -> LLMRequest:
        return LLMRequest(model=self.model, max_tokens=self.max_tokens,
                          system=self.system_prompt, purpose="answer judge",
                          messages=({"role": "user", "content": judge_message(request, answer)},),
                          output_schema=VERDICT_SCHEMA, params=self.sampling(),
                          structured=self.structured)

    async def ajudge(self, request: AnswerRequest, answer: str) -> LLMResponse:
        return await self.client.acomplete(
            self.request(request, answer),
            validate=lambda text: None if parse_verdict(text)[0] else parse_verdict(text)[1])


class OpenAIAnswerJudge(AnswerJudge):
    """The answer judge on any Chat Completions server (`openai:<model>?base_url=…`)."""

    transport: Transport = "openai"
