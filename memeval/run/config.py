"""What a run evaluates (`RunConfig`) and how its model calls are made (`LLMOptions`).

Written verbatim to `config.json`; its fingerprint decides whether a folder's rows
may be resumed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from memeval.errors import MemevalError

DEFAULT_SELECTORS: tuple[str, ...] = ("bm25", "recency", "oracle")
DEFAULT_JUDGES: tuple[str, ...] = ("gold",)
# A compat spec: a preset (`faithful`, `hardened`) and its switches (`memeval.session.Compat`).
CompatName = str
History = Literal["gold", "own"]


def bundled_fixtures_dir() -> Path:
    """The curated fixtures: inside the wheel when installed, else the repository's."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "_bundled" / "fixtures"
    return packaged if packaged.is_dir() else package.parent / "fixtures"


def default_scenarios() -> tuple[str, ...]:
    return (str(bundled_fixtures_dir() / "scenarios" / "*.yaml"),)


@dataclass(frozen=True)
class LLMOptions:
    """How model calls are made (see `memeval.llm.door_config`); `None` defers to the
    `MEMEVAL_*` environment variables.

    Args:
        cache: SQLite response cache path, or False to disable.
        record: cassette file to record every live exchange into.
        replay: cassette file to answer from, never calling out.
        max_cost: USD budget; calls that would pass it are refused and recorded.
        batches: send calls through the Message Batches API (half price, slower).
        prices: price table overriding the bundled one.
        timeout: seconds per HTTP attempt (default 60).
        deadline: seconds per call, retries included (default 80).
        max_response_mb: the most megabytes one answer may hold once decoded (default 8).
    """

    cache: str | bool | None = None
    record: str | None = None
    replay: str | None = None
    max_cost: float | None = None
    batches: bool | None = None
    prices: str | None = None
    timeout: float | None = None
    deadline: float | None = None
    max_response_mb: float | None = None


_OPTIONAL_STAGES = ("answerer", "answer_judge")


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's results; written verbatim to `config.json`.

    Args:
        scenarios: scenario files, folders or globs.
        selectors: selector spec strings (`bm25`, `claude:claude-sonnet-4-6?prompt=x`).
        judges: judge spec strings (`gold`, `claude`).
        repeats: sessions per scenario × selector; repeats expose selector instability.
        shuffle_manifest: reorder each manifest with a per-repeat seed (order bias).
        concurrency: units in flight at once (see `memeval.run.evaluate`).
        seed: base seed for shuffles and seeded selectors.
        compat: `faithful` reproduces the system's quirks; `hardened` holds every
            invariant.
        categories: run only turns of these categories; `tags` only turns with one
            of these tags; `exclude_tags` none with these; `scenario_ids` only these
            scenarios; `limit` at most this many turns per scenario (see
            `memeval.scenarios.subset`).
        history: `gold` plays every turn from the state the gold labels imply (what
            an oracle would have surfaced so far), so every selector sees the same
            manifest at every turn and comparisons are paired; `own` replays each
            selector's own session end to end (what a user would live through).
    """

    scenarios: tuple[str, ...] = field(default_factory=default_scenarios)
    selectors: tuple[str, ...] = DEFAULT_SELECTORS
    judges: tuple[str, ...] = DEFAULT_JUDGES
    repeats: int = 1
    shuffle_manifest: bool = False
    concurrency: int = 16
    seed: int = 0
    compat: CompatName = "faithful"
    history: History = "gold"
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    scenario_ids: tuple[str, ...] = ()
    limit: int | None = None
    answerer: str | None = None
    answer_judge: str | None = None
    llm: LLMOptions = field(default_factory=lambda: LLMOptions())

    def __post_init__(self) -> None:
        for option, specs in (("-s/--selector", self.selectors), ("-j/--judge", self.judges)):
            twice = sorted({s for s in specs if specs.count(s) > 1})
            if twice:  # each would be evaluated, and paid for, once per mention
                raise MemevalError(f"{option} {', '.join(map(repr, twice))} given more than "
                                   "once; give each spec once (--repeats runs a spec again)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fingerprint(self) -> str:
        """What must match for a folder's rows to be resumed by this config: not how
        model calls are made (cache, cassette, budget), only what is evaluated."""
        keep = {k: v for k, v in self.to_dict().items() if k not in ("concurrency", "llm")
                and not (k in _OPTIONAL_STAGES and v is None)}  # older folders still resume
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]
