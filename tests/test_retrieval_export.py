"""Rank metrics (recall_any@k, recall_all@k, nDCG@k, MRR) and the TREC export: the
files `memeval export --format trec` writes, read back by ir_measures and by ranx,
give the figures summary.json reports."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scenarios import import_locomo
from memeval.scoring.catalog import RANKS, RETRIEVAL, retrieval_name
from memeval.scoring.metrics import per_turn_frame
from memeval.scoring.retrieval import rank_metrics, ranked_query
from tests._locomo_facts import write_locomo_like

SELECTORS = ("none", "bm25?threshold=0.05", "recency?k=3", "oracle")


def test_longmemeval_recall_any_and_recall_all_and_the_rank_figures():
    two_needed = ranked_query(["x.md", "a.md", "y.md", "b.md"], {"a.md", "b.md"}, {"y.md"})
    (found,) = rank_metrics([two_needed])
    assert (found["recall_any_at_1"], found["recall_any_at_3"]) == (0.0, 1.0)
    assert (found["recall_all_at_3"], found["recall_all_at_5"]) == (0.0, 1.0)
    assert found["mrr"] == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert found["ndcg_at_5"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_a_turn_without_picks_scores_zero_and_one_needing_nothing_is_undefined():
    empty, nothing = rank_metrics([ranked_query([], {"a.md"}), ranked_query(["a.md"], set())])
    assert all(v == 0.0 for v in empty.values())
    assert all(math.isnan(v) for v in nothing.values())


def test_rank_metrics_are_per_turn_columns_only_where_recall_is_known():
    frame = per_turn_frame([
        {"turn_id": "t1", "selected": ["b.md", "a.md"], "relevant": ["a.md"]},
        {"turn_id": "t2", "selected": ["a.md"], "relevant": ["a.md"], "recall_known": False},
        {"turn_id": "t3", "selected": ["a.md"], "relevant": ["a.md"], "error": "boom"},
    ])
    assert frame["mrr"].tolist()[0] == 0.5
    assert frame["mrr"].isna().tolist() == [False, True, True]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[dict, Path]:
    folder = tmp_path_factory.mktemp("trec")
    import_locomo(write_locomo_like(folder / "locomo_like.json"), folder / "imported")
    config = RunConfig(scenarios=(str(folder / "imported" / "scenarios" / "*.yaml"),),
                       selectors=SELECTORS)
    summary = evaluate(config, folder / "run", progress=False).summary
    result = CliRunner().invoke(cli, ["export", str(folder / "run"), "--format", "trec",
                                      "--out", str(folder / "trec")])
    assert result.exit_code == 0, result.output
    return summary, folder / "trec"


def _reported(summary: dict, selector: str) -> dict[str, float]:
    (row,) = [r for r in summary["overall"] if r["selector"] == selector]
    return {m: row[m] for m in RETRIEVAL}


def _slug(selector: str) -> str:
    from memeval.scoring.trec import file_slug

    return file_slug(selector)


def test_the_export_read_back_by_ir_measures_gives_the_summary_figures(exported):
    import ir_measures

    summary, trec = exported
    qrels = list(ir_measures.read_trec_qrels(str(trec / "qrels.txt")))
    queries = {q.query_id for q in qrels}
    assert len(queries) == 42  # every question has evidence here (7 × 6)
    measures = {ir_measures.parse_measure(f"{m}@{k}"): retrieval_name(f, k)
                for f, m in (("recall_any", "Success"), ("ndcg", "nDCG")) for k in RANKS}
    measures[ir_measures.parse_measure("RR")] = "mrr"
    for selector in SELECTORS:
        run = list(ir_measures.read_trec_run(str(trec / f"run.{_slug(selector)}.trec")))
        per_query = {name: dict.fromkeys(queries, 0.0) for name in measures.values()}
        for m in ir_measures.iter_calc(list(measures), qrels, run):
            per_query[measures[m.measure]][m.query_id] = m.value
        reported = _reported(summary, selector)
        for name, values in per_query.items():
            assert reported[name] == pytest.approx(sum(values.values()) / len(queries)), \
                (selector, name)
    oracle = _reported(summary, "oracle")
    assert oracle["recall_all_at_5"] == oracle["mrr"] == 1.0
    assert 0 < _reported(summary, "bm25?threshold=0.05")["ndcg_at_5"] < 1


def test_the_export_read_back_by_ranx_gives_the_summary_figures(exported):
    ranx = pytest.importorskip("ranx", reason="ranx is in memeval[dev]")
    summary, trec = exported
    qrels = ranx.Qrels.from_file(str(trec / "qrels.txt"), kind="trec")
    names = {"hit_rate@1": "recall_any_at_1", "hit_rate@5": "recall_any_at_5",
             "ndcg@3": "ndcg_at_3", "ndcg@5": "ndcg_at_5", "mrr": "mrr"}
    for selector in ("bm25?threshold=0.05", "recency?k=3", "oracle"):
        run = ranx.Run.from_file(str(trec / f"run.{_slug(selector)}.trec"), kind="trec")
        found = ranx.evaluate(qrels, run, list(names), make_comparable=True)
        reported = _reported(summary, selector)
        for theirs, ours in names.items():
            assert reported[ours] == pytest.approx(found[theirs]), (selector, ours)
        per_query = ranx.evaluate(qrels, run, "recall@5", return_mean=False,
                                  make_comparable=True)
        recall_all = sum(float(v == 1.0) for v in per_query) / len(per_query)
        assert reported["recall_all_at_5"] == pytest.approx(recall_all)


def test_export_names_the_file_a_folder_lacks(tmp_path):
    result = CliRunner().invoke(cli, ["export", str(tmp_path), "--format", "trec"])
    assert result.exit_code == 2
    assert f"{tmp_path}: no results.jsonl" in result.output and "memeval run" in result.output
