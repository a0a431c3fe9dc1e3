"""History control: under gold history every selector starts every turn from the same state."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import ClassVar

import pytest

from memeval.errors import MemevalError
from memeval.judges import resolve_judge
from memeval.run.config import RunConfig, bundled_fixtures_dir
from memeval.run.play import Unit, run_unit
from memeval.scenarios import load
from memeval.scoring.compare import compare_tables
from memeval.scoring.metrics import score_results
from memeval.selectors import SELECTORS
from memeval.selectors.base import SelectionResult, SyncSelector
from memeval.testing.synthetic import synthetic_rows

SCENARIOS = [load(bundled_fixtures_dir() / "scenarios" / name) for name in (
    "a-rails-invoicing.yaml", "a-dbt-warehouse.yaml", "b-terraform-aws.yaml")]


def rows(selector: str, history: str) -> list:
    config = RunConfig(selectors=(selector,), history=history)  # type: ignore[arg-type]
    judges = [resolve_judge("gold")]
    return [r for s in SCENARIOS for r in run_unit(Unit(s, selector, 0), config, judges)]


def manifests(results: list) -> dict:
    return {(r.scenario, r.turn_id): tuple(d.manifest for d in r.record.dirs)
            for r in results}


def test_under_gold_history_every_selector_sees_the_same_manifests() -> None:
    bm25, recency = rows("bm25", "gold"), rows("recency", "gold")
    assert manifests(bm25) == manifests(recency)
    assert not [r for r in recency if r.skipped == "nothing-to-select"]
    assert {r.history for r in bm25} == {"gold"}


def test_under_own_history_each_selector_lives_its_own_session() -> None:
    bm25, recency = rows("bm25", "own"), rows("recency", "own")
    assert manifests(bm25) != manifests(recency)
    # recency surfaces the five newest every turn, so it runs out of candidates
    assert Counter(r.skipped for r in recency)["nothing-to-select"] > 0


def test_memories_in_context_are_covered_and_earlier_relevant_picks_acceptable() -> None:
    from memeval.judges.base import Judgement, MemoryVerdict

    row = replace(synthetic_rows(turns=1, selectors=("bm25",))[0],
                  relevant=("a.md", "b.md"), selected=("c.md",), in_context=("a.md",),
                  earlier_relevant=("c.md",), selector_error=None,
                  judgements={"gold": Judgement("t0", "gold", (MemoryVerdict("c.md",
                                                                            "irrelevant"),),
                                                relevant=("a.md", "b.md"))})
    scored = score_results([row]).iloc[0]
    assert scored["covered"] == 1  # a.md was already in the transcript: not a miss
    assert scored["n_relevant"] == 1  # only b.md is still needed
    assert scored["recall"] == 0.0 and scored["false_positives"] == 0  # c.md: acceptable
    assert scored["acceptable_selected"] == 1


def test_compare_refuses_to_pair_runs_of_different_histories() -> None:
    gold = score_results(rows("bm25", "gold"))
    own = score_results(rows("bm25", "own"))
    with pytest.raises(MemevalError, match="replay history differently"):
        compare_tables(gold, own)


def test_a_fork_leaves_the_reference_session_untouched() -> None:
    from memeval.run.play import open_session, play_turn
    from memeval.selectors import resolve_selector

    scenario = SCENARIOS[0]
    with open_session(scenario, resolve_selector("recency")) as opened:
        reference = opened.session
        fork = reference.fork(resolve_selector("recency"))
        record = play_turn(fork, scenario, scenario.turns[0])
        assert record.surfaced and fork.surfaced_paths
        assert not reference.surfaced_paths and reference.surfaced_bytes == 0


def test_all_surfaces_what_the_cap_keeps_the_same_as_recency() -> None:
    all_rows, recency = rows("all", "gold"), rows("recency", "gold")
    assert [r.selected for r in all_rows] == [r.selected for r in recency]
    assert any(len(d.valid) > 5 for r in all_rows for d in r.record.dirs)


def test_only_the_oracle_is_handed_the_labels() -> None:
    """A third-party selector that declares use_labels still never sees gold."""
    from memeval.run.play import open_session, play_turn
    from memeval.selectors.base import SelectionResult, SyncSelector
    from memeval.selectors.shuffle import ShuffledManifestSelector

    class Snoop(SyncSelector):
        name = "snoop"
        seen: ClassVar[list] = []

        def use_labels(self, labels):
            self.seen.append(labels)

        def select(self, request):
            return SelectionResult(names=())

    scenario = SCENARIOS[0]
    for selector in (Snoop(), ShuffledManifestSelector(Snoop(), 1)):
        with open_session(scenario, selector) as opened:
            play_turn(opened.session, scenario, scenario.turns[0])
    assert Snoop.seen == []


class Rememberer(SyncSelector):
    """A local selector with memory: it never picks a file twice until reset, so its
    rows depend on playing its turns in order and on compactions resetting it."""

    stateful = True

    def __init__(self) -> None:
        self.name = REMEMBERER
        self.picked: set[str] = set()

    def reset(self) -> None:
        self.picked.clear()

    def select(self, request):
        fresh = [n for n in sorted(request.filenames) if n not in self.picked][:1]
        self.picked.update(fresh)
        return SelectionResult(names=tuple(fresh))


REMEMBERER = "test-history-rememberer"
SELECTORS.register(REMEMBERER, Rememberer)


def _played(units, config) -> list[str]:
    from memeval.log import PayloadStore
    from memeval.run.play import run_coroutine
    from memeval.run.runner import run_units

    rows: list = []

    def fail(unit, exc):
        raise AssertionError(f"{unit.key}: {exc!r}")

    run_coroutine(run_units(units, config, [resolve_judge("gold")],
                            on_rows=lambda unit, got: rows.extend(got), on_error=fail))
    return sorted(json.dumps(r.to_dict(PayloadStore()), sort_keys=True) for r in rows)


@pytest.mark.parametrize(("history", "compat"), [("gold", "faithful"), ("own", "faithful"),
                                               ("gold", "faithful+compaction=restore"),
                                               ("own", "faithful+compaction=restore")])
def test_sessions_cut_into_units_give_the_rows_of_whole_sessions(history, compat) -> None:
    """A unit per turn (gold history, no memory) or per stretch between compactions
    (memory, or own history), played in any interleaving on shared worlds, must give
    exactly the rows of playing every session whole and alone. A compaction that
    restores files carries state over, so there sessions are not cut at compactions."""
    from memeval.run.evaluate import plan_units

    specs = ("bm25", "recency", "random?seed=3", "oracle", "none", REMEMBERER)
    config = RunConfig(selectors=specs, history=history, shuffle_manifest=True,
                       concurrency=3, compat=compat)
    remembers = REMEMBERER.__eq__
    cut = plan_units(SCENARIOS, config, remembers=remembers)
    whole = plan_units(SCENARIOS, config, remembers=remembers, split=False)
    restores = compat.endswith("restore")
    stretches = sum(1 + (0 if restores else sum(1 for t in s.turns[1:] if t.compact_before))
                    for s in SCENARIOS)
    turns = sum(len(s.turns) for s in SCENARIOS)
    kinds = Counter(u.selector_spec for u in cut)
    if history == "gold":
        assert kinds["bm25"] == turns and kinds[REMEMBERER] == stretches
    else:
        assert set(kinds.values()) == {stretches}
        assert (stretches == len(SCENARIOS)) == restores
    assert len(whole) == len(SCENARIOS) * len(specs)
    alone = [row for unit in whole for row in _played([unit], config)]
    assert _played(cut, config) == sorted(alone)


def test_forks_of_one_turn_share_one_scan_and_get_the_same_records(monkeypatch) -> None:
    """The gold walk scans the memdirs once per turn for all forks (`shared_scans`); a
    session without the memo scans itself and must record exactly the same turn."""
    import memeval.session.session as session_module
    from memeval.run.play import open_session, play_turn
    from memeval.selectors import resolve_selector

    scans: list[str] = []
    real = session_module.scan_dir

    def counting(memdir, **kwargs):  # type: ignore[no-untyped-def]
        scans.append(str(memdir))
        return real(memdir, **kwargs)

    monkeypatch.setattr(session_module, "scan_dir", counting)
    scenario = SCENARIOS[0]
    turn = scenario.turns[2]
    with open_session(scenario, resolve_selector("oracle")) as opened:
        reference = opened.session
        plain = [play_turn(reference.fork(resolve_selector(s)), scenario, turn).to_dict()
                 for s in ("bm25", "recency")]
        alone = len(scans)
        reference.shared_scans = {}
        shared = [play_turn(reference.fork(resolve_selector(s)), scenario, turn).to_dict()
                  for s in ("bm25", "recency")]
    assert shared == plain
    assert alone == 2 * (len(scans) - alone) and len(scans) > alone
