"""A sweep as one reviewed file: selectors × models × prompts × judges × scenarios in TOML.

`memeval run --config sweep.toml` reads it; options given on the command line win
over the file. Plain keys are `RunConfig` fields; an `[llm]` table holds how model
calls are made; each `[[grid]]` table expands into the cross product of its lists:

    scenarios = ["fixtures/scenarios/*.yaml"]
    selectors = ["bm25", "recency"]
    judges = ["gold"]
    repeats = 3

    [[grid]]                      # 2 models × 2 prompts = 4 selector specs
    name = "claude"
    models = ["claude-sonnet-4-6", "claude-haiku-4-5"]
    prompt = ["conservative", "recall"]

    [[grid]]                      # any spec parameter may be a list
    name = "openai"
    kind = "judge"
    models = ["qwen3:8b"]
    base_url = "http://localhost:11434/v1"

A grid entry's `name` is the spec name, `models` the value after `:`, every other key
a spec parameter (a list is swept, a single value kept). Relative paths (scenarios,
cassettes, caches, price files) are read from the sweep file's folder, so the file
means the same wherever the command runs. Problems name the file, the key and the fix.
"""

from __future__ import annotations

import difflib
import itertools
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memeval.errors import MemevalError
from memeval.run.config import LLMOptions, RunConfig

GRID_KEYS = ("name", "kind", "models")
KINDS = ("selector", "judge")
_LIST_FIELDS = {"scenarios", "selectors", "judges", "categories", "tags", "exclude_tags",
                "scenario_ids"}
_SCALARS: dict[str, tuple[type, ...]] = {"repeats": (int,), "concurrency": (int,),
                                         "seed": (int,), "limit": (int,),
                                         "shuffle_manifest": (bool,), "compat": (str,),
                                         "history": (str,)}
_CHOICES = {"compat": ("faithful", "hardened"), "history": ("gold", "own")}
_LLM_PATHS = ("record", "replay", "prices")
_LLM_SECONDS = ("timeout", "deadline")


def load_sweep(path: Path) -> dict[str, Any]:
    """The `RunConfig` keyword arguments a sweep file asks for (grids expanded).

    Raises MemevalError naming the file and the key for anything it cannot use.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MemevalError(f"--config {path}: cannot read it ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MemevalError(f"--config {path}: not valid TOML ({exc})") from None
    names = {f.name for f in fields(RunConfig)} - {"llm"}
    out: dict[str, Any] = {}
    grids = data.pop("grid", [])
    llm = data.pop("llm", None)
    for key, value in data.items():
        if key not in names:
            raise MemevalError(f"{path}: unknown key {key!r}{_hint(key, [*names, 'grid', 'llm'])}")
        out[key] = _checked(path, key, value)
    if "scenarios" in out:
        out["scenarios"] = tuple(_near(path, p) for p in out["scenarios"])
    if llm is not None:
        out["llm"] = _llm(path, llm)
    for index, grid in enumerate(grids if isinstance(grids, list) else [grids], 1):
        kind, specs = _expand(path, index, grid)
        target = "selectors" if kind == "selector" else "judges"
        out[target] = (*out.get(target, ()), *specs)
    return out


def _checked(path: Path, key: str, value: Any) -> Any:
    if key in _LIST_FIELDS:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise MemevalError(f"{path}: {key} must be a list of strings")
        return tuple(value)
    kinds = _SCALARS[key]
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise MemevalError(f"{path}: {key} = {value!r} must be a {kinds[0].__name__}")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise MemevalError(f"{path}: {key} = {value!r}: use one of {', '.join(_CHOICES[key])}")
    if key in ("repeats", "concurrency", "limit") and value < 1:
        raise MemevalError(f"{path}: {key} must be at least 1")
    return value


def _near(path: Path, value: str) -> str:
    """A relative path or glob as seen from the sweep file's folder."""
    return value if Path(value).is_absolute() else str(path.parent / value)


def _llm(path: Path, table: Any) -> LLMOptions:
    allowed = [f.name for f in fields(LLMOptions)]
    if not isinstance(table, dict):
        raise MemevalError(f"{path}: [llm] must be a table of {', '.join(allowed)}")
    for key in table:
        if key not in allowed:
            raise MemevalError(f"{path}: unknown key llm.{key}{_hint(key, allowed)}")
    for key in _LLM_SECONDS:
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or value <= 0):
            raise MemevalError(f"{path}: llm.{key} = {value!r} must be a positive number "
                               "of seconds")
    paths = {k: _near(path, v) for k, v in table.items()
             if (k in _LLM_PATHS or k == "cache") and isinstance(v, str)}
    return LLMOptions(**{**table, **paths})


def _expand(path: Path, index: int, grid: Any) -> tuple[str, list[str]]:
    where = f"{path}: grid #{index}"
    if not isinstance(grid, dict) or not isinstance(grid.get("name"), str):
        raise MemevalError(f"{where}: needs name = \"<spec name>\" (claude, openai, bm25, ...)")
    kind = grid.get("kind", "selector")
    if kind not in KINDS:
        raise MemevalError(f"{where}: kind must be selector or judge, not {kind!r}")
    models = grid.get("models", [None])
    models = [models] if isinstance(models, str) else models
    swept = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items()
             if k not in GRID_KEYS}
    if not models or any(not values for values in swept.values()):
        raise MemevalError(f"{where}: an empty list sweeps nothing; give at least one value")
    specs = []
    for model in models:
        for combo in itertools.product(*swept.values()):
            head = grid["name"] if model is None else f"{grid['name']}:{model}"
            query = "&".join(f"{k}={quote(_text(v), safe='.-_:/')}"
                             for k, v in zip(swept, combo, strict=True))
            specs.append(head + (f"?{query}" if query else ""))
    return kind, specs


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _hint(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"
