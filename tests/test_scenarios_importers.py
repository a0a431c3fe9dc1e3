"""LoCoMo and LongMemEval importers, on tiny files of our own in the same formats."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli.import_ import command as import_command
from memeval.errors import MemevalError
from memeval.memdir import scan_memory_files
from memeval.scenarios import load, materialize
from memeval.scenarios.importers import import_locomo, import_longmemeval
from memeval.scenarios.importers.locomo import parse_locomo_datetime
from memeval.scenarios.importers.longmemeval import parse_longmemeval_date

DATA = Path(__file__).parent / "data" / "importers"
LOCOMO = DATA / "locomo_tiny.json"
LONGMEMEVAL = DATA / "longmemeval_tiny.json"


def _ms(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp() * 1000


def test_locomo_dates() -> None:
    assert parse_locomo_datetime("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56,
                                                                        tzinfo=UTC)
    assert parse_locomo_datetime("12:05 am on 15 Jun, 2023") == datetime(2023, 6, 15, 0, 5,
                                                                          tzinfo=UTC)
    assert parse_locomo_datetime("8 May, 2023") == datetime(2023, 5, 8, tzinfo=UTC)
    assert parse_locomo_datetime("sometime in spring") is None
    assert parse_locomo_datetime("1:00 pm on 31 February, 2023") is None


def test_longmemeval_dates() -> None:
    assert parse_longmemeval_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40,
                                                                        tzinfo=UTC)
    assert parse_longmemeval_date("2023/05/30") == datetime(2023, 5, 30, tzinfo=UTC)
    assert parse_longmemeval_date("not a date") is None


def test_locomo_by_session(tmp_path: Path) -> None:
    report = import_locomo(LOCOMO, tmp_path, granularity="session")
    assert [p.name for p in report.scenarios] == ["locomo-tiny-1.yaml", "locomo-tiny-2.yaml"]
    assert (report.memories, report.turns) == (4, 5)
    assert report.dropped == (
        "tiny-1 q3: evidence D2:9 is not a turn of the conversation; evidence dropped",
        "tiny-1 q4: empty evidence; dropped",
        "tiny-1 q5: evidence D9:1 is not a turn of the conversation; evidence dropped",
        "tiny-1 q5: none of its evidence could be placed; dropped",
        "tiny-2: session 1 date 'sometime in spring' is not 'h:mm am on d Month, yyyy'; "
        "used 2000-01-01",
        "sample 2 (empty): the conversation has no session_<n>; skipped",
        "sample 3: not an object; skipped",
    )
    scenario = load(report.scenarios[0])
    assert scenario.now == datetime(2023, 7, 3, 10, 5, tzinfo=UTC)  # a day after session 3
    files = scenario.project.files
    assert scenario.project.candidates() == ("session-01.md", "session-02.md", "session-03.md")
    assert files["session-01.md"].mtime_ms == _ms(2023, 5, 8, 13, 56)
    assert files["session-02.md"].mtime_ms == _ms(2023, 6, 15, 19, 30)
    labels = {t.id: (t.labels.category, sorted(t.labels.relevant), t.answer)
              for t in scenario.turns}
    assert labels == {
        "q1": ("locomo-single-hop", ["session-01.md"], "Tuesday"),
        "q2": ("locomo-multi-hop", ["session-01.md", "session-03.md"], "Lisbon"),
        "q3": ("locomo-temporal", ["session-02.md"], "15 June 2023"),
        "q6": ("locomo-multi-hop", ["session-02.md", "session-03.md"], "2023"),
    }
    assert all(t.compact_before and t.tags[0] == "locomo" for t in scenario.turns)
    assert {t.id: t.tags[1] for t in scenario.turns} == {
        "q1": "locomo-4", "q2": "locomo-1", "q3": "locomo-2", "q6": "locomo-1"}
    out = materialize(scenario, tmp_path / "run")
    headers = {h.filename: h for h in scan_memory_files(out.project_dir)}
    # description comes from the session summary, `---` defused so frontmatter survives
    assert headers["session-02.md"].description == (
        "On 15 June 2023 Tomas told Mira about Biscuit's first race, and Mira showed her "
        "first bowl — lopsided.")
    assert headers["session-02.md"].type == "user"
    body = files["session-02.md"].content
    assert "## Observations" in body and "- Mira: Mira made her first bowl; it was lopsided. " \
        "(D2:2)" in body
    index = files["MEMORY.md"].content.splitlines()
    assert [line.split("](")[1].split(")")[0] for line in index] == [
        "session-01.md", "session-02.md", "session-03.md"]
    # a session without a summary is described by its opening turns
    other = load(report.scenarios[1])
    text = other.project.files["session-01.md"].content
    assert 'description: "Ana: I switched to night shifts at the hospital."' in text


def test_locomo_by_observation(tmp_path: Path) -> None:
    report = import_locomo(LOCOMO, tmp_path, granularity="observation")
    assert [p.name for p in report.scenarios] == ["locomo-tiny-1.yaml"]
    assert "tiny-1 q2: evidence D3:1 is in no observation memory; evidence dropped" in \
        report.dropped
    assert "tiny-2: no question with usable evidence; skipped" in report.dropped
    scenario = load(report.scenarios[0])
    assert scenario.project.candidates() == (
        "session-01/fact-001.md", "session-01/fact-002.md", "session-02/fact-001.md",
        "session-02/fact-002.md", "session-03/fact-001.md")
    relevant = {t.id: sorted(t.labels.relevant) for t in scenario.turns}
    assert relevant == {
        "q1": ["session-01/fact-001.md"],           # Mira's pottery (D1:3)
        "q2": ["session-01/fact-002.md"],           # the greyhound (D1:2); D3:1 has no fact
        "q3": ["session-02/fact-001.md"],
        "q6": ["session-02/fact-002.md", "session-03/fact-001.md"],  # "D2:2; D3:2" split
    }
    fact = scenario.project.files["session-01/fact-001.md"]
    assert 'description: "Mira takes pottery classes on Tuesdays."' in fact.content
    assert fact.mtime_ms == _ms(2023, 5, 8, 13, 56)


def test_locomo_rejects_files_that_are_not_locomo(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"sample_id": 1}')
    with pytest.raises(MemevalError, match="a LoCoMo file is a JSON list of samples"):
        import_locomo(bad, tmp_path / "out")
    bad.write_text("[1, ")
    with pytest.raises(MemevalError, match="not a LoCoMo JSON file"):
        import_locomo(bad, tmp_path / "out")
    with pytest.raises(MemevalError, match="granularity"):
        import_locomo(LOCOMO, tmp_path / "out", granularity="turn")  # type: ignore[arg-type]


def test_longmemeval(tmp_path: Path) -> None:
    report = import_longmemeval(LONGMEMEVAL, tmp_path)
    assert [p.name for p in report.scenarios] == ["longmemeval-q-degree.yaml",
                                                  "longmemeval-q-commute_abs.yaml"]
    assert (report.memories, report.turns) == (5, 2)
    assert report.dropped == (
        "q-commute_abs: haystack date 'not a date' unreadable; used 2023-06-09",
        "q-commute_abs: answer session answer_zz99 is not in the haystack; evidence dropped",
        "q-nothing: answer session answer_missing is not in the haystack; evidence dropped",
        "q-nothing: no answer session in the haystack; skipped",
        "record 3 (q-broken): missing haystack_dates; skipped",
    )
    degree = load(report.scenarios[0])
    assert degree.now == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    (turn,) = degree.turns
    assert turn.query == "What degree did I graduate with?"
    assert turn.labels.category == "longmemeval-single-session-user"
    assert turn.labels.relevant == {"session-002.md"}
    assert turn.answer == "Business Administration"
    files = degree.project.files
    assert files["session-002.md"].mtime_ms == _ms(2023, 5, 21, 10, 0)
    content = files["session-002.md"].content
    # filenames and bodies never leak the gold: no session ids, no has_answer flags
    assert "answer_aa11" not in "".join(files) + "".join(f.content for f in files.values())
    assert "has_answer" not in content
    assert "**user:** I graduated in Business Administration" in content
    commute = load(report.scenarios[1])
    assert commute.turns[0].tags == ("longmemeval", "abstention")
    assert commute.turns[0].labels.relevant == {"session-001.md"}


def test_longmemeval_limit_and_overwrite(tmp_path: Path) -> None:
    first = import_longmemeval(LONGMEMEVAL, tmp_path, limit=1)
    assert len(first.scenarios) == 1
    with pytest.raises(MemevalError, match="already exists"):
        import_longmemeval(LONGMEMEVAL, tmp_path, limit=1)
    assert import_longmemeval(LONGMEMEVAL, tmp_path, limit=1, overwrite=True).scenarios == \
        first.scenarios


def test_import_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(import_command, ["locomo", str(LOCOMO), "--granularity",
                                            "observation", "--out", str(tmp_path / "lo")])
    assert result.exit_code == 0, result.output
    assert "wrote 1 scenario(s)" in result.output and "(5 memories, 4 turns)" in result.output
    dropped = (tmp_path / "lo" / "import-locomo-dropped.txt").read_text().splitlines()
    assert len(dropped) == 11
    result = runner.invoke(import_command, ["longmemeval", str(LONGMEMEVAL), "--out",
                                            str(tmp_path / "lme")])
    assert result.exit_code == 0, result.output
    assert "wrote 2 scenario(s)" in result.output
    wrong = runner.invoke(import_command, ["locomo", str(LONGMEMEVAL), "--out",
                                           str(tmp_path / "x")])
    assert wrong.exit_code == 2 and "nothing imported from the locomo file" in wrong.output
    missing = runner.invoke(import_command, ["locomo", str(tmp_path / "nope.json"), "--out",
                                             str(tmp_path / "x")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_import_writes_exact_mtimes_on_disk(tmp_path: Path) -> None:
    report = import_locomo(LOCOMO, tmp_path)
    memdir = tmp_path / "memdirs" / "locomo-tiny-1"
    assert os.stat(memdir / "session-03.md").st_mtime_ns == \
        int(_ms(2023, 7, 2, 10, 5)) * 1_000_000
    assert json.loads(LOCOMO.read_text())[0]["sample_id"] == "tiny-1"
    assert report.scenarios[0].parent == tmp_path / "scenarios"


def test_locomo_evidence_ids_are_normalised_and_adversarial_questions_tagged(
        tmp_path: Path) -> None:
    import json

    sample = json.loads(LOCOMO.read_text())[0]
    sample["qa"] = [
        {"question": "padded ids?", "answer": "x", "evidence": ["D1:03"], "category": 4},
        {"question": "stray colon?", "answer": "y", "evidence": ["D:1:2"], "category": 1},
        {"question": "no id at all?", "answer": "z", "evidence": ["see above", "D1:3"],
         "category": 2},
        {"question": "what did Mira say about Mars?", "adversarial_answer": "red",
         "evidence": ["D1:2"], "category": 5},
    ]
    source = tmp_path / "one.json"
    source.write_text(json.dumps([sample]))
    report = import_locomo(source, tmp_path / "out", granularity="session")
    assert "tiny-1 q3: evidence 'see above' is not a D<session>:<turn> id; evidence dropped" \
        in report.dropped
    turns = {t.id: t for t in load(report.scenarios[0]).turns}
    assert set(turns) == {"q1", "q2", "q3", "q4"}  # D1:03 and D:1:2 matched their turns
    assert turns["q4"].labels.category == "locomo-adversarial"
    assert "adversarial" in turns["q4"].tags and turns["q4"].answer is None
