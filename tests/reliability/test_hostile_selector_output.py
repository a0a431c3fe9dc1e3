"""Hostile selector output: whatever a selector answers, at most 5 memories surface,
only candidates are ever opened, and a malformed answer is a recorded error.

Answers go two ways: as raw model text through the Claude selector and the real SDK
against FakeMessagesServer (the answer is whatever the fake model is told to say),
and as Python values from an in-process selector (the names may be anything).
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.memdir.paths import project_memory_dir
from memeval.selectors.base import SelectionRequest, SelectionResult, SyncSelector
from memeval.selectors.claude import ClaudeSelector
from memeval.session import MAX_SURFACED_PER_TURN, Session, TurnRecord
from memeval.testing import FakeMessagesServer
from tests._doors import open_door
from tests.reliability._watch import opened_files, watch_opens

NOW_MS = 1_796_040_000_000.0
KEY = "sk-ant-" + "test-7c1f0e2d9a5b"  # no 8-character piece of it may occur in a path
QUERY = "which memories help with the deploy?"
FILES = ("deploy.md", "Deploy.md", "é.md", "notes/db.md", "a.md", "b.md", "c.md", "d.md",
         "e.md", "f.md", "g.md")  # more than 5, with case and unicode neighbours


class World:
    """A project memdir with FILES, an index, and a secret beside it."""

    def __init__(self, root: Path) -> None:
        self.base, self.repo = root / "base", root / "repo"
        self.memdir = project_memory_dir(self.base, self.repo)
        (self.memdir / "notes").mkdir(parents=True)
        self.repo.mkdir()
        for name in FILES:
            # No frontmatter: names are what matters here, and YAML would only cost time.
            (self.memdir / name).write_text(f"notes about {name}\n")
        (self.memdir / "MEMORY.md").write_text("- [deploy](deploy.md)\n")
        self.secret = root / "secret.md"
        self.secret.write_text("---\ndescription: outside\n---\nsecret\n")
        self.candidates = {os.path.realpath(self.memdir / n) for n in FILES}

    def session(self, selector: Any, compat: str) -> Session:
        return Session(self.base, self.repo, selector=selector, now_ms=NOW_MS, compat=compat)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("hostile-output"))


def hostile_names(world: World) -> list[Any]:
    """The names a hostile selector reaches for, beyond random text."""
    secret = str(world.secret)
    return [
        "deploy.md", "DEPLOY.md", "deploy.MD", " deploy.md", "deploy.md\n", "./deploy.md",
        "notes/../deploy.md", "notes//db.md", "notes\\db.md", "../secret.md",
        "../../../../secret.md", secret, str(world.memdir / "deploy.md"), "MEMORY.md",
        "notes", "", ".", "..", unicodedata.normalize("NFD", "é.md"), "e\u0301.md",
        "ｄｅｐｌｏｙ.md", "deploy.md\x00", "/etc/passwd", "~/.ssh/id_rsa", "file:///etc/passwd",
    ]


def name_values(world: World) -> st.SearchStrategy[Any]:
    """Any JSON-ish value a name slot might hold."""
    return st.one_of(
        st.sampled_from(list(FILES)), st.sampled_from(hostile_names(world)), st.text(max_size=30),
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
        st.lists(st.sampled_from(FILES), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                      st.integers(), max_size=2),
    )


def check_turn(world: World, record: TurnRecord, log: list[tuple[str, str]], *,
               malformed: bool) -> None:
    """What must hold whatever the answer was."""
    assert len(record.surfaced) <= MAX_SURFACED_PER_TURN
    assert {os.path.realpath(s.path) for s in record.surfaced} <= world.candidates
    opened = {p for p in opened_files(log) if p.startswith(os.path.realpath(world.base))
              or p == os.path.realpath(world.secret)}
    assert opened <= world.candidates, f"opened non-candidates: {sorted(opened - world.candidates)}"
    assert os.path.realpath(world.secret) not in opened_files(log)
    search = record.dirs[0]
    if malformed:
        assert search.error is not None and record.errors, "a malformed answer must be an error"
        assert not record.surfaced
    else:
        assert search.error is None, search.error


def is_well_formed(names: Any) -> bool:
    # The system keeps a list's string names and drops the others one by one (issue 35).
    return isinstance(names, list)


# ------------------------------------------------------------- in-process selector
class ValueSelector(SyncSelector):
    """Answers with whatever `names` holds, unvalidated."""

    name = "value"

    def __init__(self) -> None:
        self.names: Any = ()

    def select(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult(names=self.names, raw_output=repr(self.names)[:200])


@settings(max_examples=1200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), compat=st.sampled_from(["faithful", "hardened"]))
def test_in_process_answers_never_widen_the_surface(world: World, data: st.DataObject,
                                                    compat: str) -> None:
    names = data.draw(st.one_of(
        st.lists(name_values(world), max_size=40),
        st.lists(st.sampled_from(FILES), min_size=5, max_size=40),  # duplicates galore
        name_values(world),  # not even a list
    ))
    selector = ValueSelector()
    selector.names = tuple(names) if isinstance(names, list) else names
    session = world.session(selector, compat)
    with watch_opens() as log:
        record = session.turn(QUERY)
    check_turn(world, record, log, malformed=not is_well_formed(names))


@pytest.mark.parametrize("compat", ["faithful", "hardened"])
def test_ten_thousand_names_surface_five(world: World, compat: str) -> None:
    selector = ValueSelector()
    selector.names = tuple((list(FILES) + hostile_names(world)) * 400)[:10_000]
    with watch_opens() as log:
        record = world.session(selector, compat).turn(QUERY)
    check_turn(world, record, log, malformed=False)
    assert len(record.surfaced) == MAX_SURFACED_PER_TURN
    if compat == "hardened":  # each file once
        assert len({s.path for s in record.surfaced}) == MAX_SURFACED_PER_TURN
    reasons = {d.reason for d in record.dropped}
    assert {"not-a-candidate", "over-cap"} <= reasons


def test_selector_that_raises_or_returns_junk_is_an_error(world: World) -> None:
    class Raising(SyncSelector):
        name = "raising"

        def select(self, request: SelectionRequest) -> SelectionResult:
            raise RuntimeError("selector bug")

    class Junk(SyncSelector):
        name = "junk"

        def select(self, request: SelectionRequest) -> Any:
            return ["deploy.md"]  # not a SelectionResult

    for selector in (Raising(), Junk()):
        record = world.session(selector, "hardened").turn(QUERY)
        assert record.dirs[0].error and record.errors and not record.surfaced


# ------------------------------------------------ through the Claude selector (HTTP)
def answer_texts(world: World) -> st.SearchStrategy[str]:
    """Model output: JSON of the right and wrong shapes, and text that is not JSON."""
    as_json = st.one_of(
        st.lists(name_values(world), max_size=30).map(lambda v: {"selected_memories": v}),
        name_values(world).map(lambda v: {"selected_memories": v}),
        st.dictionaries(st.text(max_size=20), name_values(world), max_size=3),
        name_values(world),
        st.lists(st.sampled_from(FILES), max_size=10).map(
            lambda v: {"selected_memories": v, "extra": True}),
    ).map(lambda v: json.dumps(v, allow_nan=True))
    return st.one_of(
        as_json, st.text(max_size=200),
        as_json.map(lambda t: "```json\n" + t + "\n```"), as_json.map(lambda t: t[: len(t) // 2]),
        st.just(""), st.just("null"), st.just('{"selected_memories": ["a.md"]}{"x": 1}'),
    )


def expected_malformed(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return True
    return not isinstance(value, dict) or not isinstance(value.get("selected_memories"), list)


@pytest.fixture(scope="module")
def server() -> Any:
    state = {"text": ""}
    with FakeMessagesServer(lambda body: state["text"]) as fake:
        fake.state = state  # type: ignore[attr-defined]
        yield fake


@pytest.fixture(scope="module")
def claude(server: Any) -> ClaudeSelector:
    door = open_door(server.url, api_key=KEY, max_retries=0, cache=None)
    return ClaudeSelector(client=door)


@settings(max_examples=500, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), compat=st.sampled_from(["faithful", "hardened"]))
def test_model_answers_through_the_sdk_never_widen_the_surface(
        world: World, server: Any, claude: ClaudeSelector, data: st.DataObject,
        compat: str) -> None:
    text = data.draw(answer_texts(world))
    server.state["text"] = text
    with watch_opens() as log:
        record = world.session(claude, compat).turn(QUERY)
    check_turn(world, record, log, malformed=expected_malformed(text))
    assert record.dirs[0].raw_output == (text or None)


def test_ten_thousand_names_through_the_sdk(world: World, server: Any,
                                            claude: ClaudeSelector) -> None:
    names = (list(FILES) + hostile_names(world)) * 400
    server.state["text"] = json.dumps({"selected_memories": names[:10_000]})
    with watch_opens() as log:
        record = world.session(claude, "faithful").turn(QUERY)
    check_turn(world, record, log, malformed=False)
    assert len(record.surfaced) == MAX_SURFACED_PER_TURN
    assert len(record.dirs[0].raw_names) == 10_000
