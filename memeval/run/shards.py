"""Beyond one machine: run a stable share of a run's units, and merge the shares.

`memeval run --shard K/N` keeps the units whose hash falls in share K of N (a unit is
a turn, or a stretch of a session whose turns depend on each other, so shares never
split such a stretch). Any scheduler
can run the N shares — a CI matrix, a Kubernetes Indexed Job, a Slurm array — and
`memeval merge OUT RUN…` checks that they are the shares of one config and of one
plan (`memeval.run.plan`), that each holds exactly its units' rows, whole, with their
payloads, then joins their rows and writes the summary and report once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memeval.errors import MemevalError
from memeval.log import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    PAYLOADS_FILE,
    RESULTS_FILE,
    PayloadFile,
    ResultsWriter,
    RunFolderError,
    TurnKey,
    UnitKey,
    UnitReader,
    dangling_refs,
    read_config,
    stored_lines,
    turn_key,
    unit_key,
    write_json,
)
from memeval.run.plan import PLAN_KEY, Plan, Shard


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
    configs or scenario contents, unfinished shares, overlapping or missing shares,
    and any share whose rows are not what its plan says (see `check_shares`).
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
    plan = _one_plan(runs, configs)
    check_shares(plan, [(run, Shard(s[0], s[1])) for run, s in zip(runs, shards,
                                                                    strict=True)])
    # Only where each unit's rows are is held; rows are read back a unit at a time.
    readers = [UnitReader(run) for run in runs]
    try:
        units = {key: reader for reader in readers for key in reader.units}
        with ResultsWriter(out, sync_every=1.0) as writer:  # an fsync a second, not a turn
            for key in sorted(units):
                writer.append_unit(units[key].rows(key))
            rows = writer.row_count
    finally:
        for reader in readers:
            reader.close()
    write_json(out / CONFIG_FILE, {**first, "shard": None, PLAN_KEY: plan.to_record(None),
                                   "merged_from": [str(run) for run in runs]})
    return rows


def _one_plan(runs: Sequence[Path], configs: Sequence[Mapping[str, Any]]) -> Plan:
    """The plan every share recorded, refusing shares that planned differently (other
    scenario contents on another machine) or recorded no plan."""
    plans = []
    for run, config in zip(runs, configs, strict=True):
        plan = Plan.from_config(config)
        if plan is None:
            raise MemevalError(f"{run / CONFIG_FILE} records no unit plan (written by an "
                               "older memeval); rerun the share with this version")
        plans.append(plan)
    for run, plan in zip(runs[1:], plans[1:], strict=True):
        changed = sorted(k for k in {*plan.digests, *plans[0].digests}
                         if plan.digests.get(k) != plans[0].digests.get(k))
        if changed:
            raise MemevalError(
                f"{run} ran other scenario contents than {runs[0]} (differing: "
                f"{', '.join(changed[:SHOWN])}{' …' if len(changed) > SHOWN else ''}); run "
                "every share from the same scenario files")
        if plan.units != plans[0].units:
            raise MemevalError(f"{run} planned other units than {runs[0]}; run every share "
                               "with the same memeval version and options")
    return plans[0]


SHOWN = 3  # examples named per problem


def _turn_name(turn: TurnKey) -> str:
    scenario, selector, repeat, index = turn
    return f"{scenario} turn {index} [{selector}, repeat {repeat}]"


class _Problems:
    """What is wrong with the shares: one line per share and kind, with a count and
    the first few places."""

    def __init__(self) -> None:
        self._found: dict[tuple[Path, str], list[str]] = {}

    def add(self, run: Path, kind: str, where: str) -> None:
        self._found.setdefault((run, kind), []).append(where)

    def lines(self, fix: Callable[[str], str]) -> list[str]:
        out = []
        for (run, kind), places in self._found.items():
            shown = "; ".join(places[:SHOWN]) + (" …" if len(places) > SHOWN else "")
            out.append(f"{run}: {len(places)} {kind} ({shown}); {fix(kind)}")
        return out


def check_shares(plan: Plan, shares: Sequence[tuple[Path, Shard]]) -> None:
    """Refuse shares whose rows are not exactly their plan: a planned turn missing, a
    turn stored twice, a row outside the plan (a scenario, selector or repeat the
    config does not have), a row of another share's unit, a unit with fewer rows than
    it was written with, or a row pointing at a payload `payloads.jsonl` lacks. Reads
    each share once, holding one key per turn."""
    count = shares[0][1].count
    owner = {turn: index for index in range(1, count + 1)
             for unit in plan.share(Shard(index, count)) for turn in unit.turn_keys}
    found: dict[TurnKey, str] = {}
    problems = _Problems()
    for run, shard in shares:
        results = run / RESULTS_FILE
        payloads = PayloadFile(run / PAYLOADS_FILE)
        present: set[str] = set()
        held: Counter[UnitKey] = Counter()
        sizes: dict[UnitKey, int] = {}
        try:
            for number, row in stored_lines(results):
                where = f"{results.name}:{number} {_turn_name(turn_key(row))}"
                turn = turn_key(row)
                if turn not in owner:
                    problems.add(run, "row(s) outside the run's plan", where)
                elif owner[turn] != shard.index:
                    problems.add(run, f"row(s) of another share's units (not {shard})", where)
                if turn in found:
                    problems.add(run, "turn(s) stored twice", f"{where}, also {found[turn]}")
                found.setdefault(turn, f"{run.name}/{where}")
                held[unit_key(row)] += 1
                sizes[unit_key(row)] = int(row.get("unit_size", 0) or 0)
                if dangling_refs(row, payloads, present):
                    problems.add(run, "row(s) pointing at payloads missing from "
                                 f"{PAYLOADS_FILE}", where)
        finally:
            payloads.close()
        for key, rows in held.items():
            if rows < sizes[key]:  # more rows than that are turns stored twice, named
                problems.add(run, "unit(s) cut short", f"{_turn_name(key)} onwards: {rows} of "
                             f"its {sizes[key]} rows")
    by_share = {shard.index: run for run, shard in shares}
    for turn, index in owner.items():
        if turn not in found:
            problems.add(by_share[index], f"planned turn(s) missing (share {index}/{count})",
                         _turn_name(turn))
    report = problems.lines(_fix)
    if report:
        raise MemevalError("the shares do not hold what their plan says, so nothing was "
                           "merged:\n" + "\n".join(report))


def _fix(kind: str) -> str:
    """A missing or cut unit is redone by resuming its share; anything else means the
    folder was changed after it ran, and only a fresh run of the share can be trusted."""
    if kind.startswith(("planned turn", "unit(s) cut")):
        return ("resume that share (its `memeval run --shard K/N --out DIR` command) to run "
                "them, then merge again")
    return "this share was changed after it ran; rerun its command into a new --out and merge"
