"""Scoring, in one place: per-turn metrics from a judge's verdicts, and their aggregates.

Every figure memeval reports is computed here; summary, report, gate, compare and
the pytest items read it and never re-score. docs/metrics.md states the rules with
worked examples; in short, per turn and judge:

- A turn is **unscored** (all its metrics NaN, counted with a reason) when the
  selector errored, the judge errored, or the judge left a pick ungraded or graded
  keys that were not picked. Failure is never scored as an empty, harmless answer.
- *hits*: distinct picks the judge holds relevant; *false positives*: distinct picks
  neither relevant nor acceptable. Acceptable picks count in no denominator.
- A turn **needs memory** when something is relevant. On those turns:
  precision = hits / (hits + FP) (NaN when nothing surfaced), recall =
  min(hits, R) / R with R = min(|relevant|, 5) (the session surfaces at most five),
  F1 their harmonic mean (0 when recall is 0). Recall, F1 and exact match are NaN
  under a judge that did not grade every candidate (it cannot know what was missed).
- On turns that need **nothing**, precision and recall are undefined (NaN); such a
  turn is a **false alarm** when anything not acceptable surfaced.
- *exact match*: recall 1 (or nothing needed) and no false positive.

Aggregates collapse repeats to a per-turn mean, then give every metric its `n` (the
turns it rests on) and `n_clusters` (the scenarios they come from). Intervals
resample whole scenarios (a cluster bootstrap), because turns of one scenario share
a memdir and a history; proportions (exact match, false alarm) get Wilson intervals.
Means are macro (over turns); `micro_precision`/`micro_recall` pool the counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from memeval.errors import INVALID_OUTPUT, MemevalError
from memeval.labels import memory_key
from memeval.memdir import MAX_SURFACED_PER_TURN
from memeval.scoring.answer_metrics import answer_scores, is_abstention
from memeval.scoring.answers import answer_surfaced
from memeval.scoring.catalog import ANSWER, PER_TURN, POOLED, WILSON
from memeval.scoring.retrieval import rank_metrics, ranked_query
from memeval.scoring.stats import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    Interval,
    cluster_bootstrap_ratios,
    paired_cluster_bootstrap,
    wilson_interval,
)

if TYPE_CHECKING:
    from memeval.log import RecordedTurn, TurnResult

CAP = MAX_SURFACED_PER_TURN  # caps the recall denominator: five relevant fill a turn
POWER = 0.8

Outcome = Literal["abstained", "false_alarm", "miss", "partial", "exact", "unscored"]

ID_COLUMNS: tuple[str, ...] = ("scenario", "turn_id", "category", "selector", "repeat")
REQUIRED_COLUMNS: tuple[str, ...] = ("turn_id", "selected", "relevant")
# Defaults for optional input columns; `selected_keys` is accepted for `selected`.
_DEFAULTS: dict[str, Any] = {
    "scenario": "", "category": "uncategorized", "selector": "", "judge": "", "acceptable": (),
    "surfaced_bytes": 0, "error": None, "judge_error": None, "unscored": None, "repeat": 0,
    "recall_known": True, "needs_memory": None, "covered": 0, "history": "own",
    "answer_surfaced": math.nan, "invalid_picks": 0, "unreachable": 0,
    **dict.fromkeys(ANSWER, math.nan),
}
UNSCORED_SELECTOR = "selector error"
UNSCORED_JUDGE = "judge error"
UNSCORED_UNGRADED = "judge left a memory ungraded"
UNSCORED_WRONG_KEYS = "judge graded memories that were not picked"
JUDGE_FAILURES = (UNSCORED_UNGRADED, UNSCORED_WRONG_KEYS)  # count as judge errors
NOT_A_CANDIDATE = "not-a-candidate"  # the session's reason for a name outside the manifest


@dataclass(frozen=True)
class TurnMetrics:
    """How well one selection served one turn under one judge (module doc for rules).

    Args:
        precision: hits / (hits + false positives); NaN when undefined.
        recall: capped recall in [0, 1]; NaN when nothing is needed or unknown.
        f1: harmonic mean of the two; 0 when recall is 0.
        exact_match: 1.0 for every (capped) relevant memory and no false positive.
        false_alarm: on a turn needing nothing, 1.0 when something surfaced; else NaN.
        hits: distinct relevant memories selected.
        false_positives: distinct selected memories neither relevant nor acceptable.
        acceptable_selected: distinct acceptable memories selected (neither hit nor FP).
        n_selected: distinct memories selected.
        n_relevant: |relevant|, before the cap.
        duplicates: selected entries beyond the first copy of a key.
        needs_memory: something is relevant.
        outcome: `abstained`, `false_alarm`, `miss`, `partial`, `exact` or `unscored`.
    """

    precision: float
    recall: float
    f1: float
    exact_match: float
    false_alarm: float
    hits: int
    false_positives: float
    acceptable_selected: int
    n_selected: int
    n_relevant: int
    duplicates: int
    needs_memory: bool
    outcome: Outcome

    @property
    def miss(self) -> bool:
        return self.outcome == "miss"


def _key_set(value: Any, field: str) -> frozenset[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return frozenset()
    if isinstance(value, str):
        raise MemevalError(f"metrics: {field} must be a list of memory keys, got the string "
                           f"{value!r}; wrap it in a list")
    return frozenset(str(v) for v in value)


def _label_sets(labels: Any) -> tuple[frozenset[str], frozenset[str]]:
    if isinstance(labels, Mapping):
        return (_key_set(labels.get("relevant"), "relevant"),
                _key_set(labels.get("acceptable"), "acceptable"))
    return (_key_set(getattr(labels, "relevant", None), "relevant"),
            _key_set(getattr(labels, "acceptable", None), "acceptable"))


def score_turn(selected: Sequence[str], labels: Any, *, recall_known: bool = True,
               needs_memory: bool | None = None) -> TurnMetrics:
    """Score one turn's selection against the labels its judge holds.

    Args:
        selected: memory keys that surfaced, in order (duplicates allowed).
        labels: a `GoldLabels`, or any mapping/object with `relevant` and `acceptable`.
        recall_known: the judge knows every relevant memory (else recall is NaN).
        needs_memory: whether the turn needs a memory, when the labels cannot say
            (a judge that graded only the picks); default: `relevant` is non-empty.
    """
    relevant, acceptable = _label_sets(labels)
    if isinstance(selected, str):
        raise MemevalError(f"metrics: selected must be a list of memory keys, got {selected!r}")
    picked = list(dict.fromkeys(str(k) for k in selected))
    chosen = set(picked)
    hits = len(chosen & relevant)
    # A key labelled both relevant and acceptable is relevant (GoldLabels.verdict_for).
    ok_extra = len((chosen & acceptable) - relevant)
    false_pos = len(chosen - relevant - acceptable)
    needed = bool(relevant) if needs_memory is None else needs_memory
    nan = math.nan
    if needed:
        precision = hits / (hits + false_pos) if hits + false_pos else nan
        capped = min(len(relevant), CAP)
        recall = (min(hits, capped) / capped if capped else 0.0) if recall_known else nan
        if math.isnan(recall):
            f1 = nan
        elif recall == 0 or not precision:
            f1 = 0.0
        else:
            f1 = 2 * precision * recall / (precision + recall)
        exact = nan if math.isnan(recall) else float(recall == 1.0 and false_pos == 0)
        false_alarm = nan
        outcome: Outcome = "miss" if hits == 0 else ("exact" if exact == 1.0 else "partial")
    else:
        precision = recall = f1 = nan
        exact = float(false_pos == 0)
        false_alarm = float(false_pos > 0)
        outcome = "false_alarm" if false_pos else "abstained"
    return TurnMetrics(precision=precision, recall=recall, f1=f1, exact_match=exact,
                       false_alarm=false_alarm, hits=hits, false_positives=false_pos,
                       acceptable_selected=ok_extra, n_selected=len(picked),
                       n_relevant=len(relevant), duplicates=len(selected) - len(picked),
                       needs_memory=needed, outcome=outcome)


def _unscored_metrics(selected: Sequence[str], relevant: frozenset[str]) -> TurnMetrics:
    picked = list(dict.fromkeys(selected))
    nan = math.nan
    return TurnMetrics(precision=nan, recall=nan, f1=nan, exact_match=nan, false_alarm=nan,
                       hits=0, false_positives=nan, acceptable_selected=0,
                       n_selected=len(picked), n_relevant=len(relevant),
                       duplicates=len(selected) - len(picked), needs_memory=bool(relevant),
                       outcome="unscored")


# -- per turn ---------------------------------------------------------------------------

def _as_records(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> list[dict[str, Any]]:
    if isinstance(rows, pd.DataFrame):
        return rows.to_dict(orient="records")  # type: ignore[return-value]
    return [dict(r) for r in rows]


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) \
        and value != ""


TURN_COLUMNS: tuple[str, ...] = (
    *ID_COLUMNS, "judge", "history", "selected", "relevant", "acceptable", "covered",
    *(m for m in PER_TURN if m not in TurnMetrics.__dataclass_fields__),
    "invalid_picks", "unreachable",
    "selector_error", "judge_error", "selector_invalid_output", "judge_invalid_output",
    "scored", "unscored_reason",
    *TurnMetrics.__dataclass_fields__,
)


def per_turn_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """One scored row per input row (turn × selector × repeat × judge).

    Args:
        rows: dicts or a DataFrame with `turn_id`, `selected` (or `selected_keys`) and
            `relevant`, and optionally `scenario`, `category`, `selector`, `judge`,
            `acceptable`, `surfaced_bytes`, `repeat`, `error` (the selector's),
            `judge_error`, `unscored` (another reason not to score), `recall_known`,
            `needs_memory`; other columns are kept.

    Returns:
        The input columns (key lists as tuples) plus `selector_error`, `judge_error`
        (booleans), `scored`, `unscored_reason` and every `TurnMetrics` field.
    """
    out = []
    for index, raw in enumerate(_as_records(rows)):
        row = {**_DEFAULTS, **raw}
        if "selected" not in raw and "selected_keys" in raw:
            row["selected"] = row.pop("selected_keys")
        missing = [c for c in REQUIRED_COLUMNS if c not in row]
        if missing:
            raise MemevalError(f"metrics: row {index} lacks {', '.join(missing)}; every row "
                               f"needs {', '.join(REQUIRED_COLUMNS)}")
        selected = () if row["selected"] is None else tuple(str(k) for k in row["selected"])
        relevant = _key_set(row["relevant"], "relevant")
        selector_error = _present(row["error"])
        invalid = [INVALID_OUTPUT in str(row[c]) if _present(row[c]) else False
                   for c in ("error", "judge_error")]
        # Names outside the manifest are dropped, as Claude Code drops them; the turn is
        # scored on what is left, but the answer broke the selector's contract.
        invalid[0] = invalid[0] or (row["invalid_picks"] or 0) > 0
        judge_error = _present(row["judge_error"]) or row["unscored"] in JUDGE_FAILURES
        reason = (UNSCORED_SELECTOR if selector_error
                  else UNSCORED_JUDGE if _present(row["judge_error"])
                  else row["unscored"] if _present(row["unscored"]) else None)
        needs = row["needs_memory"]
        score = _unscored_metrics(selected, relevant) if reason else score_turn(
            selected, row, recall_known=bool(row["recall_known"]),
            needs_memory=None if needs is None or (isinstance(needs, float) and math.isnan(needs))
            else bool(needs))
        if reason:  # no evidence either way
            row.update(dict.fromkeys(("answer_surfaced", *ANSWER), math.nan))
        row.update(selected=selected, relevant=tuple(sorted(relevant)),
                   acceptable=tuple(sorted(_key_set(row["acceptable"], "acceptable"))),
                   selector_error=selector_error, judge_error=judge_error,
                   selector_invalid_output=invalid[0], judge_invalid_output=invalid[1],
                   scored=reason is None, unscored_reason=reason,
                   **vars(score))  # scalars only: `asdict`'s deep copy buys nothing
        out.append(row)
    if not out:
        return pd.DataFrame(columns=list(TURN_COLUMNS))
    ranked = [ranked_query(r["selected"], r["relevant"], r["acceptable"])
              if r["scored"] and r["needs_memory"] and not math.isnan(r["recall"]) else None
              for r in out]
    for row, ranks in zip(out, rank_metrics(ranked), strict=True):
        row.update(ranks)
    frame = pd.DataFrame(out)
    frame["surfaced_bytes"] = pd.to_numeric(frame["surfaced_bytes"]).fillna(0)  # every turn
    for column in PER_TURN:
        if column != "surfaced_bytes":  # undefined on some turns: NaN, so float
            frame[column] = frame[column].astype(float)
    return frame


def judged_input(result: TurnResult, judge: str) -> dict[str, Any]:
    """One `per_turn_frame` input row: `result` under the labels `judge` holds.

    The judge's own `relevant`/`acceptable` are used when it states them (the gold
    judge always does); otherwise they are read from its verdicts, and recall is
    known only when it graded every candidate.
    """
    judgement = result.judgements[judge]
    graded = judgement.candidate_verdicts
    verdicts = [*judgement.verdicts, *(graded or ())]
    if judgement.relevant is not None:
        relevant, acceptable = set(judgement.relevant), set(judgement.acceptable)
        recall_known, needs = True, None
    else:
        relevant = {v.key for v in verdicts if v.verdict == "relevant"}
        acceptable = {v.key for v in verdicts if v.verdict == "acceptable"} - relevant
        recall_known = graded is not None
        needs = None if recall_known else bool(set(result.relevant) - set(result.in_context))
    # Context-aware: what is already in the transcript is covered, not missed; a
    # memory that was relevant earlier is at worst acceptable when picked again.
    covered = relevant & set(result.in_context)
    relevant -= covered
    acceptable |= set(result.earlier_relevant) - relevant
    by_key = {v.key: v.verdict for v in judgement.verdicts}
    picks = set(result.selected)
    unscored = None
    if set(by_key) - picks:
        unscored = UNSCORED_WRONG_KEYS
    elif any(by_key.get(k, "unscored") == "unscored" for k in picks) or \
            any(v.verdict == "unscored" for v in graded or ()):
        # An ungraded candidate would silently shrink "relevant" and flatter recall.
        unscored = UNSCORED_UNGRADED
    return {
        "scenario": result.scenario, "turn_id": result.turn_id, "turn_index": result.turn_index,
        "category": result.category, "selector": result.selector, "judge": judge,
        "repeat": result.repeat, "selected": result.selected,
        "relevant": sorted(relevant), "acceptable": sorted(acceptable),
        "recall_known": recall_known, "needs_memory": needs, "covered": len(covered),
        "history": result.history,
        "surfaced_bytes": result.surfaced_bytes, "error": result.selector_error,
        "judge_error": judgement.error, "unscored": unscored,
        "skipped": result.skipped, "discarded": result.discarded,
        "invalid_picks": invalid_picks(result.record),
        "unreachable": len(relevant & unreachable_keys(result.record)),
        "answer_surfaced": math.nan if result.answer is None else float(answer_surfaced(
            result.answer, (m.content for m in result.record.delivered))),
        **answer_columns(result),
    }


def answer_columns(result: TurnResult) -> dict[str, float]:
    """The answer metrics of a row: token F1 and exact match against the reference,
    and the answer judge's verdict (NaN where undefined; see `answer_metrics`)."""
    given = result.answered
    if given is None:
        return dict.fromkeys(ANSWER, math.nan)
    f1, em = answer_scores(given.text, result.answer, abstention=is_abstention(result.tags),
                           failed=given.error is not None)
    correct = given.correct
    return {"answer_f1": f1, "answer_em": em,
            "answer_correct": math.nan if correct is None else correct}


def invalid_picks(record: RecordedTurn) -> int:
    """Names a selector gave that were not in the manifest it was shown (files that do
    not exist, or are not offered): dropped by the session, counted here."""
    return sum(1 for d in record.dropped if d.get("reason") == NOT_A_CANDIDATE)


def unreachable_keys(record: RecordedTurn) -> set[str]:
    """Memory keys the turn's scans left out (beyond the 200 newest, unreadable, ...):
    no selector could pick them, so a label needing one caps every selector's recall."""
    return {memory_key(d.scope, str(s["path"])) for d in record.dirs
            for s in d.skipped if s.get("path") not in (None, ".")}


def recall_ceiling(n_relevant: float, unreachable: float) -> float:
    """The best recall any selector can reach on a turn whose scan missed `unreachable`
    of its `n_relevant` relevant memories (the cap of five applies to both)."""
    capped = min(n_relevant, CAP)
    return min(n_relevant - unreachable, capped) / capped if capped else math.nan


def score_results(results: Iterable[TurnResult]) -> pd.DataFrame:
    """The scored table of a run: one row per turn × selector × repeat × judge."""
    return per_turn_frame([judged_input(r, judge) for r in results for judge in r.judgements])


# -- aggregates -------------------------------------------------------------------------

def _per_turn(frame: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """Collapse repeats: one row per turn, each metric the mean over its scored repeats."""
    identity = [c for c in ("selector", "judge", "scenario", "turn_id") if c in frame.columns]
    group = [*keys, *(c for c in identity if c not in keys)]
    flags = ["selector_error", "judge_error", "selector_invalid_output", "judge_invalid_output",
             "scored", "hits", "n_relevant"]
    # Built from numpy columns in one frame: a pandas copy, three `where`s, a masked
    # `.loc` write and a cast per column cost more than the mean itself.
    numeric: dict[str, Any] = {c: frame[c].array for c in group}  # dtype kept, no index
    numeric.update((c, frame[c].to_numpy(dtype=float)) for c in [*metrics, *flags])
    needs = frame["needs_memory"].astype(bool).to_numpy()
    unscored = ~frame["scored"].astype(bool).to_numpy()
    hits = numeric["hits"]
    capped = np.where(needs & frame["recall"].notna().to_numpy(),
                      np.minimum(numeric["n_relevant"], CAP), math.nan)
    recalled = np.minimum(hits, capped)
    judged = np.where(needs, hits + frame["false_positives"].to_numpy(dtype=float), math.nan)
    numeric["hits"] = np.where(unscored, math.nan, hits)
    numeric.update(capped=capped, recalled=np.where(unscored, math.nan, recalled),
                   judged=np.where(unscored, math.nan, judged))
    return pd.DataFrame(numeric).groupby(group, dropna=False, sort=True).mean().reset_index()


def _reasons(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame.loc[~frame["scored"].astype(bool), "unscored_reason"].value_counts()
    return {str(k): int(v) for k, v in counts.items()}


def _put(row: dict[str, Any], name: str, est: Interval) -> None:
    row.update({name: est.value, f"{name}_ci_low": est.low, f"{name}_ci_high": est.high,
                f"{name}_n": est.n, f"{name}_n_clusters": est.n_clusters})


def aggregate(frame: pd.DataFrame, by: Sequence[str] = ("selector", "category", "scenario"), *,
              metrics: Sequence[str] = PER_TURN, confidence: float = CONFIDENCE,
              n_resamples: int = N_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """Each metric per group, with its n, n_clusters and interval.

    Args:
        frame: a `per_turn_frame` / `score_results` table.
        by: grouping columns; `("selector", "judge")` gives the headline table.
        metrics: which metric columns to summarise.
        confidence: the intervals' coverage.
        n_resamples: bootstrap resamples per interval.
        seed: makes the intervals reproducible.

    Returns:
        One row per group: the `by` columns, `n_turns`, `n_scored`, `unscored` (count),
        `unscored_reasons`, `n_clusters`, `selector_error_rate`, `judge_error_rate`,
        `error_rate` (either), `selector_invalid_output_rate` and
        `judge_invalid_output_rate` (answers that did not fit the JSON shape asked
        for), and per metric `<m>`, `<m>_ci_low`, `<m>_ci_high`,
        `<m>_n`, `<m>_n_clusters`; plus `micro_precision` and `micro_recall` (each
        with the same companions).
    """
    by = list(by)
    unknown = [c for c in [*by, *metrics] if c not in frame.columns]
    if unknown:
        raise MemevalError(f"aggregate: no column {', '.join(unknown)} in the frame; "
                           f"it has {', '.join(map(str, frame.columns))}")
    columns = [*by, "n_turns", "n_scored", "unscored", "unscored_reasons", "n_clusters",
               "selector_error_rate", "judge_error_rate", "error_rate",
               "selector_invalid_output_rate", "judge_invalid_output_rate"]
    for m in [*metrics, *POOLED]:
        columns += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m}_n", f"{m}_n_clusters"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    turns = _per_turn(frame, by, metrics)
    # Only unscored rows have reasons; grouping just those skips every clean group.
    unscored_rows = frame.loc[~frame["scored"].astype(bool)]
    grouped_rows = unscored_rows.groupby(by, dropna=False, sort=True) if by \
        else [((), unscored_rows)]
    reasons = {(k if isinstance(k, tuple) else (k,)): _reasons(g) for k, g in grouped_rows}
    # Per group, plain arrays sliced from whole columns read once: a pandas sub-frame
    # and a column lookup per figure cost more than the figures on a small group.
    if by:
        grouper = turns.groupby(by, dropna=False, sort=True)
        sizes = grouper.size()
        keys = [k if isinstance(k, tuple) else (k,) for k in sizes.index]
        order = np.argsort(grouper.ngroup().to_numpy(), kind="stable")
        members = np.split(order, np.cumsum(sizes.to_numpy())[:-1])
    else:
        keys, members = [()], [np.arange(len(turns))]
    flags = ("selector_error", "judge_error", "selector_invalid_output", "judge_invalid_output")
    column = {c: turns[c].to_numpy(dtype=float)
              for c in {*metrics, *flags, "scored", "hits", "judged", "recalled", "capped"}}
    scenarios = turns["scenario"].tolist() if "scenario" in turns else None
    intervals = [m not in WILSON for m in metrics] + [True, True]  # Wilson's instead
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    out = []
    for key, rows in zip(keys, members, strict=True):
        clusters = [scenarios[i] for i in rows] if scenarios is not None else [0] * len(rows)
        row: dict[str, Any] = dict(zip(by, key, strict=True))
        scored = column["scored"][rows] > 0
        selector_error, judge_error = column["selector_error"][rows], column["judge_error"][rows]
        row.update(n_turns=len(rows), n_scored=int(scored.sum()),
                   unscored=int((~scored).sum()), unscored_reasons=reasons.get(key, {}),
                   n_clusters=len(set(clusters)),
                   selector_error_rate=float(np.mean(selector_error)),
                   judge_error_rate=float(np.mean(judge_error)),
                   error_rate=float(np.mean((selector_error + judge_error) > 0)),
                   selector_invalid_output_rate=float(
                       np.mean(column["selector_invalid_output"][rows])),
                   judge_invalid_output_rate=float(
                       np.mean(column["judge_invalid_output"][rows])))
        values = [column[m][rows] for m in metrics]
        # A mean is the ratio Σ values / Σ ones over the defined values.
        numerators = [*values, column["hits"][rows], column["recalled"][rows]]
        denominators = [*(np.where(np.isnan(v), np.nan, 1.0) for v in values),
                        column["judged"][rows], column["capped"][rows]]
        found = cluster_bootstrap_ratios(numerators, denominators, clusters, intervals=intervals,
                                  **options)
        for m, v, est in zip(metrics, values, found, strict=False):
            if m in WILSON:
                bounds = wilson_interval(round(np.nansum(v)), est.n, confidence=confidence)
                est = Interval(est.value, bounds.low, bounds.high, est.n, est.n_clusters)
            _put(row, m, est)
        _put(row, "micro_precision", found[-2])
        _put(row, "micro_recall", found[-1])
        out.append(row)
    return pd.DataFrame(out, columns=columns)


# -- paired comparison ----------------------------------------------------------------

@dataclass(frozen=True)
class PairedComparison:
    """Selector A against selector B on the turns both ran.

    Args:
        metric: the compared metric.
        selector_a: A's name (from the frame's `selector` column).
        selector_b: B's name.
        n_pairs: turns with the metric defined for both.
        mean_a: A's mean over those turns.
        mean_b: B's mean over those turns.
        mean_diff: mean of A − B per turn.
        ci_low: lower bound of the paired bootstrap CI of `mean_diff`.
        ci_high: upper bound.
        sd_diff: standard deviation of the per-turn differences.
        mde: the smallest |difference| a paired t-test on `n_pairs` turns detects
            with `power` at the CI's level; NaN below two pairs.
        power: the power `mde` is computed for.
        underpowered: the reported difference is below `mde` (or too few pairs).
        a_only: turns exact-matched by A but not B (McNemar's discordant pair).
        b_only: turns exact-matched by B but not A.
        mcnemar_p: exact two-sided McNemar p-value (binomial test on the discordant turns).
        n_clusters: scenarios the pairs come from (the bootstrap resamples them).
        p_value: two-sided t-test on per-scenario mean differences (NaN below two
            scenarios); what Holm's correction adjusts across categories.
        unmatched_a: A's turns absent from B (not compared).
        unmatched_b: B's turns absent from A.
        warning: a sentence for the report when `underpowered`, else None.
    """

    metric: str
    selector_a: str
    selector_b: str
    n_pairs: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    sd_diff: float
    mde: float
    power: float
    underpowered: bool
    a_only: int
    b_only: int
    mcnemar_p: float
    unmatched_a: int
    unmatched_b: int
    n_clusters: int = 0
    p_value: float = math.nan
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def minimal_detectable_difference(sd: float, n: int, *, alpha: float = 1 - CONFIDENCE,
                                  power: float = POWER) -> float:
    """Smallest mean difference a two-sided paired t-test on `n` pairs finds with `power`.

    Solved on the noncentral t distribution, not the normal shortcut, because
    memeval's suites are small (tens of turns) where the two differ.
    """
    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 0.0
    df = n - 1
    t_crit = stats.t.ppf(1 - alpha / 2, df)

    def shortfall(effect: float) -> float:
        nc = effect * math.sqrt(n)
        achieved = stats.nct.sf(t_crit, df, nc) + stats.nct.cdf(-t_crit, df, nc)
        # Far in the tail scipy's nct can return NaN where the power is simply ~1.
        return float(np.nan_to_num(achieved, nan=1.0)) - power

    # Four times the normal-approximation answer always brackets the root.
    upper = 4 * (t_crit + stats.norm.ppf(power)) / math.sqrt(n)
    effect = optimize.brentq(shortfall, 0.0, upper)  # standardized effect size d
    return float(effect * sd)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: are discordant turns split unevenly between A and B?"""
    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)


def _selector_name(frame: pd.DataFrame) -> str:
    if "selector" not in frame.columns or frame.empty:
        return ""
    names = sorted({str(s) for s in frame["selector"]})
    return names[0] if len(names) == 1 else ",".join(names)


def paired_turns(frame_a: pd.DataFrame, frame_b: pd.DataFrame,
                 metrics: Sequence[str]) -> pd.DataFrame:
    """The turns both frames hold, repeats averaged: `scenario`, `turn_id`, `<m>_a`, `<m>_b`.

    The one pairing rule of compare, gate and calibration: turns match on
    (`scenario`, `turn_id`); a value stays NaN where a side left the metric undefined.
    """
    keys = ["scenario", "turn_id"]

    def turns(frame: pd.DataFrame) -> pd.DataFrame:
        if frame.empty:
            return pd.DataFrame(columns=[*keys, *metrics])
        table = frame[[*keys, *metrics]].copy()
        for m in metrics:
            table[m] = table[m].astype(float)
        return table.groupby(keys, sort=True).mean().reset_index()

    return turns(frame_a).merge(turns(frame_b), on=keys, how="inner", suffixes=("_a", "_b"))


def paired_compare(frame_a: pd.DataFrame, frame_b: pd.DataFrame, metric: str = "f1", *,
                   confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                   seed: int = SEED, power: float = POWER) -> PairedComparison:
    """Compare two selectors on the same turns.

    Turns are matched on (`scenario`, `turn_id`); repeats are averaged per turn first.
    The CI resamples whole scenarios, keeping each turn's pair together (a paired
    cluster bootstrap); unscored turns of either side are left out of the pairs;
    McNemar uses per-turn exact match (majority of repeats; a tie is not a match).

    Args:
        frame_a: `per_turn_frame` of selector A.
        frame_b: `per_turn_frame` of selector B.
        metric: the metric to compare (`f1`, `recall`, `precision`, ...).
        confidence: the CI's coverage; also sets the test level of `mde`.
        n_resamples: bootstrap resamples.
        seed: makes the CI reproducible.
        power: for the minimal detectable difference.
    """
    for name, frame in (("A", frame_a), ("B", frame_b)):
        missing = [c for c in ("scenario", "turn_id", metric, "exact_match")
                   if c not in frame.columns]
        if missing and not frame.empty:
            raise MemevalError(f"paired_compare: frame {name} lacks {', '.join(missing)}; "
                               "pass per_turn_frame(...) output")
    joined = paired_turns(frame_a, frame_b, sorted({metric, "exact_match"}))
    a_keys, b_keys = (set() if f.empty else set(zip(f["scenario"], f["turn_id"], strict=True))
                      for f in (frame_a, frame_b))
    col_a, col_b = f"{metric}_a", f"{metric}_b"
    values_a = joined[col_a].to_numpy(dtype=float)
    values_b = joined[col_b].to_numpy(dtype=float)
    defined = ~(np.isnan(values_a) | np.isnan(values_b))
    diffs = values_a[defined] - values_b[defined]
    n = int(diffs.size)
    clusters = joined["scenario"].to_numpy()[defined]
    est = paired_cluster_bootstrap(diffs, clusters, confidence=confidence,
                                   n_resamples=n_resamples, seed=seed)
    mean_diff, low, high = est.value, est.low, est.high
    per_cluster = pd.Series(diffs).groupby(clusters).mean().to_numpy()
    p_value = math.nan
    if per_cluster.size >= 2:
        if np.ptp(per_cluster) == 0:  # no spread: the t statistic is undefined
            p_value = 1.0 if per_cluster[0] == 0 else 0.0
        else:
            p_value = float(stats.ttest_1samp(per_cluster, 0.0).pvalue)
    sd = float(np.std(diffs, ddof=1)) if n >= 2 else math.nan
    mde = minimal_detectable_difference(sd, n, alpha=1 - confidence, power=power)
    underpowered = n < 2 or math.isnan(mde) or abs(mean_diff) < mde
    both = ~(np.isnan(joined["exact_match_a"].to_numpy(dtype=float))
             | np.isnan(joined["exact_match_b"].to_numpy(dtype=float)))
    exact_a = (joined["exact_match_a"].to_numpy(dtype=float) > 0.5) & both
    exact_b = (joined["exact_match_b"].to_numpy(dtype=float) > 0.5) & both
    a_only = int(np.sum(exact_a & ~exact_b))
    b_only = int(np.sum(exact_b & ~exact_a))
    warning = None
    if underpowered:
        if n < 2:
            warning = (f"only {n} paired turn(s) for {metric}: too few to resolve any "
                       "difference; add turns or scenarios")
        else:
            warning = (f"{n} paired turns resolve differences of at least {mde:.3f} in "
                       f"{metric} at {power:.0%} power; the observed {mean_diff:+.3f} is "
                       "smaller, so it may be noise")
    return PairedComparison(
        metric=metric, selector_a=_selector_name(frame_a), selector_b=_selector_name(frame_b),
        n_pairs=n,
        mean_a=float(np.mean(values_a[defined])) if n else math.nan,
        mean_b=float(np.mean(values_b[defined])) if n else math.nan,
        mean_diff=mean_diff, ci_low=low, ci_high=high, sd_diff=sd, mde=mde, power=power,
        underpowered=underpowered, a_only=a_only, b_only=b_only,
        mcnemar_p=mcnemar_exact(a_only, b_only),
        unmatched_a=len(a_keys - b_keys), unmatched_b=len(b_keys - a_keys),
        n_clusters=est.n_clusters, p_value=p_value, warning=warning,
    )


# -- repeats ----------------------------------------------------------------------------

REPEAT_KEYS: tuple[str, ...] = ("selector", "judge", "scenario", "turn_id")


def flip_rate(sets: Sequence[frozenset[str]]) -> float:
    """Share of unordered pairs of repeats whose selected sets differ (order-free)."""
    n = len(sets)
    if n < 2:
        return math.nan
    counts = pd.Series(sets).value_counts().to_numpy()
    same = float(np.sum(counts * (counts - 1) / 2))
    return 1 - same / (n * (n - 1) / 2)


def repeat_summary(frame: pd.DataFrame, *, metrics: Sequence[str] = PER_TURN) -> pd.DataFrame:
    """Per turn, selector and judge over its repeats: mean metrics, flip rate, pass-all.

    `flip_rate` is the share of unordered pairs of repeats whose selected *set*
    differs: 0 is a stable selector, 1 never picks the same set twice, NaN means a
    single repeat. It does not depend on the order of the repeats. `pass_all` asks
    that every *scored* repeat exact-matched (NaN when none was scored).

    Returns:
        Columns `selector`, `judge`, `scenario`, `turn_id`, `n_repeats`,
        `distinct_sets`, `flip_rate`, `pass_all` and the metric means.
    """
    keys = [k for k in REPEAT_KEYS if k in frame.columns]
    columns = [*keys, "n_repeats", "distinct_sets", "flip_rate", "pass_all", *metrics]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for key, group in frame.groupby(keys, sort=True, dropna=False):
        sets = [frozenset(s) for s in group["selected"]]
        exact = group["exact_match"].to_numpy(dtype=float)
        exact = exact[~np.isnan(exact)]
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(n_repeats=len(sets), distinct_sets=len(set(sets)), flip_rate=flip_rate(sets),
                   pass_all=float(np.all(exact == 1.0)) if exact.size else math.nan)
        for m in metrics:
            row[m] = float(np.nanmean(group[m].to_numpy(dtype=float))) \
                if group[m].notna().any() else math.nan
        out.append(row)
    return pd.DataFrame(out, columns=columns)


def pass_hat_k(frame: pd.DataFrame, *, k_max: int | None = None,
               success: str = "exact_match") -> pd.DataFrame:
    """pass^k per selector and judge: the chance that k repeats of a turn all succeed.

    Per turn with n scored repeats of which c succeeded, the unbiased estimate is
    C(c, k) / C(n, k); the selector's pass^k is its mean over turns. Unscored repeats
    are left out (never counted as successes); a turn with fewer than k scored
    repeats does not enter pass^k. pass^1 is the plain success rate.

    Args:
        frame: a `per_turn_frame` with repeats.
        k_max: the largest k (default: the most repeats any turn has).
        success: the 0/1 column that means a repeat succeeded.

    Returns:
        One row per selector and judge: `selector`, `judge`, `n_turns`, then `pass^1`
        … `pass^k_max`, each with `pass^k_n` (turns it rests on).
    """
    group_keys = [k for k in ("selector", "judge") if k in frame.columns]
    if frame.empty:
        return pd.DataFrame(columns=[*group_keys, "n_turns"])
    scored = frame[frame[success].notna()].assign(_ok=lambda f: f[success].astype(float) > 0.5)
    turn_keys = [k for k in REPEAT_KEYS if k in frame.columns]
    counts = scored.groupby(turn_keys, sort=True)["_ok"].agg(["sum", "count"]).reset_index()
    largest = int(counts["count"].max()) if k_max is None else k_max
    if counts.empty or largest < 1 or largest > int(counts["count"].max()):
        raise MemevalError(f"pass_hat_k: k_max={k_max} needs that many scored repeats of "
                           "some turn; the run has fewer")
    rows = []
    for key, group in counts.groupby(group_keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {**dict(zip(group_keys, key, strict=True)), "n_turns": len(group)}
        c, n = group["sum"].to_numpy(), group["count"].to_numpy()
        for k in range(1, largest + 1):
            enough = n >= k
            ratios = special.comb(c[enough], k) / special.comb(n[enough], k)
            row[f"pass^{k}"] = float(np.mean(ratios)) if enough.any() else math.nan
            row[f"pass^{k}_n"] = int(enough.sum())
        rows.append(row)
    return pd.DataFrame(rows)
