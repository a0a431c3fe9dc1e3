"""Synthetic run folders: big or hostile runs for testing and benchmarking the report.

The rows are `TurnResult`s (the run record), with made-up memories, so a 2 000-turn
report (or one whose memories try to run script) can be built in a second without
running any selector, and a change to the record's schema breaks them at once.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memeval.judges.base import Judgement, MemoryVerdict
from memeval.labels import PROJECT_SCOPE, memory_key
from memeval.log import (
    CONFIG_FILE,
    SUMMARY_FILE,
    RecordedTurn,
    ResultsWriter,
    TurnResult,
    write_json,
)
from memeval.usage import Usage

CATEGORIES = ("direct", "paraphrase", "keyword-trap", "stale", "none", "multi")
DAY_MS = 86_400_000
NOW_MS = 1_796_040_000_000.0  # 2026-12-01T12:00:00Z
MEMDIR = "/tmp/memeval-synthetic/memory-base/projects/-home-dev-app/memory"

# Untrusted text that must stay text: each line would run script if a page used it as HTML.
HOSTILE_QUERY = 'why does </script><script>window.__pwned=1</script> break the build?'
HOSTILE_CONTENT = (
    "---\nname: hostile\ndescription: <img src=x onerror=\"window.__pwned=1\"> gotchas\n"
    "type: feedback\n---\n<script>window.__pwned=1</script>\n"
    "[click me](javascript:window.__pwned=1) <a href=\"javascript:window.__pwned=1\">x</a>\n"
    "<iframe src=\"https://example.com/\"></iframe><img src=\"https://example.com/t.png\">\n"
    "<!-- --><style>body{display:none}</style>\u2028 & &amp; done\n"
)


def _usage(calls: int = 0, cost: float = 0.0) -> dict[str, Any]:
    return {"calls": calls, "input_tokens": 900 * calls, "output_tokens": 30 * calls,
            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
            "cost_usd": cost, "latency_s": 0.8 * calls, "cached": 0}


def _memory(index: int, rng: random.Random) -> dict[str, Any]:
    kind = ("feedback", "project", "reference", "user")[index % 4]
    filename = f"{kind}/note-{index:03d}.md"
    body = "\n".join(f"Line {n}: detail {rng.randint(0, 10**6)} about module {index}."
                     for n in range(rng.randint(4, 30)))
    content = (f"---\nname: note {index}\ndescription: how subsystem {index} behaves under "
               f"load and what to check first\ntype: {kind}\n---\n{body}\n")
    return {"filename": filename, "type": kind, "content": content,
            "description": f"how subsystem {index} behaves under load and what to check first",
            "mtime_ms": NOW_MS - (index % 60) * DAY_MS}


def _iso(ms: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{int(ms % 1000):03d}Z"


def synthetic_rows(*, turns: int = 20, selectors: tuple[str, ...] = ("bm25", "recency"),
                   judges: tuple[str, ...] = ("gold",), memories: int = 120,
                   turns_per_scenario: int = 20, seed: int = 0, hostile: bool = False,
                   ) -> list[TurnResult]:
    """Rows of a run of `turns` scenario turns per selector.

    Args:
        turns: scenario turns (each selector runs all of them).
        selectors: selector names.
        judges: judge names; a non-gold judge gives model-style verdicts.
        memories: memdir size (the manifest lists up to 200 of them).
        turns_per_scenario: turns per scenario (sessions reset between scenarios).
        seed: makes the rows reproducible.
        hostile: put script-bearing text in the first turn's query and memory.
    """
    rng = random.Random(seed)
    pool = [_memory(i, rng) for i in range(memories)]
    if hostile:
        pool[0] = {**pool[0], "content": HOSTILE_CONTENT,
                   "description": '<img src=x onerror="window.__pwned=1"> gotchas'}
    headers = sorted(pool, key=lambda m: -m["mtime_ms"])[:200]
    by_name = {m["filename"]: m for m in pool}
    manifest = "\n".join(
        f"- [{m['type']}] {m['filename']} ({_iso(m['mtime_ms'])}): {m['description']}"
        for m in headers)
    candidates = [{"filename": m["filename"], "file_path": f"{MEMDIR}/{m['filename']}",
                   "mtime_ms": m["mtime_ms"], "description": m["description"],
                   "type": m["type"]} for m in headers]
    rows: list[TurnResult] = []
    plan = []
    for t in range(turns):
        relevant = sorted({headers[rng.randrange(len(headers))]["filename"]
                           for _ in range(rng.choice((0, 1, 1, 2, 3)))})
        if hostile and t == 0:
            relevant = [pool[0]["filename"]]
        plan.append(relevant)
    for s_index, selector in enumerate(selectors):
        for t, relevant in enumerate(plan):
            scenario = f"synthetic-{t // turns_per_scenario:03d}"
            pick_rng = random.Random(seed * 7919 + s_index * 104729 + t)
            chosen = list(relevant) if pick_rng.random() < 0.5 + 0.15 * s_index else []
            chosen += [headers[pick_rng.randrange(len(headers))]["filename"]
                       for _ in range(pick_rng.choice((0, 0, 1, 2)))]
            chosen = list(dict.fromkeys(chosen))[:5]
            # Some turns fail (an error, never an empty answer) or are discarded because
            # the model used no tool, so every drill-down path has data.
            failed = t % 13 == 6
            discarded = t % 9 == 4 and not failed
            if failed:
                chosen = []
            surfaced = [{
                "key": memory_key(PROJECT_SCOPE, name), "scope": PROJECT_SCOPE,
                "filename": name, "path": f"{MEMDIR}/{name}",
                "content": by_name[name]["content"], "mtime_ms": by_name[name]["mtime_ms"],
                "header": f"Memory (saved today): {MEMDIR}/{name}:", "truncated": False,
                "line_limit": None,
            } for name in chosen]
            query = (HOSTILE_QUERY if hostile and t == 0 else
                     f"turn {t}: how should I change subsystem {rng.randint(0, memories)} safely?")
            cost = 0.0012 if selector.startswith("claude") else 0.0
            record = {
                "turn_id": f"t{t % turns_per_scenario}", "query": query, "repeat": 0,
                "recall_mode": True, "compat": "faithful", "mentions": [],
                "dirs": [{"scope": PROJECT_SCOPE, "memory_dir": MEMDIR, "scanned": len(headers),
                          "candidates": candidates,
                          "manifest": manifest, "called": True, "raw_names": chosen,
                          "raw_output": json.dumps({"selected_memories": chosen}),
                          "valid": chosen, "invalid": [],
                          "error": "APITimeoutError: request timed out" if failed else None,
                          "usage": _usage(1 if cost else 0, cost)}],
                "recent_tools": ["Bash"] if t % 3 == 0 else [],
                "tool_events": [{"tool": "Bash", "ok": True, "path": None}] if t % 3 == 0 else [],
                "picked": [{k: s[k] for k in ("key", "scope", "filename", "path", "mtime_ms")}
                           for s in surfaced],
                "dropped": [], "surfaced": [] if discarded else surfaced,
                "discarded": surfaced if discarded else [],
                "skipped": "no-tool-use-discarded" if discarded and surfaced else None,
                "surfaced_bytes_before": 0, "surfaced_bytes_after": 0,
                "usage": _usage(1 if cost else 0, cost),
                "errors": ["selector: APITimeoutError: request timed out"] if failed else [],
            }
            judgements = {}
            for judge in judges:
                gold = judge == "gold"
                verdicts = tuple(MemoryVerdict(k, ("relevant" if k in relevant else "irrelevant")
                                               if gold or pick_rng.random() < 0.85
                                               else "acceptable")
                                 for k in chosen)
                judgements[judge] = Judgement(
                    turn_id=record["turn_id"], judge=judge, verdicts=verdicts,
                    relevant=tuple(relevant) if gold else None,
                    usage=Usage(**_usage(0 if gold else 1, 0.0 if gold else 0.002)))
            rows.append(TurnResult(
                scenario=scenario, scenario_path=f"synthetic/{scenario}.yaml",
                turn_id=record["turn_id"], turn_index=t % turns_per_scenario,
                selector=selector, repeat=0,
                category=CATEGORIES[t % len(CATEGORIES)] if relevant else "none",
                why="synthetic labels", query=query, relevant=tuple(relevant), acceptable=(),
                selected=tuple(chosen), discarded=bool(record["discarded"]),
                skipped=record["skipped"],
                surfaced_bytes=sum(len(s["content"].encode()) for s in surfaced),
                selector_usage=Usage(**record["usage"]),
                selector_error="project: APITimeoutError: request timed out" if failed else None,
                errors=tuple(record["errors"]), judgements=judgements,
                record=RecordedTurn.from_dict(record),
                root="/tmp/memeval-synthetic"))
    return rows


def write_rows(run_dir: Path, rows: Sequence[TurnResult], *, complete: bool = False) -> None:
    """Append `rows` to a run folder a session unit at a time, as a run writes them."""
    units: dict[tuple[str, str, int], list[TurnResult]] = {}
    for row in rows:
        units.setdefault(row.session_key, []).append(row)
    with ResultsWriter(Path(run_dir)) as writer:
        for unit in units.values():
            writer.append_unit(unit)
        if complete:
            writer.mark_complete()


def write_synthetic_run(run_dir: Path, *, summary: bool = True, **options: Any) -> Path:
    """Write a synthetic run folder (rows, config and, unless told not to, the summary)."""
    from memeval.scoring.summary import summarize

    run_dir = Path(run_dir)
    rows = synthetic_rows(**options)
    write_rows(run_dir, rows, complete=True)
    selectors = options.get("selectors", ("bm25", "recency"))
    config = {"config": {"selectors": list(selectors), "judges": list(options.get(
        "judges", ("gold",))), "seed": options.get("seed", 0), "repeats": 1},
        "selectors": [{"name": s} for s in selectors],
        "judges": [{"name": j} for j in options.get("judges", ("gold",))],
        "versions": {"memeval": "synthetic"}, "fingerprint": "synthetic"}
    write_json(run_dir / CONFIG_FILE, config)
    if summary:
        write_json(run_dir / SUMMARY_FILE, summarize(rows, run_dir=run_dir))
    return run_dir
