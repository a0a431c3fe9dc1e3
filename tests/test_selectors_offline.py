"""The offline selectors: bm25, recency, random, none, all, oracle."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.log import iter_results
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.selectors import (
    BM25Selector,
    OracleSelector,
    RandomSelector,
    SelectionRequest,
    resolve_selector,
    safe_select,
)
from memeval.selectors.lexical import bm25_scores, candidate_text, tokenize

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios"


@dataclass(frozen=True)
class Header:
    """The fields of a memory header a selector reads (duck-typed MemoryHeader)."""

    filename: str
    description: str | None
    mtime_ms: float
    type: str | None = None
    file_path: str = ""


MEMDIR = (
    Header("testing.md", "run the test suite against a real postgres database", 5_000),
    Header("ci/github-actions.md", "the CI pipeline runs on GitHub Actions nightly", 4_000),
    Header("style.md", "prefer black formatting and short functions", 3_000),
    Header("user_role.md", "the user is a senior backend engineer", 2_000),
    Header("deploy.md", "deploys go through the staging cluster first", 1_000),
    Header("db-migrations.md", "never edit an applied migration; add a new one", 6_000),
)


def request(query: str, headers: tuple[Header, ...] = MEMDIR, **extra: object) -> SelectionRequest:
    return SelectionRequest(query=query, manifest="", candidates=headers,  # type: ignore[arg-type]
                            memory_dir=Path("/mem"), **extra)  # type: ignore[arg-type]


# -- bm25 ---------------------------------------------------------------------------

def test_candidate_text_reads_filename_slugs_as_words() -> None:
    assert candidate_text("ci/github-actions.md", "nightly") == "ci github actions nightly"
    assert candidate_text("user_role.md", None) == "user role"


def test_tokenize_stems_and_drops_stop_words() -> None:
    assert tokenize(["How should I run the tests?"]) == [["run", "test"]]


def test_bm25_picks_the_memory_whose_words_match() -> None:
    result = BM25Selector().select(request("how do I run the test suite against postgres?"))
    assert result.ok
    assert result.names == ("testing.md",)  # the CI memory shares "run", below the bar
    assert "testing.md=" in (result.raw_output or "")


def test_bm25_matches_filename_words_too() -> None:
    result = BM25Selector(threshold=0.0).select(request("github actions is red again"))
    assert result.names[0] == "ci/github-actions.md"


def test_bm25_abstains_when_nothing_shares_a_word() -> None:
    result = BM25Selector(threshold=0.0).select(request("what is the capital of France"))
    assert result.ok and result.names == ()
    assert "none matched" in (result.raw_output or "")


def test_bm25_threshold_and_k_limit_the_pick() -> None:
    query = "database migration test suite deploy staging"
    loose = BM25Selector(k=5, threshold=0.0).select(request(query)).names
    assert len(loose) >= 3
    assert BM25Selector(k=2, threshold=0.0).select(request(query)).names == loose[:2]
    scores = bm25_scores(query, [candidate_text(h.filename, h.description) for h in MEMDIR])
    high = sorted(scores)[-1]
    assert BM25Selector(threshold=high + 1).select(request(query)).names == ()


def test_bm25_with_no_candidates_or_no_terms() -> None:
    assert BM25Selector().select(request("run tests", headers=())).names == ()
    assert BM25Selector(threshold=0).select(request("the and of")).names == ()
    blank = (Header("a.md", None, 1), Header("b.md", "", 2))
    assert BM25Selector(threshold=0).select(request("anything at all", headers=blank)).names == ()


# -- recency, all, none ---------------------------------------------------------------

def test_recency_picks_the_newest_k_by_mtime() -> None:
    names = resolve_selector("recency?k=3").select(request("anything")).names
    assert names == ("db-migrations.md", "testing.md", "ci/github-actions.md")


def test_none_always_abstains_without_error() -> None:
    result = resolve_selector("none").select(request("run the tests"))
    assert result.ok and result.names == ()


# -- random ------------------------------------------------------------------------------

def test_random_is_reproducible_per_seed_turn_and_repeat() -> None:
    sel = RandomSelector(k=3, seed=7)
    first = sel.select(request("q", turn_id="t1")).names
    assert sel.select(request("q", turn_id="t1")).names == first
    assert RandomSelector(k=3, seed=7).select(request("q", turn_id="t1")).names == first
    others = {sel.select(request("q", turn_id=f"t{i}", repeat=r)).names
              for i in range(5) for r in range(3)}
    assert len(others) > 1  # turns and repeats get their own draws


def test_random_draws_a_stream_per_scenario_and_turn() -> None:
    sel = RandomSelector(k=2, seed=0)
    draws = {sel.select(replace(request("q", turn_id="t1"), scenario=f"s{i}")).names
             for i in range(8)}
    assert len(draws) > 1  # scenarios sharing the turn id `t1` do not share its draw


def test_a_run_hands_random_the_scenario(tmp_path: Path) -> None:
    """Two scenarios alike but for their id draw different picks at the same turns."""
    source = FIXTURES / "a-dbt-warehouse.yaml"
    folder = tmp_path / "scenarios"
    folder.mkdir()
    text = source.read_text(encoding="utf-8")
    for name in ("copy-a", "copy-b"):
        (folder / f"{name}.yaml").write_text(
            text.replace("id: a-dbt-warehouse", f"id: {name}", 1), encoding="utf-8")
    config = RunConfig(scenarios=(str(folder),), selectors=("random?k=2",), concurrency=1)
    (tmp_path / "memdirs").symlink_to(FIXTURES.parent / "memdirs")  # where `from:` looks
    evaluate(config, tmp_path / "run", progress=False)
    picks: dict[str, list[tuple[str, ...]]] = {}
    for row in iter_results(tmp_path / "run"):
        picks.setdefault(row.scenario, []).append(row.selected)
    assert len(picks["copy-a"]) == len(picks["copy-b"]) > 1
    assert picks["copy-a"] != picks["copy-b"]


@settings(max_examples=50, deadline=None)
@given(k=st.integers(0, 8), seed=st.integers(0, 2**31), n=st.integers(0, len(MEMDIR)))
def test_random_picks_distinct_candidates(k: int, seed: int, n: int) -> None:
    names = RandomSelector(k=k, seed=seed).select(request("q", headers=MEMDIR[:n])).names
    assert len(names) == min(k, n)
    assert len(set(names)) == len(names)
    assert set(names) <= {h.filename for h in MEMDIR[:n]}


# -- oracle ------------------------------------------------------------------------------

def oracle(labels: tuple[str, ...] | None) -> OracleSelector:
    """An oracle handed the turn's labels the way the harness hands them over."""
    selector = OracleSelector()
    selector.use_labels(None if labels is None else {"project": labels})
    return selector


def test_oracle_returns_the_relevant_candidates_in_label_order() -> None:
    result = oracle(("style.md", "testing.md", "style.md")).select(request("q"))
    assert result.names == ("style.md", "testing.md")


def test_oracle_skips_relevant_files_that_are_no_longer_candidates() -> None:
    result = oracle(("gone.md", "deploy.md")).select(request("q"))
    assert result.names == ("deploy.md",)
    assert "1 not among the candidates" in (result.raw_output or "")


def test_oracle_without_labels_is_an_error_not_an_empty_pick() -> None:
    result = OracleSelector().select(request("q", turn_id="t9"))
    assert not result.ok and result.names == ()
    assert "t9" in (result.error or "")


def test_a_selector_request_carries_no_labels() -> None:
    """No third-party selector can read gold: the request has no field that holds it."""
    fields = set(SelectionRequest.__dataclass_fields__)
    assert not {f for f in fields if "gold" in f or "label" in f or "relevant" in f}


def test_oracle_with_nothing_relevant_abstains() -> None:
    result = oracle(()).select(request("q"))
    assert result.ok and result.names == ()


@pytest.mark.parametrize("spec", ["bm25", "recency", "random", "none", "all", "oracle"])
def test_every_offline_selector_answers_through_safe_select(spec: str) -> None:
    selector = resolve_selector(spec)
    if hasattr(selector, "use_labels"):
        selector.use_labels({"project": ()})
    result = safe_select(selector, request("run tests"))
    assert result.ok, result.error
    assert len(result.names) <= 5 or spec == "all"  # all asks for too much on purpose
    assert set(result.names) <= {h.filename for h in MEMDIR}
    assert result.raw_output


def test_async_select_matches_sync() -> None:
    import asyncio

    sel = resolve_selector("bm25")
    req = request("how do I run the tests")
    assert asyncio.run(sel.aselect(req)).names == sel.select(req).names


def test_bm25_relative_bar_drops_weak_matches_next_to_a_strong_one() -> None:
    query = "postgres database test suite, and the user"
    loose = BM25Selector(threshold=0.0).select(request(query)).names
    strict = BM25Selector(threshold=0.0, relative=0.9).select(request(query)).names
    assert strict == loose[:1] == ("testing.md",)
    assert len(loose) > 1


def test_the_async_path_checks_answers_as_the_sync_path_does() -> None:
    import asyncio

    from memeval.selectors.base import SelectionResult, safe_aselect

    class Stringy:
        name = "stringy"

        def select(self, request):
            return SelectionResult(names="a.md")  # type: ignore[arg-type]

        async def aselect(self, request):
            return self.select(request)

    sync = safe_select(Stringy(), request("q"))  # type: ignore[arg-type]
    async_ = asyncio.run(safe_aselect(Stringy(), request("q")))  # type: ignore[arg-type]
    assert not sync.ok and not async_.ok and sync.error == async_.error


def test_all_names_every_candidate_and_the_session_cap_keeps_five() -> None:
    from memeval.memdir import MAX_SURFACED_PER_TURN

    names = safe_select(resolve_selector("all"), request("q")).names
    assert names == tuple(h.filename for h in MEMDIR) and len(names) > MAX_SURFACED_PER_TURN
