"""Summary and config come through `memeval.log`'s readers, whoever asks: errors name
the file and the fix, and compare and gate say the same thing about the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.log import RunFolderError, read_config, read_per_turn, read_summary
from memeval.scoring import gate
from memeval.scoring.compare import per_turn_table


def test_a_missing_summary_is_told_as_missing_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(RunFolderError, match=r"summary.json: not found.*memeval report") as exc:
        read_summary(tmp_path)
    assert exc.value.missing and exc.value.path == tmp_path / "summary.json"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\udcff"])
def test_a_broken_summary_or_config_names_its_file(tmp_path: Path, text: str) -> None:
    for name, read in (("summary.json", read_summary), ("config.json", read_config)):
        (tmp_path / name).write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(RunFolderError, match=name) as exc:
            read(tmp_path)
        assert not exc.value.missing and exc.value.path == tmp_path / name


def test_compare_and_gate_refuse_an_old_summary_alike(tmp_path: Path) -> None:
    """A summary without this version's per-turn scores: one message, from one reader."""
    (tmp_path / "summary.json").write_text(json.dumps({"per_turn": [{"f1": 1.0}]}))
    with pytest.raises(RunFolderError, match=r"no per-turn scores.*memeval report") as direct:
        read_per_turn(tmp_path)
    with pytest.raises(RunFolderError) as compared:
        per_turn_table(tmp_path)
    with pytest.raises(gate.GateInputError) as gated:
        gate.per_turn_table(tmp_path)
    assert str(direct.value) == str(compared.value) == str(gated.value)
