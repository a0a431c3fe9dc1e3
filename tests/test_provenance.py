"""A run records how it was made; runs made differently are never paired."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memeval.provenance import (
    NotComparable,
    check_comparable,
    check_runs_comparable,
    read_made,
)
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from memeval.scoring.gate import gate_run

TINY = Path(__file__).resolve().parent / "data" / "plugin" / "tiny.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("made")
    out = {}
    for name, options in (("gold", {}), ("hardened", {"compat": "hardened"})):
        out[name] = root / name
        evaluate(RunConfig(scenarios=(str(TINY),), selectors=("bm25",), concurrency=1,
                           **options), out[name], progress=False)
    return out


def test_config_and_summary_say_how_the_run_was_made(runs: dict[str, Path]) -> None:
    config = json.loads((runs["gold"] / "config.json").read_text())
    summary = json.loads((runs["gold"] / "summary.json").read_text())
    assert config["made"] == summary["made"]
    made = summary["made"]
    assert (made["history"], made["compat"], made["shuffle_manifest"]) == \
        ("gold", "faithful", False)
    assert made["scan_limits"]["max_memory_files"] == 200
    assert made["judges"] == {"gold": {}}
    assert made["source"] == "memeval run"


def test_a_summary_kept_alone_still_says_how_its_run_was_made(runs: dict[str, Path],
                                                             tmp_path: Path) -> None:
    shutil.copy(runs["hardened"] / "summary.json", tmp_path / "summary.json")
    assert read_made(tmp_path / "summary.json")["compat"] == "hardened"


def test_the_gate_refuses_runs_of_two_compat_presets_in_one_line(runs: dict[str, Path]) -> None:
    with pytest.raises(NotComparable) as caught:
        gate_run(runs["hardened"], runs["gold"])
    message = str(caught.value)
    assert "\n" not in message
    assert message == ("cannot pair runs made differently: compat is faithful in the baseline "
                       "but hardened in the candidate; rerun the candidate with `memeval run "
                       "--compat faithful` (pytest: --memeval-compat faithful)")
    check_runs_comparable(runs["gold"], runs["gold"])  # alike: no complaint


def test_a_judge_of_another_model_or_prompt_is_not_paired() -> None:
    base = {"history": "gold", "judges": {"claude": {"model": "claude-sonnet-4-6",
                                                     "prompt_hash": "aa"}}}
    other = {"history": "gold", "judges": {"claude": {"model": "claude-sonnet-4-6",
                                                      "prompt_hash": "bb"}}}
    with pytest.raises(NotComparable, match="judge claude is model=claude-sonnet-4-6, "
                                            "prompt_hash=aa in the baseline"):
        check_comparable(base, other)
    check_comparable(base, {"history": "gold"})  # a fact one run lacks is not held against it


def test_an_older_run_is_judged_by_what_it_recorded(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"config": {"history": "own",
                                                                 "compat": "faithful"}}))
    assert read_made(tmp_path) == {"history": "own", "compat": "faithful"}
    with pytest.raises(NotComparable, match="history is gold in the baseline but own"):
        check_comparable({"history": "gold"}, read_made(tmp_path))
