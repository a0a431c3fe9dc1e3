"""No failure reads as a pass: runs where the judge or the selector fails, end to end.

Each case runs `memeval run` (through the real CLI, the real anthropic SDK and our
loopback Messages server where a model is involved), then `memeval gate`, and checks
what a user would see: the exit code, the alert in the report, the gate's verdict.
An A/A run (the same selector twice) must pass the same gate.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.run.config import bundled_fixtures_dir
from memeval.selectors import resolve_selector
from memeval.selectors._registry import selector
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector
from memeval.testing import FakeMessagesServer

SCENARIOS = [str(bundled_fixtures_dir() / "scenarios" / name) for name in (
    "a-rails-invoicing.yaml", "a-dbt-warehouse.yaml", "a-android-banking.yaml")]
EXIT_ERRORS = 3


@selector("flaky-bm25")
class FlakyBm25(SyncSelector):
    """bm25 that raises on a fixed share of turns (by a hash of the turn id)."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate
        self.inner = resolve_selector("bm25")
        self.name = f"flaky-bm25?rate={rate}"

    def select(self, request: SelectionRequest) -> SelectionResult:
        digest = hashlib.sha256(f"{request.turn_id}/{request.query}".encode()).digest()
        if digest[0] / 256 < self.rate:
            raise RuntimeError("selector backend unavailable")
        return self.inner.select(request)


def memeval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def run(out: Path, *args: str) -> tuple[int, dict]:
    code, output = memeval("run", "--quiet", "--out", str(out), "--concurrency", "2",
                           *[a for s in SCENARIOS for a in ("--scenarios", s)], *args)
    assert (out / "results.jsonl").exists(), output
    return code, json.loads((out / "summary.json").read_text())


def overall(summary: dict, selector_name: str) -> dict:
    return next(r for r in summary["overall"] if r["selector"] == selector_name)


def gate(*args: str) -> tuple[int, str]:
    return memeval("gate", *map(str, args))


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bm25") / "run"
    code, _ = run(out, "-s", "bm25")
    assert code == 0
    return out


def _not_json(_body: dict) -> str:
    return "I would rather not grade these."


def _wrong_keys(_body: dict) -> str:
    return json.dumps({"verdicts": [{"key": "not-a-pick.md", "verdict": "relevant",
                                     "reason": "looks useful"}]})


@pytest.mark.parametrize("behaviour", [_not_json, _wrong_keys], ids=["errors", "wrong-keys"])
def test_a_failing_judge_is_loud_in_the_run_the_report_and_the_gate(
        behaviour, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeMessagesServer(behaviour) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code, summary = run(tmp_path / "run", "-s", "bm25", "-j", "claude", "--no-cache")
    assert code == EXIT_ERRORS
    row = next(r for r in summary["overall"] if r["judge"].startswith("claude"))
    # Every turn where bm25 surfaced something needed the judge, and it failed there.
    picked = [t for t in summary["per_turn"] if t["judge"] == row["judge"] and t["selected"]]
    assert picked and row["judge_error_rate"] == pytest.approx(len(picked) / row["n_turns"])
    assert row["precision"] is None and row["precision_n"] == 0  # never a perfect 1.0
    html = (tmp_path / "run" / "index.html").read_text(encoding="utf-8")
    assert 'id="alerts"' in html
    # an error and a turn the judge left ungraded are told apart (issue 38)
    if behaviour is _not_json:
        assert "the judge errored on" in html
    else:
        assert "the judge errored on" not in html
        assert "unscored (judge left a memory ungraded)" in html
    code, output = gate(tmp_path / "run", "--min-precision", "0.5")
    assert code == 1 and "judge error rate" in output


@pytest.mark.parametrize("rate", [1.0, 0.26])
def test_an_erring_selector_fails_the_run_and_the_gate_against_none_and_itself(
        rate: float, tmp_path: Path, bm25_run: Path) -> None:
    spec = f"flaky-bm25?rate={rate}"
    code, summary = run(tmp_path / "flaky", "-s", spec, "-s", "none")
    assert code == EXIT_ERRORS
    flaky = overall(summary, spec)
    assert 0 < flaky["selector_error_rate"] <= rate + 0.15
    assert flaky["unscored"] == round(flaky["selector_error_rate"] * flaky["n_turns"])
    # Failing is never better than abstaining: the erring turns are simply not scored.
    none = overall(summary, "none")
    assert flaky["n_scored"] < none["n_scored"]
    # Against a `none` baseline and against its error-free self, the gate fails.
    code, output = gate(tmp_path / "flaky", "--baseline", tmp_path / "flaky",
                        "--pair", f"none={spec}")
    assert code == 1 and "selector error rate" in output
    code, output = gate(tmp_path / "flaky", "--baseline", bm25_run,
                        "--pair", f"bm25={spec}")
    assert code == 1 and "selector error rate" in output


def test_an_a_a_run_passes_the_gate(tmp_path: Path, bm25_run: Path) -> None:
    code, _ = run(tmp_path / "again", "-s", "bm25")
    assert code == 0
    code, output = gate(tmp_path / "again", "--baseline", bm25_run, "--secondary",
                        "precision", "--secondary", "recall")
    assert code == 0, output


def test_claude_without_a_key_stops_before_any_call(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MEMEVAL_REPLAY"):
        monkeypatch.delenv(name, raising=False)
    code, output = memeval("run", "--quiet", "--out", str(tmp_path / "r"), "-s", "claude")
    assert code == 2  # bad command input: no key for the model asked for
    assert "ANTHROPIC_API_KEY" in output and "--replay-cassette" in output
    assert output.count("\n") == 1 and "Traceback" not in output
    assert not (tmp_path / "r" / "results.jsonl").exists()


def test_max_cost_with_an_unpriced_model_stops_up_front(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    code, output = memeval("run", "--quiet", "--out", str(tmp_path / "r"), "--no-cache",
                           "-s", "claude:claude-unpriced-9", "--max-cost", "0.5")
    assert code == 2 and "no price for claude-unpriced-9" in output and "--prices" in output
    assert not (tmp_path / "r" / "results.jsonl").exists()
