"""The plugin's options: each a command-line flag and an ini key, read once into `Settings`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

TURN_FIXTURE = "memeval_turn"
JUDGED_FIXTURE = "memeval_judged_turn"
SUITE_FIXTURES = (TURN_FIXTURE, JUDGED_FIXTURE)
DEFAULT_SELECTOR = "oracle"  # reads the gold labels: the suite's plumbing, fast and green
DEFAULT_JUDGE = "claude"
DEFAULT_REPORT = "reports/pytest-latest"
DEFAULT_HISTORY = "gold"  # `memeval run`'s default: a CI baseline from either pairs with both
WORKER_OUTPUT_KEY = "memeval_units"
PROFILE_ENV = "MEMEVAL_PROFILE"  # read by the property suites' hypothesis settings
KEY_ENV = "ANTHROPIC_API_KEY"
GATE_STAT = "memeval gate failed"  # shown in pytest's final count line

OptionKind = Literal["list", "str", "path", "float", "choice"]


@dataclass(frozen=True)
class _Option:
    name: str  # `selector` → --memeval-selector and ini `memeval_selector`
    kind: OptionKind
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return f"--memeval-{self.name}"

    @property
    def ini(self) -> str:
        return "memeval_" + self.name.replace("-", "_")

    @property
    def dest(self) -> str:
        return self.ini


OPTIONS: tuple[_Option, ...] = (
    _Option("selector", "list", "selector spec to evaluate; repeat for several (default "
            "oracle). Example: --memeval-selector bm25 --memeval-selector recency"),
    _Option("judge", "str", "model judge of the LLM-judged suite (default claude). "
            "Example: --memeval-judge 'claude:claude-sonnet-4-6?order=both'", DEFAULT_JUDGE),
    _Option("scenarios", "list", "scenario files, folders or globs (default: the bundled "
            "fixtures). Example: --memeval-scenarios 'my/scenarios/*.yaml'"),
    _Option("report", "path", f"run folder written at the end (default {DEFAULT_REPORT}). "
            "Example: --memeval-report reports/pr-42", DEFAULT_REPORT),
    _Option("baseline", "path", "summary.json or folder of a reference run; fails the "
            "session as `memeval gate --baseline` would (error rates of both runs, F1 and "
            "false alarms non-inferior). Example: --memeval-baseline main/summary.json"),
    _Option("min-precision", "float", "fail the session when a selector's mean precision "
            "is below this. Example: --memeval-min-precision 0.6"),
    _Option("min-recall", "float", "fail the session when a selector's mean recall is "
            "below this. Example: --memeval-min-recall 0.5"),
    _Option("margin", "float", "non-inferiority margin of every gated metric (default: the "
            "baseline's calibration.json, else read from the baseline's turns, as "
            "`memeval gate` does)"),
    _Option("replay", "path", "answer every model call from this cassette (no key, no "
            "network). Example: --memeval-replay suites/cassettes/judged.jsonl"),
    _Option("record", "path", "record every model call into this cassette (needs "
            "ANTHROPIC_API_KEY). Example: --memeval-record my-tape.jsonl"),
    _Option("profile", "choice", "hypothesis profile of the property suites: ci (default, "
            "deterministic) or deep. Example: --memeval-profile deep", None, ("ci", "deep")),
    _Option("compat", "choice", "faithful (Claude Code's quirks, default) or hardened "
            "(every invariant holds). Example: --memeval-compat hardened", "faithful",
            ("faithful", "hardened")),
    _Option("history", "choice", "gold (default, as `memeval run`): every turn starts from "
            "the state the gold labels imply, so runs pair turn by turn; own: each "
            "selector's session runs end to end. A baseline must be made the same way. "
            "Example: --memeval-history own", DEFAULT_HISTORY, ("gold", "own")),
)
_BY_NAME = {o.name: o for o in OPTIONS}


@dataclass(frozen=True)
class Settings:
    """The plugin's options after the command line, the ini file and defaults."""

    selectors: tuple[str, ...]
    judge: str
    scenarios: tuple[str, ...]
    report: Path
    baseline: Path | None
    min_precision: float | None
    min_recall: float | None
    margin: float | None
    replay: Path | None
    record: Path | None
    profile: str | None
    compat: str
    history: str = DEFAULT_HISTORY


def _raw(config: pytest.Config, option: _Option) -> tuple[Any, Path]:
    """The option's value and the folder relative paths in it are relative to."""
    cli = config.getoption(option.dest, default=None)
    if cli not in (None, []):
        return cli, config.invocation_params.dir
    ini = config.getini(option.ini)
    if ini not in (None, "", []):
        return ini, config.inipath.parent if config.inipath else config.rootpath
    return option.default, config.rootpath


def _anchored(value: str | Path, base: Path) -> str:
    text = os.path.expanduser(str(value))
    return text if os.path.isabs(text) else str(base / text)


def read_settings(config: pytest.Config) -> Settings:
    """Settings from pytest's config; a bad value is a UsageError naming the option."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        raw, base = _raw(config, option)
        key = option.name.replace("-", "_")
        if raw is None:
            values[key] = None
        elif option.kind == "list":
            values[key] = tuple(str(v) for v in raw)
        elif option.kind == "path":
            values[key] = Path(_anchored(raw, base))
        elif option.kind == "float":
            try:
                values[key] = float(raw)
            except ValueError:
                raise pytest.UsageError(f"{option.flag} / ini {option.ini}: {raw!r} is not a "
                                        "number") from None
        elif option.kind == "choice":
            if raw not in option.choices:
                raise pytest.UsageError(f"{option.flag} / ini {option.ini}: {raw!r}; use one "
                                        f"of {', '.join(option.choices)}")
            values[key] = raw
        else:
            values[key] = str(raw)
        if option.name == "scenarios" and values[key] is not None:
            values[key] = tuple(_anchored(v, base) for v in values[key])
    for name in ("min_precision", "min_recall"):
        if values[name] is not None and not 0 <= values[name] <= 1:
            raise pytest.UsageError(f"--memeval-{name.replace('_', '-')}: {values[name]} is "
                                    "not between 0 and 1")
    if values["margin"] is not None and values["margin"] < 0:
        raise pytest.UsageError(f"--memeval-margin: {values['margin']} must be >= 0")
    if values["replay"] is not None and values["record"] is not None:
        raise pytest.UsageError("--memeval-replay and --memeval-record exclude each other; "
                                "pick one")
    for name in ("baseline", "replay"):  # checked now, not after a long run
        if values[name] is not None and not values[name].exists():
            raise pytest.UsageError(f"--memeval-{name} {values[name]}: no such file; pass a "
                                    + ("summary.json or run folder" if name == "baseline"
                                       else "recorded cassette"))
    values["selectors"] = values.pop("selector") or (DEFAULT_SELECTOR,)
    values["scenarios"] = values["scenarios"] or ()  # () means the bundled fixtures
    return Settings(**values)
