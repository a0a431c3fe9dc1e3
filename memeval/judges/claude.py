"""Claude as the judge: a verdict per surfaced memory, with a one-sentence reason.

Structured output carries the verdicts; a verdict that is missing or cannot be
parsed is `unscored` with its reason, never counted as `irrelevant`. Position bias
is controlled: memories are shown shuffled (seeded per turn, so reruns agree) or in
both orders, where a verdict that flips with the order is `unscored`. The mode and
seed are part of `config()`, so results say how they were judged.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from memeval.judges.base import Judgement, JudgeRequest, MemoryVerdict
from memeval.llm import LLMClient, LLMRequest, LLMResponse
from memeval.llm.endpoint import Transport
from memeval.llm.prompted import PromptedModel
from memeval.llm.templates import load_prompt
from memeval.usage import ZERO_USAGE, Usage

DEFAULT_JUDGE_MODEL = "claude-sonnet-4-6"
MODEL_ENV = "MEMEVAL_JUDGE_MODEL"  # overrides the default judge model
JUDGE_MAX_TOKENS = 2048  # five verdicts plus up to 200 candidate grades fit comfortably
DEFAULT_PROMPT = "default"
PROMPTS_DIR = Path(__file__).parent / "prompts"
GRADES = ("relevant", "acceptable", "irrelevant")
MISSING_CONTENT = "(content not available)"

Order = Literal["shuffle", "both", "given"]

_VERDICT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {"key": {"type": "string"},
                   "verdict": {"type": "string", "enum": list(GRADES)},
                   "reason": {"type": "string"}},
    "required": ["key", "verdict", "reason"],
    "additionalProperties": False,
}


def judge_schema(grade_candidates: bool) -> dict[str, Any]:
    """The structured-output schema: `verdicts`, plus `candidates` when grading recall."""
    properties: dict[str, Any] = {"verdicts": {"type": "array", "items": _VERDICT_ITEM}}
    if grade_candidates:
        properties["candidates"] = {"type": "array", "items": _VERDICT_ITEM}
    return {"type": "object", "properties": properties, "required": sorted(properties),
            "additionalProperties": False}


def build_judge_message(request: JudgeRequest, selected: Sequence[str],
                        candidates: Sequence[str] | None) -> str:
    """The user message: query, manifest, chosen memories in full, candidates if graded."""
    parts = [f"<query>\n{request.query}\n</query>",
             f"<manifest>\n{request.manifest}\n</manifest>"]
    if selected:
        memories = "\n".join(
            f'<memory key="{key}">\n{request.contents.get(key, MISSING_CONTENT)}\n</memory>'
            for key in selected)
        parts.append(f"Chosen memories (grade each):\n{memories}")
    else:
        parts.append("Chosen memories: none.")
    if candidates is not None:
        listed = "\n".join(f'<candidate key="{key}">{request.descriptions.get(key, "")}'
                           "</candidate>" for key in candidates)
        parts.append(f"All memories in the list (grade each by its description):\n{listed}")
    return "\n\n".join(parts)


def parse_verdicts(text: str, field: str) -> tuple[dict[str, MemoryVerdict], str | None]:
    """Verdicts by key from one answer field, or the problem that makes the answer unusable."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"judge answer is not JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict) or not isinstance(value.get(field), list):
        return {}, f"judge answer lacks a '{field}' list"
    out: dict[str, MemoryVerdict] = {}
    for item in value[field]:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            continue
        key, grade = item["key"], item.get("verdict")
        reason = str(item.get("reason", ""))
        if grade in GRADES:
            out.setdefault(key, MemoryVerdict(key, grade, reason))
        else:
            out.setdefault(key, MemoryVerdict(key, "unscored",
                                              f"judge answered {grade!r}, not a verdict"))
    return out, None


class ClaudeJudge(PromptedModel):
    """Grades each surfaced memory (and optionally every candidate) with Claude.

    Args:
        model: model id; default `$MEMEVAL_JUDGE_MODEL` or `claude-sonnet-4-6`.
        prompt: a bundled prompt name (`default`) or a jinja2 template path (it
            receives `grade_candidates`).
        grade_candidates: also grade every candidate by description, so recall can be
            judged without gold labels.
        order: `shuffle` (seeded per turn), `both` (forward and reversed; order-flipping
            verdicts become `unscored`) or `given` (selection order, no control).
        seed: shuffle seed.
        client: the model door to use as is; a run hands one over with `connect`.
        name: the spec string this judge was built from.
        max_tokens: output cap.
        temperature, top_p: sampling, sent when given (and part of the cache key).
        timeout, deadline: seconds per attempt and per call (retries included) for
            this component's calls; default the run's (`--timeout`, `--deadline`).
        concurrency: most calls in flight to this endpoint; default what the server
            states (llama.cpp's `/props`), else the run's `--concurrency`.
        base_url, api_key_env, structured, price_in, price_out: where calls go, how
            the JSON answer is asked for and the model's price, as for the selector
            (`memeval.selectors.claude.ClaudeSelector`).
    """

    transport: Transport = "anthropic"

    def __init__(self, model: str | None = None, *, prompt: str | Path = DEFAULT_PROMPT,
                 grade_candidates: bool = False, order: Order = "shuffle", seed: int = 0,
                 client: LLMClient | None = None, name: str | None = None,
                 max_tokens: int = JUDGE_MAX_TOKENS, temperature: float | None = None,
                 top_p: float | None = None, base_url: str | None = None,
                 api_key_env: str | None = None, structured: str = "json_schema",
                 price_in: float | None = None, price_out: float | None = None,
                 timeout: float | None = None, deadline: float | None = None,
                 concurrency: int | None = None) -> None:
        self.temperature, self.top_p = temperature, top_p
        self.set_price(price_in, price_out)
        self.set_limits(timeout, deadline, concurrency)
        if self.transport == "openai":
            self.sampling_seed = seed  # Chat Completions servers take it as sampling seed too
        if order not in ("shuffle", "both", "given"):
            raise ValueError(f"order {order!r}: use shuffle, both or given")
        self.model = model or self._default_model()
        self.template = load_prompt(prompt, PROMPTS_DIR)
        self.grade_candidates = grade_candidates
        self.system_prompt = self.template.render(grade_candidates=grade_candidates)
        self.order = order
        self.seed = seed
        self.max_tokens = max_tokens
        self._client = client
        self.set_endpoint(self.transport, base_url, api_key_env, structured)
        self.name = name or f"{self.spec_name}:{self.model}"

    def _default_model(self) -> str:
        return os.environ.get(MODEL_ENV) or DEFAULT_JUDGE_MODEL

    def config(self) -> dict[str, Any]:
        """What to write into a run's config.json, including the order control."""
        return {"judge": self.name, "model": self.model, "prompt": self.template.name,
                "prompt_hash": self.prompt_hash, "grade_candidates": self.grade_candidates,
                "order": self.order, "seed": self.seed, "max_tokens": self.max_tokens,
                **self.endpoint_config()}

    # -- building and reading calls -------------------------------------------------------
    def presentations(self, request: JudgeRequest) -> list[tuple[list[str], list[str] | None]]:
        """The (memories, candidates) orders shown to the model: one, or two for `both`."""
        selected = list(dict.fromkeys(request.selected))  # a duplicate is graded once
        candidates = list(request.candidates) if self.grade_candidates else None
        if self.order == "given":
            return [(selected, candidates)]
        if self.order == "both":
            return [(selected, candidates),
                    (selected[::-1], candidates[::-1] if candidates is not None else None)]
        rng = random.Random(f"{self.seed}:{request.turn_id}")
        shuffled = rng.sample(selected, len(selected))
        mixed = rng.sample(candidates, len(candidates)) if candidates is not None else None
        return [(shuffled, mixed)]

    def build_requests(self, request: JudgeRequest) -> list[LLMRequest]:
        return [LLMRequest(model=self.model, max_tokens=self.max_tokens,
                           system=self.system_prompt, purpose="judge",
                           messages=({"role": "user", "content":
                                      build_judge_message(request, shown, cands)},),
                           output_schema=judge_schema(self.grade_candidates),
                           params=self.sampling(), structured=self.structured)
                for shown, cands in self.presentations(request)]

    def _validate(self, text: str) -> str | None:
        problem = parse_verdicts(text, "verdicts")[1]
        if problem is None and self.grade_candidates:
            problem = parse_verdicts(text, "candidates")[1]
        return problem

    def _needs_call(self, request: JudgeRequest) -> bool:
        return bool(request.selected) or (self.grade_candidates and bool(request.candidates))

    def _combine(self, request: JudgeRequest, responses: Sequence[LLMResponse]) -> Judgement:
        usage = sum((r.usage for r in responses), ZERO_USAGE)
        errors = [r.error for r in responses if not r.ok]
        error = f"{self.spec_name} judge: {errors[0]}" if errors else None
        verdicts = self._merge(request.selected, responses, "verdicts")
        candidates = (self._merge(request.candidates, responses, "candidates")
                      if self.grade_candidates else None)
        return Judgement(turn_id=request.turn_id, judge=self.name, verdicts=verdicts,
                          candidate_verdicts=candidates, usage=usage, error=error)

    @staticmethod
    def _merge(keys: Sequence[str], responses: Sequence[LLMResponse],
               field: str) -> tuple[MemoryVerdict, ...]:
        parsed = []
        for response in responses:
            if not response.ok:
                parsed.append(({}, f"no verdict: {response.error}"))
            else:
                parsed.append(parse_verdicts(response.text, field))
        out = []
        for key in keys:
            calls = []
            for found, problem in parsed:
                if problem:
                    calls.append(MemoryVerdict(key, "unscored", problem))
                else:
                    calls.append(found.get(key) or MemoryVerdict(
                        key, "unscored", "judge gave no verdict for this memory"))
            out.append(_agree(key, calls))
        return tuple(out)

    # -- the Judge protocol ---------------------------------------------------------------
    def score(self, request: JudgeRequest) -> Judgement:
        if not self._needs_call(request):
            return self._combine(request, [])
        responses = [self.client.complete(r, validate=self._validate)
                     for r in self.build_requests(request)]
        return self._combine(request, responses)

    async def ascore(self, request: JudgeRequest) -> Judgement:
        if not self._needs_call(request):
            return self._combine(request, [])
        responses = [await self.client.acomplete(r, validate=self._validate)
                     for r in self.build_requests(request)]
        return self._combine(request, responses)

    def score_many(self, requests: Sequence[JudgeRequest]) -> list[Judgement]:
        """Judge many turns at once (through Message Batches when the client uses them)."""
        todo = [r for r in requests if self._needs_call(r)]
        built = {id(r): self.build_requests(r) for r in todo}
        flat = [(lr, 0) for r in todo for lr in built[id(r)]]
        answers = iter(self.client.run_batch(flat, validate=self._validate) if flat else [])
        out = []
        for request in requests:
            if id(request) in built:
                out.append(self._combine(request,
                                         [next(answers) for _ in built[id(request)]]))
            else:
                out.append(self._combine(request, []))
        return out


def _agree(key: str, calls: Sequence[MemoryVerdict]) -> MemoryVerdict:
    """One verdict from one or two presentations; disagreement is not a verdict."""
    if not calls:
        return MemoryVerdict(key, "unscored", "not judged")
    unscored = [c for c in calls if c.verdict == "unscored"]
    if unscored:
        return unscored[0]
    grades = {c.verdict for c in calls}
    if len(grades) == 1:
        return calls[0]
    return MemoryVerdict(key, "unscored", "verdict changed with presentation order ("
                         + ", ".join(c.verdict for c in calls) + ")")


def judge_usage(turns: Sequence[Judgement]) -> Usage:
    """Total usage of judged turns, for summaries."""
    return sum((t.usage for t in turns), ZERO_USAGE)


class OpenAIJudge(ClaudeJudge):
    """The same grading sent to any Chat Completions server (`openai:<model>?base_url=...`;
    needs `pip install 'openai>=1.40'`). `seed` sets the shuffle and the sampling seed."""

    transport: Transport = "openai"

    def _default_model(self) -> str:
        raise ValueError("an openai judge needs its model: openai:<model>, e.g. "
                         "openai:gpt-5-mini or openai:qwen3:8b?base_url=http://localhost:11434/v1")
