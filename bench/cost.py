"""Cost: billed input tokens per turn, stateless vs stateful Claude selector.

Both selectors answer the same 20 queries on one 200-file memdir through the
loopback API, whose token accounting is deterministic (ceil(chars / 4) per block)
and whose prompt cache follows the API's prefix rules (docs/llm.md); prefixes under
1 024 tokens are not cached, as on the real API. "Billed" weighs tokens as Sonnet's
price list does: uncached input 1, cache writes 1.25, cache reads 0.1.
"""

from __future__ import annotations

from pathlib import Path

from bench._core import Context, Figure, generated_suite, ratio
from bench._fake import fake_api
from bench._stateful_delta import DeltaStatefulSelector
from bench.concurrency import no_summary
from memeval.llm import LLMClient
from memeval.llm.prices import load_prices
from memeval.log import RESULTS_FILE, read_results
from memeval.run.config import LLMOptions, RunConfig
from memeval.run.evaluate import evaluate
from memeval.run.play import open_session, play_turn
from memeval.scenarios import load_many
from memeval.selectors.claude import DEFAULT_SELECTOR_MODEL

TARGET_STATEFUL_RATIO = 0.5
MIN_CACHE_TOKENS = 1024  # the API ignores shorter cache prefixes
STATELESS, STATEFUL = "claude", "claude?stateful=1"


def billed(usage: dict[str, float]) -> float:
    """Input tokens weighted by price relative to uncached input."""
    price = load_prices().price_for(DEFAULT_SELECTOR_MODEL)
    assert price is not None, f"{DEFAULT_SELECTOR_MODEL} missing from the price table"
    return (usage["input_tokens"]
            + usage["cache_creation_input_tokens"] * price.cache_write / price.input
            + usage["cache_read_input_tokens"] * price.cache_read / price.input)


def delta_sketch_usage(suite: Path) -> list[dict[str, float]]:
    """Per-turn usage of the sketched fix (bench/_stateful_delta.py), on its own server
    so no prompt-cache entry is shared with the shipped selectors."""
    scenario = load_many([suite]).scenarios[0]
    with fake_api(min_cache_tokens=MIN_CACHE_TOKENS) as server:
        client = LLMClient(server.url, api_key="offline-bench")
        selector = DeltaStatefulSelector(client=client)
        with open_session(scenario, selector) as opened:
            return [play_turn(opened.session, scenario, turn).usage.to_dict()
                    for turn in scenario.turns]


def run(ctx: Context) -> list[Figure]:
    sizes = ctx.sizes
    suite = generated_suite(ctx.workdir / "suite", sessions=1, files=sizes.cost_files,
                            turns=sizes.cost_queries, seed=400)
    config = RunConfig(scenarios=(str(suite),), selectors=(STATELESS, STATEFUL),
                       judges=("gold",), concurrency=2, llm=LLMOptions(cache=False))
    with fake_api(min_cache_tokens=MIN_CACHE_TOKENS):
        ctx.log(f"cost: {sizes.cost_queries} queries, {sizes.cost_files} files, 2 selectors")
        evaluate(config, ctx.workdir / "run", progress=False, finish=no_summary)
    rows = read_results(ctx.workdir / "run" / RESULTS_FILE)
    per: dict[str, dict[str, float]] = {}
    for spec in (STATELESS, STATEFUL):
        mine = [r.selector_usage.to_dict() for r in rows if r.selector == spec]
        turns = max(1, len(mine))
        per[spec] = {
            "billed": sum(billed(u) for u in mine) / turns,
            "sent": sum(u["input_tokens"] + u["cache_read_input_tokens"]
                        + u["cache_creation_input_tokens"] for u in mine) / turns,
            "usd": sum(u["cost_usd"] for u in mine) / turns,
            "calls": sum(u["calls"] for u in mine),
        }
    sketch = delta_sketch_usage(suite)
    sketch_billed = sum(billed(u) for u in sketch) / max(1, len(sketch))
    a, b = per[STATELESS], per[STATEFUL]
    return [
        Figure("cost.stateless.billed_input_per_turn", a["billed"], "tok",
               note=f"{a['sent']:.0f} input tokens sent per turn, {a['calls']:.0f} calls"),
        Figure("cost.stateful.billed_input_per_turn", b["billed"], "tok",
               note=f"{b['sent']:.0f} input tokens sent per turn, {b['calls']:.0f} calls"),
        Figure("cost.stateful_vs_stateless", ratio(b["billed"], a["billed"]), "x",
               TARGET_STATEFUL_RATIO, note="billed input tokens per turn"),
        Figure("cost.stateful_vs_stateless.usd", ratio(b["usd"], a["usd"]), "x",
               note=f"${a['usd']:.5f} vs ${b['usd']:.5f} per turn, output included"),
        Figure("cost.delta_sketch_vs_stateless", ratio(sketch_billed, a["billed"]), "x",
               note="proposed fix: removals as a note, moving cache breakpoint"),
    ]
