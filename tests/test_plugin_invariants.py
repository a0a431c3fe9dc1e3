"""The selection suite's invariant checks (memeval.plugin.suite.invariant_problems) and cases."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from memeval.log import RecordedTurn
from memeval.plugin.suite import SuiteStore, TurnCase, display_path, invariant_problems
from memeval.run.config import RunConfig
from memeval.scenarios import load
from memeval.session import Compat

TINY = Path(__file__).resolve().parent / "data" / "plugin" / "tiny.yaml"
FAITHFUL, HARDENED = Compat.faithful(), Compat.hardened()


@pytest.fixture(scope="module")
def store() -> SuiteStore:
    """Own history: the records below are one session, played in order."""
    return SuiteStore(RunConfig(scenarios=(str(TINY),), selectors=("oracle", "all"),
                                history="own"), roots=(TINY.parents[2],))


@pytest.fixture(scope="module")
def records(store: SuiteStore) -> list[RecordedTurn]:
    """The `all` selector's session: several memories surface per turn."""
    return [r.record for r in store.unit("plugin-tiny", "all").rows]


def tampered(records: list[RecordedTurn], index: int, change) -> list[RecordedTurn]:
    """The records with one changed, as JSON (the way a broken session would store it)."""
    out = [copy.deepcopy(r.to_dict()) for r in records]
    change(out[index])
    return [RecordedTurn.from_dict(r) for r in out]


def test_cases_are_turns_times_selectors_with_readable_ids(store):
    cases = store.cases()
    assert len(cases) == 4 * 2
    assert cases[0].id == "data/plugin/tiny.yaml::t1[oracle]"
    assert [c.selector for c in cases[:2]] == ["oracle", "all"]
    assert TurnCase("", "x.yaml", "", "", "boom").id == "x.yaml::load-error"


def test_display_path_falls_back_to_the_last_folders(tmp_path):
    path = tmp_path / "a" / "scenarios" / "x.yaml"
    assert display_path(path, (tmp_path,)) == "a/scenarios/x.yaml"
    assert display_path(path, (Path("/nonexistent"),)) == "a/scenarios/x.yaml"


def test_a_real_session_breaks_no_invariant(store, records):
    scenario = store.scenario("plugin-tiny")
    assert invariant_problems(scenario, records, FAITHFUL) == {}
    assert store.unit("plugin-tiny", "all").problems == {}
    assert any(len(r.surfaced) > 1 for r in records)  # the checks had work to do


def test_gold_history_checks_each_fork_against_what_the_reference_walk_surfaced():
    """Under gold history every turn is a fork: `all` surfacing at t2 what it surfaced
    at t1 is no resurfacing, since its t1 never happened in t2's transcript."""
    gold = SuiteStore(RunConfig(scenarios=(str(TINY),), selectors=("all",)),
                      roots=(TINY.parents[2],))
    outcome = gold.unit("plugin-tiny", "all")
    assert {r.history for r in outcome.rows} == {"gold"}
    assert outcome.problems == {}
    records = [r.record for r in outcome.rows]
    assert invariant_problems(gold.scenario("plugin-tiny"), records, FAITHFUL) != {}
    forks = [r.in_context for r in outcome.rows]

    def again(record):  # the reference walk's t1 memory, surfaced again at t2
        record["surfaced"].append(dict(records[0].surfaced[0].to_dict(), key=forks[1][0]))
    problems = invariant_problems(gold.scenario("plugin-tiny"), tampered(records, 1, again),
                                  FAITHFUL, forks)
    assert any("surfaced again" in p for p in problems["t2"])


def test_the_index_surfacing_is_invariant_1(store, records):
    def rename(record):
        record["surfaced"][0]["filename"] = "MEMORY.md"
    problems = invariant_problems(store.scenario("plugin-tiny"), tampered(records, 0, rename),
                                  FAITHFUL)
    assert any(p.startswith("invariant 1: MEMORY.md surfaced") for p in problems["t1"])


def test_more_than_five_is_invariant_2(store, records):
    def flood(record):
        record["surfaced"] = [dict(record["surfaced"][0], path=f"/m/{i}.md") for i in range(6)]
    problems = invariant_problems(store.scenario("plugin-tiny"), tampered(records, 0, flood),
                                  FAITHFUL)
    assert any(p.startswith("invariant 2: 6 memories") for p in problems["t1"])


def test_oversized_content_is_invariant_3_but_the_note_does_not_count(store, records):
    def grow(record):
        record["surfaced"][0]["content"] = "x" * 4097
    def noted(record):
        record["surfaced"][0]["content"] = ("x" * 4096 + "\n\n> This memory file was "
                                            "truncated (4096 byte limit). Use the Read ...")
    scenario = store.scenario("plugin-tiny")
    assert any("invariant 3" in p for p in
               invariant_problems(scenario, tampered(records, 0, grow), FAITHFUL)["t1"])
    assert invariant_problems(scenario, tampered(records, 0, noted), FAITHFUL) == {}


def test_a_path_surfacing_again_is_invariant_4(store, records):
    first = records[0].surfaced[0].to_dict()
    def repeat(record):
        record["surfaced"].append(dict(first))
    problems = invariant_problems(store.scenario("plugin-tiny"), tampered(records, 1, repeat),
                                  FAITHFUL)
    assert any("invariant 4" in p and "first in turn t1" in p for p in problems["t2"])


def test_duplicates_within_a_turn_are_the_faithful_quirk_only(store, records):
    def twice(record):
        record["surfaced"].append(dict(record["surfaced"][0]))
    changed = tampered(records, 0, twice)
    scenario = store.scenario("plugin-tiny")
    assert invariant_problems(scenario, changed, FAITHFUL) == {}
    assert "invariant 4" in invariant_problems(scenario, changed, HARDENED)["t1"][0]


def test_compaction_lets_a_memory_surface_again(store, records, tmp_path):
    text = TINY.read_text().replace("  - id: t2\n", "  - id: t2\n    compact_before: true\n")
    (tmp_path / "tiny.yaml").write_text(text)
    compacted = load(tmp_path / "tiny.yaml")
    first = records[0].surfaced[0].to_dict()
    def repeat(record):
        record["surfaced"].append(dict(first))
    assert invariant_problems(compacted, tampered(records, 1, repeat), FAITHFUL) == {}


def test_agent_memory_without_a_mention_is_invariant_5(store, records):
    def foreign(record):
        record["surfaced"][0]["scope"] = "code-reviewer"
    problems = invariant_problems(store.scenario("plugin-tiny"), tampered(records, 0, foreign),
                                  FAITHFUL)
    assert any(p.startswith("invariant 5") for p in problems["t1"])


def test_write_run_replaces_the_previous_run(store, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text('{"stale": 1}\n')
    store.unit("plugin-tiny", "oracle")
    store.unit("plugin-tiny", "all")  # both selectors' sessions, whichever tests ran before
    summary = store.write_run(tmp_path / "out")
    assert summary is not None and summary["rows"] == 8
    assert "stale" not in (tmp_path / "out" / "results.jsonl").read_text()
    assert not (tmp_path / "out" / "RUN_INCOMPLETE").exists()


def test_merge_keeps_a_unit_once(store):
    from memeval.plugin.suite import unit_rows_payload

    payload = unit_rows_payload(store.units_rows())
    other = SuiteStore(store.config)
    other.merge(payload)
    other.merge(payload)  # a second worker that ran the same unit
    merged = other.all_units()
    assert sum(len(rows) for rows in merged.values()) == \
        sum(len(rows) for rows in store.units_rows().values())
