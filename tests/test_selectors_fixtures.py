"""The offline selectors on the bundled fixtures: floor, ceiling, and bm25 between them.

Each project-scope turn is asked on its own (no session state), against the
project memdir as the scanner lists it, and scored with `metrics.score_turn`. This
guards the bm25 default threshold: it was chosen on these fixtures.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memeval.labels import PROJECT_SCOPE, split_memory_key
from memeval.memdir import format_memory_manifest, scan_memory_files
from memeval.scenarios import expand_paths, load, materialize
from memeval.scoring.metrics import CAP, score_turn
from memeval.selectors import SelectionRequest, resolve_selector

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios"
SPECS = ("none", "oracle", "recency", "bm25")


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[bool, object]]]:
    selectors = {spec: resolve_selector(spec) for spec in SPECS}
    out: dict[str, list[tuple[bool, object]]] = {spec: [] for spec in SPECS}
    paths = expand_paths(FIXTURES)
    assert paths, f"no scenarios under {FIXTURES}"
    for path in paths:
        scenario = load(path)
        written = materialize(scenario, tmp_path_factory.mktemp(scenario.id))
        headers = tuple(scan_memory_files(written.project_dir))
        filenames = {h.filename for h in headers}
        for turn in scenario.turns:
            if "@" in turn.query:
                continue  # agent-scoped turns search other memdirs
            relevant = {k for k in turn.labels.relevant if split_memory_key(k)[0] == PROJECT_SCOPE}
            request = SelectionRequest(
                query=turn.query, manifest=format_memory_manifest(headers), candidates=headers,
                memory_dir=written.project_dir, turn_id=f"{scenario.id}/{turn.id}")
            # Labels this test can hold a selector to: everything relevant is listed.
            servable = relevant <= filenames
            for spec, selector in selectors.items():
                if hasattr(selector, "use_labels"):
                    selector.use_labels({PROJECT_SCOPE: tuple(sorted(relevant))})
                result = selector.select(request)
                assert result.ok, (spec, result.error)
                score = score_turn(result.names[:CAP],
                                   {"relevant": relevant, "acceptable": turn.labels.acceptable})
                out[spec].append((servable, score))
    return out


def mean_f1(rows: list[tuple[bool, object]]) -> float:
    """Mean F1 over the turns that need a memory (F1 is undefined on the others)."""
    return float(np.nanmean([s.f1 for _, s in rows]))  # type: ignore[attr-defined]


def test_oracle_is_exact_wherever_the_labels_can_be_served(scores: dict) -> None:
    servable = [s for ok, s in scores["oracle"] if ok]
    assert len(servable) > 50
    assert all(s.exact_match for s in servable)


def test_none_misses_every_turn_that_needs_a_memory(scores: dict) -> None:
    needing = [s for _, s in scores["none"] if s.n_relevant]
    assert needing and all(s.recall == 0 and s.outcome == "miss" for s in needing)
    assert all(s.outcome == "abstained" for _, s in scores["none"] if not s.n_relevant)


def test_bm25_lands_between_the_floor_and_the_ceiling(scores: dict) -> None:
    f1 = {spec: mean_f1(rows) for spec, rows in scores.items()}
    assert f1["none"] < f1["bm25"] < f1["oracle"]
    assert f1["bm25"] > f1["recency"]  # words beat dates on these labels
