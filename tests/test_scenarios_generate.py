"""The synthetic generator: byte-identical per seed, labels true by construction."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from memeval.errors import MemevalError
from memeval.memdir import scan_memory_files
from memeval.scenarios import _vocab as V
from memeval.scenarios import generate, load, materialize
from memeval.scenarios.generate import COMPACT_EVERY, render

STOPWORDS = frozenset((
    "a", "after", "all", "an", "and", "any", "are", "as", "at", "back", "be", "been", "before",
    "by", "can", "do", "does", "for", "from", "has", "have", "how", "i", "i'm", "in", "into",
    "is", "it", "its", "just", "m", "may", "me", "must", "my", "no", "not", "of", "off", "on",
    "only", "or", "our", "out", "s", "should", "so", "t", "that", "the", "there", "this", "to",
    "up", "us", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you",
    "your",
))


# sha256 of render(1, 40, 30): the scenario text, then each file's name and bytes
GOLDEN_DIGEST = "c6efa257d30f1f927cba168bf393302240c7b546200c1d791e8b52648b5f09f7"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOPWORDS


def _tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
        if "memdirs" in path.parts:  # memory files carry the stated mtimes too
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


def test_same_seed_writes_byte_identical_output(tmp_path: Path) -> None:
    generate(11, 500, 80, tmp_path / "a")
    generate(11, 500, 80, tmp_path / "b")
    generate(12, 500, 80, tmp_path / "c")
    assert _tree_hash(tmp_path / "a") == _tree_hash(tmp_path / "b")
    assert _tree_hash(tmp_path / "a") != _tree_hash(tmp_path / "c")


def test_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    path = generate(1, 5, 3, tmp_path)
    with pytest.raises(MemevalError, match="already exists"):
        generate(1, 5, 3, tmp_path)
    stray = path.parent.parent / "memdirs" / "synthetic-s1-f5-t3" / "stray.md"
    stray.write_text("x")
    assert generate(1, 5, 3, tmp_path, overwrite=True) == path
    assert not stray.exists()


@pytest.mark.parametrize(("files", "turns"), [(0, 1), (1, 0), (100_001, 1)])
def test_sizes_out_of_range(files: int, turns: int) -> None:
    with pytest.raises(MemevalError):
        render(1, files, turns)


def test_paraphrase_concepts_share_no_word_with_their_memory() -> None:
    for slug, description, query in V.CONCEPTS:
        shared = _words(query) & (_words(description) | _words(slug))
        assert not shared, (slug, shared)


def _check_labels(path: Path, tmp_path: Path) -> None:
    """Every construction rule, checked on the loaded scenario and the written files."""
    scenario = load(path)
    files = scenario.project.files
    out = materialize(scenario, tmp_path / "run")
    headers = scan_memory_files(out.project_dir)
    newest = {h.filename for h in headers}  # the scan keeps the newest 200
    by_name = {h.filename: h for h in headers}
    for agent_type, folder in out.agent_dirs.items():
        for header in scan_memory_files(folder):
            newest.add(f"@{agent_type}/{header.filename}")
            by_name[f"@{agent_type}/{header.filename}"] = header
    descriptions = {}
    for key in scenario.memory_keys():
        spec = scenario.file_for_key(key)
        assert spec is not None
        match = re.search(r"^description: (.*)$", spec.content, re.M)
        assert match, key
        descriptions[key] = match.group(1)
    # MEMORY.md links every memory exactly once, and nothing else
    links = re.findall(r"\]\(([^)]+)\)", files["MEMORY.md"].content)
    assert sorted(links) == sorted(scenario.project.candidates())
    live: set[str] = set()
    since_compact = 0
    for turn in scenario.turns:
        labels = turn.labels
        if turn.compact_before:
            live.clear()
            since_compact = 0
        since_compact += 1
        assert since_compact <= COMPACT_EVERY + 1
        # a memory needed twice before a compaction could never surface the second time
        assert not labels.relevant & live, turn.id
        live |= labels.relevant
        assert labels.relevant <= newest, f"{turn.id}: target beyond the 200-newest cut"
        category = labels.category
        if category in ("none", "keyword-trap"):
            assert not labels.relevant
        elif category == "over-five":
            assert len(labels.relevant) > 5
        elif category == "multi":
            assert 2 <= len(labels.relevant) <= 3
        else:
            assert len(labels.relevant) == 1, turn.id
        (key,) = labels.relevant if len(labels.relevant) == 1 else (None,)
        if category == "paraphrase":
            assert not _words(turn.query) & (_words(descriptions[key]) | _words(key))
        if category == "recent-tool-docs":
            assert [e.tool for e in turn.tool_events] and key.endswith("-pitfall.md")
        if category in ("stale", "large-memdir"):
            twin = key.replace("-update.md", ".md") if key.endswith("-update.md") else \
                key.replace(".md", "-update.md")
            assert files[twin].mtime_ms < files[key].mtime_ms
            assert (twin in newest) == (category == "stale")
        if category == "keyword-trap":
            assert any(_words(turn.query) & _words(d) for d in descriptions.values())
        if category == "agent-scope":
            agent_type, name = key[1:].split("/", 1)
            assert turn.query.startswith(f"@agent-{agent_type} ")
            # the tempting project memory on the same entity and topic exists
            assert any(f.rsplit("/", 1)[-1] == name for f in files)
        if category in ("direct", "already-surfaced"):
            entity = re.search(r"([a-z]+-[a-z]+(?:-[a-z0-9]+)?)", key.rsplit("/", 1)[-1])
            assert entity and entity.group(1).split("-")[0] in turn.query
    # types and descriptions reach the scanner as written
    for name, header in by_name.items():
        assert header.description == descriptions[name]
        assert header.type is not None


def test_small_scenario_labels_hold(tmp_path: Path) -> None:
    path = generate(5, 60, 60, tmp_path / "gen")
    scenario = load(path)
    categories = Counter(t.labels.category for t in scenario.turns)
    assert set(categories) == {"direct", "multi", "none", "keyword-trap", "paraphrase",
                               "recent-tool-docs", "stale", "already-surfaced", "over-five"}
    assert len(scenario.turns) == 60
    assert len(scenario.project.candidates()) == 60
    folders = {name.count("/") for name in scenario.project.candidates()}
    assert folders == {0, 1, 2}  # nested folders
    types = Counter(f.content.split("type: ")[1].split("\n")[0]
                    for n, f in scenario.project.files.items() if n != "MEMORY.md")
    assert set(types) == {"user", "feedback", "project", "reference"}
    _check_labels(path, tmp_path)


def test_agents_add_scoped_memdirs_and_turns(tmp_path: Path) -> None:
    path = generate(8, 80, 60, tmp_path / "gen", agents=4)
    scenario = load(path)
    assert [(a.type, a.scope) for a in scenario.agents.values()] == [
        ("code-reviewer", "user"), ("test-writer", "project"), ("db-expert", "local"),
        ("security-auditor", "user")]
    assert all(a.memdir and "MEMORY.md" in a.memdir.files for a in scenario.agents.values())
    assert sum(t.labels.category == "agent-scope" for t in scenario.turns) >= 3
    _check_labels(path, tmp_path)


def test_no_agents_leaves_the_output_as_it_was() -> None:
    """The seed contract: this digest changes only when the generator is changed on purpose."""
    rendered = render(1, 40, 30)
    digest = hashlib.sha256(rendered.scenario_text.encode())
    for name in sorted(rendered.files):
        digest.update(name.encode() + rendered.files[name][0])
    assert digest.hexdigest() == GOLDEN_DIGEST
    assert rendered.agent_files == {}


def test_large_scenario_keeps_targets_inside_the_cut(tmp_path: Path) -> None:
    path = generate(6, 2000, 120, tmp_path / "gen")
    scenario = load(path)
    assert len(scenario.project.candidates()) == 2000
    categories = Counter(t.labels.category for t in scenario.turns)
    assert "large-memdir" in categories and "stale" not in categories
    mtimes = sorted(f.mtime_ms for f in scenario.project.files.values())
    assert mtimes[-1] - mtimes[0] > 365 * 86_400_000  # spread over years
    _check_labels(path, tmp_path)


def test_tiny_sizes_work(tmp_path: Path) -> None:
    for files, turns in [(1, 1), (1, 7), (3, 2)]:
        scenario = load(generate(2, files, turns, tmp_path / f"g{files}-{turns}"))
        assert len(scenario.turns) == turns
        assert len(scenario.project.candidates()) == files


def test_ten_thousand_files_render_deterministically() -> None:
    """At 10 000 files: same bytes twice, unique names, every target among the newest 200."""
    first = render(42, 10_000, 200)
    second = render(42, 10_000, 200)
    assert first == second
    assert len(first.files) == 10_001 and "MEMORY.md" in first.files
    newest = sorted((ms, name) for name, (_, ms) in first.files.items()
                    if name != "MEMORY.md")[-200:]
    newest_names = {name for _, name in newest}
    relevant = re.findall(r"^    relevant: \[(.*)\]$", first.scenario_text, re.M)
    assert len(relevant) == 200
    for line in relevant:
        for name in re.findall(r'"([^"]+)"', line):
            assert name in newest_names


def test_written_mtimes_match_the_scenario(tmp_path: Path) -> None:
    path = generate(9, 20, 5, tmp_path)
    scenario = load(path)
    memdir = tmp_path / "memdirs" / scenario.id
    for name, spec in scenario.project.files.items():
        ns = os.stat(memdir / name).st_mtime_ns
        assert ns == int(spec.mtime_ms) * 1_000_000, name
