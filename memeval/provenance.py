"""How a run was made, and whether two runs were made alike enough to be paired.

A figure depends on more than the selector: the history a turn starts from (`gold`
or `own`), the compat preset, the order of manifests, the scan's limits and the judge
that graded it. Each run writes these facts under `made` in `config.json` (and
`summary.json`, which a CI job often keeps alone); gate, compare and the pytest
plugin's baseline check call `check_comparable` before pairing, and refuse two runs
made differently with one line naming the fix.

It sits at the top of the package, importing only the memdir's constants, so that
`memeval.scoring` (compare, gate), `memeval.run` (which writes the record) and
`memeval.plugin` can all call it without an arrow pointing up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.memdir import (
    FRONTMATTER_MAX_LINES,
    MAX_MEMORY_BYTES,
    MAX_MEMORY_FILES,
    MAX_MEMORY_LINES,
    MAX_SESSION_BYTES,
    MAX_SURFACED_PER_TURN,
)

MADE_KEY = "made"
# The limits that decide what a selector can see and what surfaces; a version of
# memeval (or a compat preset) that moved one changes every figure.
SCAN_LIMITS: Mapping[str, int] = {
    "max_memory_files": MAX_MEMORY_FILES, "frontmatter_max_lines": FRONTMATTER_MAX_LINES,
    "max_surfaced_per_turn": MAX_SURFACED_PER_TURN, "max_memory_lines": MAX_MEMORY_LINES,
    "max_memory_bytes": MAX_MEMORY_BYTES, "max_session_bytes": MAX_SESSION_BYTES,
}
# What of a judge's description decides its verdicts (not where its key lives).
JUDGE_FIELDS = ("model", "prompt_hash", "url", "structured", "sampling", "order",
                "grade_candidates")


class NotComparable(MemevalError):
    """Two runs were made in ways that change the figures; pairing them would mislead."""


def made_record(*, history: str, compat: str, shuffle_manifest: bool,
                judges: Iterable[Mapping[str, Any]],
                selectors: Iterable[Mapping[str, Any]] = (), source: str) -> dict[str, Any]:
    """The `made` record of a run.

    Args:
        history: `gold` or `own`.
        compat: the compat preset.
        shuffle_manifest: whether manifests were reordered per repeat.
        judges: each judge's description (name, model, prompt hash, endpoint ...).
        selectors: each selector's description; only their endpoints are kept here.
        source: `memeval run` or `pytest`, for messages.
    """
    judges = list(judges)
    return {
        "history": history, "compat": compat, "shuffle_manifest": bool(shuffle_manifest),
        "scan_limits": dict(SCAN_LIMITS),
        "judges": {str(j["name"]): {k: j[k] for k in JUDGE_FIELDS if j.get(k) is not None}
                   for j in judges},
        "endpoints": {str(c["name"]): c["url"] for c in [*selectors, *judges]
                      if c.get("url") and not c.get("public", True)},
        "source": source,
    }


def read_made(path: Path) -> dict[str, Any] | None:
    """The `made` record of a run folder or summary.json: the summary's, else its
    folder's `config.json` (an older run's config gives what it recorded); None when
    neither says."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    files = ([] if path.is_dir() else [path]) + [folder / "summary.json", folder / "config.json"]
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get(MADE_KEY), dict):
            return dict(data[MADE_KEY])
        if isinstance(data, dict) and isinstance(data.get("config"), dict):  # older config.json
            config = data["config"]
            older = {k: config[k] for k in ("history", "compat", "shuffle_manifest")
                     if k in config}
            return older or None
    return None


def histories(modes: Iterable[Any]) -> dict[str, Any]:
    """A partial `made` record from a per-turn table's `history` column, for runs that
    recorded nothing else."""
    found = sorted({str(m) for m in modes if isinstance(m, str)})
    return {"history": found[0]} if len(found) == 1 else {}


def _fix(field: str, baseline: Any, candidate: Any) -> str:
    if field == "history":
        return (f"rerun the candidate with `memeval run --history {baseline}` (pytest: "
                f"--memeval-history {baseline})")
    if field == "compat":
        return (f"rerun the candidate with `memeval run --compat {baseline}` (pytest: "
                f"--memeval-compat {baseline})")
    if field == "shuffle_manifest":
        return ("rerun the candidate " + ("with" if baseline else "without")
                + " `memeval run --shuffle-manifest`")
    if field == "scan_limits":
        return "the runs come from memeval versions with other scan limits; rerun the " \
            "baseline with this version"
    return f"score both runs with the same judge ({field}) and prompt"


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value).lower() if isinstance(value, bool) else str(value)


def differences(baseline: Mapping[str, Any] | None,
                candidate: Mapping[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """`(field, baseline's, candidate's)` for each recorded fact that changes the
    figures and differs; a fact only one run recorded is not held against it."""
    if not baseline or not candidate:
        return []
    out = []
    for field in ("history", "compat", "shuffle_manifest", "scan_limits"):
        if field in baseline and field in candidate and baseline[field] != candidate[field]:
            out.append((field, baseline[field], candidate[field]))
    judges_a, judges_b = baseline.get("judges") or {}, candidate.get("judges") or {}
    for name in sorted(set(judges_a) & set(judges_b)):
        if judges_a[name] != judges_b[name]:
            out.append((f"judge {name}", judges_a[name], judges_b[name]))
    return out


def check_comparable(baseline: Mapping[str, Any] | None, candidate: Mapping[str, Any] | None,
                     ) -> None:
    """Raise `NotComparable`, one line naming what differs and the fix, when the two
    runs were made in ways that change the figures."""
    found = differences(baseline, candidate)
    if not found:
        return
    parts = [f"{field} is {_shown(a)} in the baseline but {_shown(b)} in the candidate; "
             f"{_fix(field, a, b)}" for field, a, b in found]
    raise NotComparable("cannot pair runs made differently: " + "; ".join(parts))


def check_runs_comparable(baseline: Path, candidate: Path,
                          tables: tuple[Any, Any] | None = None) -> None:
    """`check_comparable` on two run folders (or summary.json files); `tables`, their
    per-turn tables, stand in for the history of a run that recorded no `made`."""
    made = [read_made(baseline), read_made(candidate)]
    if tables is not None:
        for index, table in enumerate(tables):
            if made[index] is None and "history" in getattr(table, "columns", ()):
                made[index] = histories(table["history"])
    check_comparable(made[0], made[1])


__all__ = ["MADE_KEY", "SCAN_LIMITS", "NotComparable", "check_comparable",
           "check_runs_comparable", "differences", "histories", "made_record", "read_made"]
