"""Shard a run, merge the shares: the rows equal the unsharded run's."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.log import read_results
from memeval.run.config import bundled_fixtures_dir
from memeval.run.plan import Shard

SCENARIOS = [str(bundled_fixtures_dir() / "scenarios" / name) for name in (
    "a-rails-invoicing.yaml", "a-dbt-warehouse.yaml", "b-terraform-aws.yaml",
    "a-android-banking.yaml")]


def memeval(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def run(out: Path, *extra: str) -> None:
    code, output = memeval("run", "--quiet", "--out", out, "-s", "bm25", "-s", "recency",
                           *[a for s in SCENARIOS for a in ("--scenarios", s)], *extra)
    assert code == 0, output


def comparable(folder: Path) -> list[str]:
    return sorted(json.dumps({k: v for k, v in r.to_dict().items() if k != "record"},
                             sort_keys=True) for r in read_results(folder))


@pytest.fixture(scope="module")
def shares(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    base = tmp_path_factory.mktemp("shards")
    run(base / "whole")
    parts = [base / f"s{k}" for k in (1, 2, 3)]
    for k, part in enumerate(parts, start=1):
        run(part, "--shard", f"{k}/3")
    return base, parts


def test_three_shares_merge_into_the_unsharded_rows(shares) -> None:
    base, parts = shares
    assert sum(bool(read_results(p)) for p in parts) >= 2, "the split should really split"
    code, output = memeval("merge", base / "merged", *parts)
    assert code == 0, output
    assert comparable(base / "merged") == comparable(base / "whole")
    merged = json.loads((base / "merged" / "summary.json").read_text())
    whole = json.loads((base / "whole" / "summary.json").read_text())
    assert merged["overall"] == whole["overall"]
    assert not (base / "merged" / "RUN_INCOMPLETE").exists(), "a merged run is finished"


def test_shares_are_disjoint_and_cover_every_unit() -> None:
    keys = [(f"s{i}", sel, r) for i in range(40) for sel in ("a", "b") for r in range(2)]
    owners = [[Shard(k, 3).owns(key) for k in (1, 2, 3)] for key in keys]
    assert all(sum(o) == 1 for o in owners)


@pytest.mark.parametrize(("which", "message"), [
    ("missing", r"missing \[3\]"),
    ("twice", r"given twice \[1\]"),
    ("other-config", "another configuration"),
])
def test_bad_merges_are_refused_in_one_line(shares, tmp_path: Path, which: str,
                                            message: str) -> None:
    _, parts = shares
    if which == "missing":
        given = parts[:2]
    elif which == "twice":
        given = [parts[0], parts[0], parts[1], parts[2]]
    else:
        other = tmp_path / "other"
        run(other, "--shard", "3/3", "--seed", "7")
        given = [parts[0], parts[1], other]
    code, output = memeval("merge", tmp_path / "out", *given)
    assert code == 1 and output.startswith("Error: ") and output.count("\n") == 1
    assert re.search(message, output), output


def test_overlapping_sessions_are_refused(shares, tmp_path: Path) -> None:
    _, parts = shares
    forged = tmp_path / "forged"
    shutil.copytree(parts[0], forged)  # share 1's sessions, labelled as share 3
    config = json.loads((forged / "config.json").read_text())
    config["shard"] = [3, 3]
    (forged / "config.json").write_text(json.dumps(config))
    code, output = memeval("merge", tmp_path / "out", parts[0], parts[1], forged)
    assert code == 1 and "turn(s) stored twice" in output, output


def test_shares_cut_into_units_differently_are_checked_turn_by_turn(shares,
                                                                  tmp_path: Path) -> None:
    """A share written by a memeval that made a unit of a whole session (rows without
    `unit_start`) holds other unit keys than a share of turn units, but the same turns:
    merge must see the overlap."""
    _, parts = shares
    forged = tmp_path / "forged"
    shutil.copytree(parts[0], forged)
    rows = [json.loads(line) for line in (forged / "results.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["turn_index"] > 0]  # share 1's turns, bar the first ones
    sizes = Counter((r["scenario"], r["selector"], r["repeat"]) for r in rows)
    for row in rows:  # as whole-session units of the older format
        del row["unit_start"]
        row["unit_size"] = sizes[(row["scenario"], row["selector"], row["repeat"])]
    (forged / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = json.loads((forged / "config.json").read_text())
    config["shard"] = [3, 3]
    (forged / "config.json").write_text(json.dumps(config))
    code, output = memeval("merge", tmp_path / "out", parts[0], parts[1], forged)
    assert code == 1 and "turn(s) stored twice" in output, output


def test_a_bad_shard_spec_is_one_line() -> None:
    code, output = memeval("run", "--shard", "4/3")
    assert code == 2 and "1 <= K <= N" in output
