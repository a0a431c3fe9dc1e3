"""`summary.json`: a pure function of a run's `TurnResult`s.

Scores come from `memeval.scoring.metrics` (the one place scoring happens); this module
only groups them into the tables a reader, the report, the gate and compare use,
and states what must be loud: error rates, unscored turns, figures that rest on few
turns. It imports nothing from the report: the runner writes the summary first,
then renders the report from it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memeval.jsonenc import json_safe
from memeval.log import TurnResult
from memeval.memdir import MAX_MEMORY_FILES
from memeval.scoring.agreement import agreement
from memeval.scoring.answer_metrics import answer_agreement
from memeval.scoring.catalog import ANSWER, BY_NAME, HEADLINE
from memeval.scoring.metrics import (
    JUDGE_FAILURES,
    TURN_COLUMNS,
    aggregate,
    judged_input,
    pass_hat_k,
    per_turn_frame,
    recall_ceiling,
    repeat_summary,
)
from memeval.usage import Usage

FEW_TURNS = 30  # a figure resting on fewer turns is flagged: its interval is wide
PER_TURN_COLUMNS: tuple[str, ...] = tuple(
    c for c in TURN_COLUMNS
    if c not in ("relevant", "acceptable", "acceptable_selected", "duplicates"))


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as JSON-ready records (undefined numbers as null, numpy as Python)."""
    return json_safe(frame.to_dict(orient="records"))


def label_judge(results: Sequence[TurnResult]) -> str | None:
    """The judge that states its labels (the gold judge): the reference for agreement
    and the report's main view. None when every judge is a model."""
    for result in results:
        name = result.label_judge
        if name is not None:
            return name
    return None


def primary_judge(results: Sequence[TurnResult]) -> str | None:
    """The judge whose scores head the tables: the label judge, else the first."""
    judges = sorted({j for r in results for j in r.judgements})
    return label_judge(results) or (judges[0] if judges else None)


def _usage_totals(results: Iterable[TurnResult]) -> dict[str, dict[str, Any]]:
    selectors: dict[str, Usage] = {}
    judges: dict[str, Usage] = {}
    for r in results:
        selectors[r.selector] = selectors.get(r.selector, Usage()) + r.selector_usage
        for name, judgement in r.judgements.items():
            judges[name] = judges.get(name, Usage()) + judgement.usage
    return {"selectors": {k: v.to_dict() for k, v in selectors.items()},
            "judges": {k: v.to_dict() for k, v in judges.items()}}


def _counts(results: Iterable[TurnResult]) -> dict[str, Any]:
    per_selector: dict[str, Counter[str]] = {}
    for r in results:
        c = per_selector.setdefault(r.selector, Counter())
        c["rows"] += 1
        c["errors"] += bool(r.selector_error)
        c["discarded"] += r.discarded
        if r.skipped:
            c[f"skipped:{r.skipped}"] += 1
    return {k: dict(v) for k, v in per_selector.items()}


def _agreement(results: Sequence[TurnResult], reference: str | None) -> list[dict[str, Any]]:
    """Each other judge against the label judge, per selector (never pooled across
    selectors: each grades different picks), on the turns both judged; intervals
    resample scenarios."""
    if reference is None:
        return []
    judges = sorted({j for r in results for j in r.judgements} - {reference})
    out = []
    for judge, selector in itertools.product(judges, sorted({r.selector for r in results})):
        rows = [r for r in results if r.selector == selector
                and judge in r.judgements and reference in r.judgements]
        if rows:
            result = agreement([r.judgements[judge] for r in rows],
                               [r.judgements[reference] for r in rows],
                               clusters=[r.scenario for r in rows], selector=selector)
            out.append(json_safe(result.to_dict()))
    return out


def _phase1(results: Sequence[TurnResult]) -> dict[str, Any]:
    """Phase 1 against phase 2 on the same turns: the share of relevant project
    memories whose index line survives into the startup context (index mode). A
    memory the index does not reach can only come back through recall."""
    per_turn: dict[tuple[str, str], tuple[str, Mapping[str, bool]]] = {}
    for r in results:
        per_turn.setdefault((r.scenario, r.turn_id), (r.category, r.startup_reachable))
    return _phase1_of(per_turn)


def _phase1_of(per_turn: Mapping[tuple[str, str], tuple[str, Mapping[str, bool]]],
               ) -> dict[str, Any]:
    by_category: dict[str, list[int]] = {}
    for category, reachable in per_turn.values():
        counts = by_category.setdefault(category, [0, 0])
        counts[0] += sum(bool(v) for v in reachable.values())
        counts[1] += len(reachable)
    total_hit = sum(c[0] for c in by_category.values())
    total = sum(c[1] for c in by_category.values())
    return {
        "index_reachable_share": total_hit / total if total else None,
        "relevant_project_memories": total,
        "by_category": {k: {"reachable": v[0], "relevant": v[1],
                            "share": v[0] / v[1] if v[1] else None}
                        for k, v in sorted(by_category.items())},
    }


def alerts(overall: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a reader must not miss: errors, unscored turns, figures on few turns."""
    out = []
    for row in overall:
        who, n = f"{row['selector']} × {row['judge']}", int(row["n_turns"])
        reasons = row.get("unscored_reasons") or {}
        # the judge's rate also counts turns it left ungraded; those are told below
        ungraded = sum(reasons.get(r, 0) for r in JUDGE_FAILURES)
        for kind in ("selector", "judge"):
            failed = round((row.get(f"{kind}_error_rate") or 0) * n)
            if kind == "judge":
                failed = max(0, failed - ungraded)
            if failed:
                out.append(f"{who}: the {kind} errored on {failed} of {n} turns "
                           f"({failed / n:.0%}); those turns are unscored, not counted as "
                           "answers")
        invalid = row.get("selector_invalid_output_rate") or 0
        if invalid:
            out.append(f"{who}: the selector's output was invalid on {round(invalid * n)} "
                       f"of {n} turns ({invalid:.0%}): it named files outside the manifest "
                       "(dropped, as Claude Code drops them; `invalid_picks` per turn) or "
                       "gave a malformed answer")
        other = {k: v for k, v in reasons.items()
                 if k not in ("selector error", "judge error")}
        for reason, count in other.items():
            out.append(f"{who}: {count} of {n} turns unscored ({reason})")
        f1_n = row.get("f1_n") or 0
        if row.get("n_scored") and f1_n < FEW_TURNS:
            out.append(f"{who}: F1 rests on {f1_n} turns (fewer than {FEW_TURNS}); "
                       "its interval is wide")
    return out


def reach_alerts(frame: pd.DataFrame, judge: str | None) -> list[str]:
    """Relevant memories the scan cannot reach, and the recall ceiling they impose on
    every selector (the oracle included): without this line an oracle below 1 reads
    as a broken oracle. One line per run: the scan is the same for every selector."""
    if frame.empty or "unreachable" not in frame.columns:
        return []
    turns = frame[frame["needs_memory"].astype(bool) & frame["scored"].astype(bool)]
    if judge is not None:
        turns = turns[turns["judge"] == judge]
    turns = turns.drop_duplicates(["scenario", "turn_id"])
    missing = turns["unreachable"].fillna(0).astype(int)
    if turns.empty or not missing.any():
        return []
    ceilings = [recall_ceiling(n, u) for n, u in zip(turns["n_relevant"], missing, strict=True)]
    ceiling = sum(ceilings) / len(ceilings)
    return [f"the scan cannot reach {int(missing.sum())} relevant memories on "
            f"{int((missing > 0).sum())} of {len(turns)} turns that need memory (they lie "
            f"beyond the {MAX_MEMORY_FILES} newest files a scan lists, or could not be "
            f"read): mean recall is capped at {ceiling:.3f} for every selector, the oracle "
            "included"]


class SummaryPass:
    """Everything the summary needs from the rows, gathered in one pass that keeps no
    row: the scoring inputs (scalars and key lists), usage and count totals, the
    startup reach per turn and, only for turns more than one judge graded, the
    judgements agreement compares."""

    def __init__(self) -> None:
        self.inputs: list[dict[str, Any]] = []
        self.rows = 0
        self.scenarios: set[str] = set()
        self.turns: set[tuple[str, str]] = set()
        self.selectors: set[str] = set()
        self.judges: set[str] = set()
        self.reference: str | None = None
        self.selector_usage: dict[str, Usage] = {}
        self.judge_usage: dict[str, Usage] = {}
        self.answer_usage: dict[str, Usage] = {}
        self.counts: dict[str, Counter[str]] = {}
        self.reach: dict[tuple[str, str], tuple[str, Mapping[str, bool]]] = {}
        self.pairs: list[tuple[str, str, dict[str, Any]]] = []

    def add(self, r: TurnResult) -> None:
        self.rows += 1
        self.scenarios.add(r.scenario)
        self.turns.add((r.scenario, r.turn_id))
        self.selectors.add(r.selector)
        self.judges.update(r.judgements)
        if self.reference is None:
            self.reference = r.label_judge
        self.selector_usage[r.selector] = self.selector_usage.get(r.selector, Usage()) + \
            r.selector_usage
        for name, judgement in r.judgements.items():
            self.judge_usage[name] = self.judge_usage.get(name, Usage()) + judgement.usage
        c = self.counts.setdefault(r.selector, Counter())
        c["rows"] += 1
        c["errors"] += bool(r.selector_error)
        c["discarded"] += r.discarded
        if r.skipped:
            c[f"skipped:{r.skipped}"] += 1
        if r.answered is not None:
            self.add_answer(r, c)
        self.reach.setdefault((r.scenario, r.turn_id), (r.category, dict(r.startup_reachable)))
        if len(r.judgements) > 1:
            self.pairs.append((r.selector, r.scenario, dict(r.judgements)))
        self.inputs.extend(judged_input(r, judge) for judge in r.judgements)

    def add_answer(self, r: TurnResult, c: Counter[str]) -> None:
        """Count the row's answer and what its answerer and answer judge cost."""
        given = r.answered
        assert given is not None
        c["answered"] += 1
        c["answer_errors"] += given.error is not None
        c["answer_judge_errors"] += given.judge_error is not None
        self.answer_usage[given.answerer] = self.answer_usage.get(given.answerer, Usage()) + \
            given.usage
        if given.judge is not None:
            self.answer_usage[given.judge] = self.answer_usage.get(given.judge, Usage()) + \
                given.judge_usage

    def summary(self, *, run_dir: Path | None = None) -> dict[str, Any]:
        """The summary of the rows added (see the module docstring); asked for once,
        as it hands the per-turn inputs over to the table it builds."""
        frame = per_turn_frame(self.inputs)
        self.inputs = []
        summary: dict[str, Any] = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "run_dir": None if run_dir is None else str(run_dir),
            "rows": self.rows,
            "scenarios": sorted(self.scenarios),
            "turns": len(self.turns),
            "selectors": sorted(self.selectors),
            "judges": sorted(self.judges),
            "primary_judge": self.reference or (min(self.judges) if self.judges else None),
            "cluster": "scenario",
            "overall": [], "by_category": [], "by_scenario": [],
            "usage": {"selectors": {k: v.to_dict() for k, v in self.selector_usage.items()},
                      "judges": {k: v.to_dict() for k, v in self.judge_usage.items()},
                      **({"answers": {k: v.to_dict() for k, v in self.answer_usage.items()}}
                         if self.answer_usage else {})},
            "counts": {k: dict(v) for k, v in self.counts.items()},
            "agreement": self.agreement(),
            "phase1": _phase1_of(self.reach),
            "repeats": None,
            "per_turn": [],
            "alerts": [],
        }
        if frame.empty:
            summary["table"] = "no results"
            return summary
        summary["overall"] = _records(aggregate(frame, by=["selector", "judge"]))
        summary["by_category"] = _records(aggregate(frame, by=["selector", "judge", "category"]))
        summary["by_scenario"] = _records(aggregate(frame, by=["selector", "judge", "scenario"]))
        if int(frame["repeat"].max()) > 0:
            summary["repeats"] = {
                "per_turn": _records(repeat_summary(frame)),
                "pass_hat_k": _records(pass_hat_k(frame)),
            }
        summary["per_turn"] = _records(frame[list(PER_TURN_COLUMNS)])
        summary["alerts"] = alerts(summary["overall"]) + reach_alerts(frame, self.reference) \
            + answer_alerts(summary["counts"])
        summary["answer_gap"] = answer_gap(summary["overall"])
        summary["answer_agreement"] = json_safe(answer_agreement(frame))
        summary["table"] = headline_table(
            summary["overall"], answers=any(c.get("answered") for c in self.counts.values()))
        return summary

    def agreement(self) -> list[dict[str, Any]]:
        """See `_agreement`: each other judge against the label judge, per selector."""
        reference = self.reference
        if reference is None:
            return []
        out = []
        for judge, selector in itertools.product(sorted(self.judges - {reference}),
                                                 sorted(self.selectors)):
            rows = [(scenario, j) for sel, scenario, j in self.pairs
                    if sel == selector and judge in j and reference in j]
            if rows:
                result = agreement([j[judge] for _, j in rows], [j[reference] for _, j in rows],
                                   clusters=[scenario for scenario, _ in rows], selector=selector)
                out.append(json_safe(result.to_dict()))
        return out


def summarize(results: Iterable[TurnResult], *, run_dir: Path | None = None) -> dict[str, Any]:
    """The summary of a run's results (see the module docstring).

    `results` is read once and no row is kept, so `summarize(iter_results(folder))`
    runs in memory that grows only with the compact per-turn table.
    """
    rows = SummaryPass()
    for result in results:
        rows.add(result)
    return rows.summary(run_dir=run_dir)


def answer_alerts(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Answers that could not be given or graded: counted and said, never scored."""
    out = []
    for selector, c in sorted(counts.items()):
        n = c.get("answered", 0)
        for key, what in (("answer_errors", "the answerer failed"),
                          ("answer_judge_errors", "the answer judge gave no verdict")):
            if c.get(key):
                out.append(f"{selector}: {what} on {c[key]} of {n} answered turns; those "
                           "turns have no answer score")
    return out


FLOOR, CEILING = "none", "oracle"  # no memory, and the gold labels' own picks


def answer_gap(overall: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each selector's share of the answer gap between no memory (`none`, the floor)
    and perfect selection (`oracle`, the ceiling): (selector − floor) / (ceiling −
    floor), per judge and answer metric. Empty without both; None where the gap is
    not positive (selection cannot help there) or the selector has no figure."""
    out = []
    for judge in sorted({str(r["judge"]) for r in overall}):
        rows = {str(r["selector"]): r for r in overall if str(r["judge"]) == judge}
        if FLOOR not in rows or CEILING not in rows:
            continue
        for name in ANSWER:
            floor, ceiling = rows[FLOOR].get(name), rows[CEILING].get(name)
            if floor is None or ceiling is None:
                continue
            gap = ceiling - floor
            for selector, row in rows.items():
                value = row.get(name)
                share = None if value is None or gap <= 0 else (value - floor) / gap
                out.append({"judge": judge, "metric": name, "selector": selector,
                            "value": value, "floor": floor, "ceiling": ceiling,
                            "share_of_gap": share})
    return out


def _cell(row: Mapping[str, Any], metric: str) -> str:
    mean, n = row.get(metric), row.get(f"{metric}_n") or 0
    low, high = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
    if mean is None:
        return f"— (n={n})"
    if low is None or high is None:
        return f"{mean:.3f} (n={n})"
    return f"{mean:.3f} [{low:.2f}, {high:.2f}] n={n}"


def shown_metrics(overall: Sequence[Mapping[str, Any]], metrics: Sequence[str] = HEADLINE, *,
                  answers: bool = False) -> tuple[str, ...]:
    """The metrics a table shows: `answer_surfaced` joins them when the scenarios carry
    reference answers (imported benchmarks), so the figure is not in summary.json only;
    the answer stage's metrics only when the run has one (`answers`) or a figure for
    them."""
    kept = tuple(m for m in metrics if BY_NAME[m].stage != "answer" or answers
                 or any((r.get(f"{m}_n") or 0) > 0 for r in overall))
    answered = any((r.get("answer_surfaced_n") or 0) > 0 for r in overall)
    return (*kept, "answer_surfaced") if answered and "answer_surfaced" not in kept else kept


def headline_table(overall: Sequence[Mapping[str, Any]], *, answers: bool = False) -> str:
    """A plain-text table of the headline metrics, each with its 95 % CI and n; the
    arrow beside a name says which way is better (`answers`: the run has an answer
    stage, so its columns show even where every answer failed)."""
    shown = [BY_NAME[m] for m in shown_metrics(overall, answers=answers)]
    header = ["selector", "judge", "scored", *(f"{m.label} {m.arrow}" for m in shown),
              "errors sel/judge"]
    lines = [[str(r["selector"]), str(r["judge"]), f"{r['n_scored']}/{r['n_turns']}",
              *(_cell(r, m.name) for m in shown),
              f"{r['selector_error_rate']:.0%}/{r['judge_error_rate']:.0%}"]
             for r in overall]
    widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*line) for line in lines)])
