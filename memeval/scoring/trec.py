"""A run's rankings in TREC format, so ranx, ir_measures and trec_eval read them.

`memeval export RUN --format trec` writes, into a folder:

- `qrels.txt` — `QID 0 DOC REL` from the gold labels, as the rank metrics read
  them: relevant 1, acceptable 0 (judged, not relevant); one query per turn that
  the summary gives rank metrics (a scored turn that needs memory);
- `run.<selector>.trec` — `QID Q0 DOC RANK SCORE TAG` per selector: the memories
  that reached the model in the selector's order (score n − rank);
  `run.<selector>.r<k>.trec` per repeat when a run has repeats.

A query is `<scenario>/<turn id>`, a document a memory key (whitespace
percent-encoded). Under own history a turn's labels depend on what the selector
already surfaced, so the qrels may differ by selector: then each gets its own
`qrels.<selector>.txt`. A query with no pick is absent from the run file, as
TREC runs go: read it with `trec_eval -c` (ranx: `make_comparable=True`), which
scores it 0, as the summary does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from memeval.errors import MemevalError
from memeval.log import RESULTS_FILE, TurnResult, iter_results
from memeval.scoring.metrics import judged_input, per_turn_frame
from memeval.scoring.retrieval import doc_id, ranked_query

QRELS_FILE = "qrels.txt"


def query_id(scenario: str, turn_id: str) -> str:
    return doc_id(f"{scenario}/{turn_id}")


def file_slug(selector: str) -> str:
    """A selector spec as part of a file name."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", selector).strip("_") or "selector"


def _ranked_rows(results: Iterable[TurnResult]) -> list[dict]:
    """The label judge's scored inputs of every row, and whether each has rank metrics
    (the rule `per_turn_frame` applies: one function decides for both)."""
    inputs = []
    for result in results:
        judge = result.label_judge
        if judge is not None:
            inputs.append(judged_input(result, judge))
    if not inputs:
        raise MemevalError("no row of this run has gold labels (the `gold` judge), so there "
                           "are no qrels to write; run with -j gold")
    frame = per_turn_frame(inputs)
    keep = frame["mrr"].map(lambda v: not math.isnan(v)).tolist()
    return [row for row, ok in zip(inputs, keep, strict=True) if ok]


def export_trec(run_dir: Path, out: Path) -> list[Path]:
    """Write the qrels and one run file per selector (and repeat) of `run_dir` into `out`.

    Returns:
        The files written, qrels first.
    """
    if not (run_dir / RESULTS_FILE).is_file():
        raise MemevalError(f"{run_dir}: no {RESULTS_FILE}; pass a run folder written by "
                           "`memeval run --out DIR`")
    rows = _ranked_rows(iter_results(run_dir))
    repeats = {r["repeat"] for r in rows}
    qrels: dict[str, dict[str, list[tuple[str, int]]]] = {}
    runs: dict[tuple[str, int], list[str]] = {}
    for row in rows:
        query = ranked_query(row["selected"], row["relevant"], row["acceptable"])
        qid = query_id(row["scenario"], row["turn_id"])
        qrels.setdefault(row["selector"], {})[qid] = query.qrels()
        tag = doc_id(row["selector"])
        runs.setdefault((row["selector"], row["repeat"]), []).extend(
            f"{qid} Q0 {doc} {rank} {score:g} {tag}"
            for rank, (doc, score) in enumerate(query.run, start=1))
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    labels = list(qrels.values())
    if all(other == labels[0] for other in labels[1:]):
        written.append(_write(out / QRELS_FILE, _qrels_lines(labels[0])))
    else:
        written += [_write(out / f"qrels.{file_slug(s)}.txt", _qrels_lines(q))
                    for s, q in sorted(qrels.items())]
    for (selector, repeat), lines in sorted(runs.items()):
        suffix = f".r{repeat}" if len(repeats) > 1 else ""
        written.append(_write(out / f"run.{file_slug(selector)}{suffix}.trec", lines))
    for selector in sorted(qrels):  # a selector that picked nothing still gets its file
        path = out / f"run.{file_slug(selector)}.trec"
        if len(repeats) == 1 and not path.exists():
            written.append(_write(path, []))
    return written


def _qrels_lines(qrels: dict[str, list[tuple[str, int]]]) -> list[str]:
    return [f"{qid} 0 {doc} {rel}" for qid, judged in sorted(qrels.items())
            for doc, rel in judged]


def _write(path: Path, lines: Sequence[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path
