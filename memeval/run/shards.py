"""Beyond one machine: run a stable share of a run's units, and merge the shares.

`memeval run --shard K/N` keeps the units whose hash falls in share K of N (a unit is
a turn, or a stretch of a session whose turns depend on each other, so shares never
split such a stretch). Any scheduler
can run the N shares — a CI matrix, a Kubernetes Indexed Job, a Slurm array — and
`memeval merge OUT RUN…` checks that they are the shares of one config, disjoint and
complete, joins their rows and writes the summary and report once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.log import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    RESULTS_FILE,
    ResultsWriter,
    RunFolderError,
    UnitReader,
    read_config,
    write_json,
)

_SPEC = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class Shard:
    """Share `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.match(text.strip())
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise MemevalError(f"--shard {text!r}: write K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(match[1]), int(match[2]))

    def owns(self, unit_key: Sequence[Any]) -> bool:
        """Whether this share runs the unit: a hash of its key, stable across machines."""
        digest = hashlib.sha256("\x1f".join(map(str, unit_key)).encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _config(run: Path) -> dict[str, Any]:
    try:
        return read_config(run)
    except RunFolderError as exc:
        raise MemevalError(f"{run}: no readable {CONFIG_FILE} ({exc.__cause__ or 'missing'}); "
                           "pass folders written by `memeval run --shard K/N --out DIR`") \
            from None


def merge_runs(out: Path, runs: Sequence[Path]) -> int:
    """Join the shares `runs` into `out` (rows only; the caller finishes the run).

    Returns the number of rows written. Refuses, in one line each, shares of different
    configs, unfinished shares, overlapping or missing shares and overlapping units.
    """
    if (out / RESULTS_FILE).exists():
        raise MemevalError(f"{out} already holds results; merge into a new folder")
    configs = [_config(run) for run in runs]
    first = configs[0]
    for run, config in zip(runs, configs, strict=True):
        if config.get("fingerprint") != first.get("fingerprint"):
            raise MemevalError(f"{run} ran another configuration than {runs[0]} (fingerprint "
                               f"{config.get('fingerprint')} vs {first.get('fingerprint')}); "
                               "merge only shares of one command")
        if (run / INCOMPLETE_MARKER).exists():
            raise MemevalError(f"{run} has not finished; rerun its command to complete it")
    shards = [config.get("shard") for config in configs]
    counts = {s[1] for s in shards if s}
    if None in shards or len(counts) != 1:
        raise MemevalError("every folder must be one share of the same split (run with "
                           f"--shard K/N); got {', '.join(map(str, shards))}")
    count = counts.pop()
    seen = sorted(s[0] for s in shards)
    if seen != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(seen))
        twice = sorted({k for k in seen if seen.count(k) > 1})
        raise MemevalError(f"shares of {count}: missing {missing or 'none'}, given twice "
                           f"{twice or 'none'}; pass each share exactly once")
    # Only where each unit's rows are is held; rows are read back a unit at a time.
    readers = [UnitReader(run) for run in runs]
    try:
        owner: dict[tuple[str, str, int, int], UnitReader] = {}
        for reader in readers:
            for turn in reader.turns:  # by turn: shares cut into units alike or not
                if turn in owner:
                    raise MemevalError(f"turn {turn} is in both {owner[turn].run_dir} and "
                                       f"{reader.run_dir}; shares must not overlap")
                owner[turn] = reader
        units = {key: reader for reader in readers for key in reader.units}
        with ResultsWriter(out, sync_every=1.0) as writer:  # an fsync a second, not a turn
            for key in sorted(units):
                writer.append_unit(units[key].rows(key))
            rows = writer.row_count
    finally:
        for reader in readers:
            reader.close()
    write_json(out / CONFIG_FILE, {**first, "shard": None,
                                   "merged_from": [str(run) for run in runs]})
    return rows
