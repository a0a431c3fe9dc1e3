"""Which memdirs a turn searches: agent mentions, merge order, fallback (SPEC §2.2)."""

from __future__ import annotations

import pytest
from _session_world import make_world, memory_text

from memeval.errors import MemevalError
from memeval.selectors.testing import EverythingSelector, ScriptedSelector
from memeval.session import AgentDefinition, Compat, extract_agent_mentions


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path, {"reviewer": "user", "plugin:db": "project", "scribe": "local",
                              "helper": None, "my-agent-x": "user"})
    w.write(w.project_dir, "project.md")
    for agent in ("reviewer", "plugin:db", "scribe", "my-agent-x"):
        for i in range(4):
            w.write(w.agent_dir(agent), f"{agent.replace(':', '-')}-{i}.md", age_days=i)
    return w


def test_mentions_list_quoted_ones_first_then_prefixed_ones():
    query = '@agent-b first, then @"a (agent)" and @agent-c, @agent-b again'
    assert extract_agent_mentions(query) == [("a", True), ("agent-b", False), ("agent-c", False)]


def test_mentions_need_whitespace_or_start_before_the_at():
    assert extract_agent_mentions("mail me at x@agent-b.com") == []
    assert extract_agent_mentions("@agent-b:x.y") == [("agent-b:x.y", False)]


def test_agent_dirs_follow_their_scope(world):
    session = world.session(EverythingSelector())
    base, repo = world.base, world.repo
    assert session.agent_memory_dir("reviewer", "user") == base / "agent-memory" / "reviewer"
    assert session.agent_memory_dir("plugin:db", "project") == (
        repo / ".claude" / "agent-memory" / "plugin-db")
    assert session.agent_memory_dir("scribe", "local") == (
        repo / ".claude" / "agent-memory-local" / "scribe")


def test_a_mentioned_agent_with_memory_replaces_the_project_memdir(world):
    record = world.session(EverythingSelector()).turn("@agent-reviewer check this diff")
    assert [d.scope for d in record.dirs] == ["reviewer"]
    assert all(k.startswith("@reviewer/") for k in record.surfaced_keys)
    assert "project.md" not in record.surfaced_keys


def test_several_agents_merge_in_mention_order_and_share_the_cap(world):
    record = world.session(EverythingSelector()).turn(
        "@agent-scribe and @agent-plugin:db please, then @agent-reviewer")
    assert [d.scope for d in record.dirs] == ["scribe", "plugin:db", "reviewer"]
    # The first memdir's four picks, then the next one's first: five in all.
    assert record.surfaced_keys == (
        "@scribe/scribe-0.md", "@scribe/scribe-1.md", "@scribe/scribe-2.md",
        "@scribe/scribe-3.md", "@plugin:db/plugin-db-0.md")
    assert [d.name for d in record.dropped if d.reason == "over-cap"] == [
        "plugin-db-1.md", "plugin-db-2.md", "plugin-db-3.md",
        "reviewer-0.md", "reviewer-1.md", "reviewer-2.md", "reviewer-3.md"]


def test_quoted_mentions_come_before_prefixed_ones_in_merge_order(world):
    record = world.session(EverythingSelector()).turn('@agent-scribe and @"reviewer (agent)" now')
    assert [d.scope for d in record.dirs] == ["reviewer", "scribe"]


@pytest.mark.parametrize("query", [
    "@agent-helper please look",  # an agent without memory
    "@agent-nobody please look",  # an unknown agent
    "ask reviewer about it",  # no mention at all
])
def test_turn_falls_back_to_the_project_memdir(world, query):
    record = world.session(EverythingSelector()).turn(query)
    assert [d.scope for d in record.dirs] == ["project"]
    assert record.surfaced_keys == ("project.md",)


def test_only_agents_that_give_a_dir_count(world):
    record = world.session(EverythingSelector()).turn("@agent-helper and @agent-reviewer look")
    assert [d.scope for d in record.dirs] == ["reviewer"]


def test_quoted_type_containing_agent_prefix_misses_in_faithful_mode(world):
    record = world.session(EverythingSelector()).turn('@"my-agent-x (agent)" have a look')
    assert record.mentions[0].agent_type == "my-x"
    assert [d.scope for d in record.dirs] == ["project"]


def test_quoted_type_containing_agent_prefix_hits_in_hardened_mode(world):
    record = world.session(EverythingSelector(), compat=Compat.hardened()).turn(
        '@"my-agent-x (agent)" have a look')
    assert [d.scope for d in record.dirs] == ["my-agent-x"]


def test_prefixed_mention_of_an_agent_named_agent_dash_works(world):
    record = world.session(EverythingSelector()).turn("@agent-my-agent-x have a look")
    assert [d.scope for d in record.dirs] == ["my-agent-x"]


def test_one_agent_mentioned_both_ways_is_searched_twice_in_faithful_mode(world):
    selector = ScriptedSelector(lambda request: ["reviewer-0.md"])
    record = world.session(selector).turn('@"reviewer (agent)" and @agent-reviewer look')
    assert [d.scope for d in record.dirs] == ["reviewer", "reviewer"]
    assert len(selector.requests) == 2
    assert record.surfaced_keys == ("@reviewer/reviewer-0.md", "@reviewer/reviewer-0.md")


def test_one_agent_mentioned_both_ways_is_searched_once_in_hardened_mode(world):
    selector = ScriptedSelector(lambda request: ["reviewer-0.md"])
    record = world.session(selector, compat=Compat.hardened()).turn(
        '@"reviewer (agent)" and @agent-reviewer look')
    assert [d.scope for d in record.dirs] == ["reviewer"]
    assert record.surfaced_keys == ("@reviewer/reviewer-0.md",)


def test_selector_requests_name_their_scope_and_memdir(world):
    selector = EverythingSelector()
    world.session(selector).turn("@agent-reviewer @agent-scribe look")
    assert [(r.scope, r.memory_dir) for r in selector.requests] == [
        ("reviewer", world.agent_dir("reviewer")), ("scribe", world.agent_dir("scribe"))]


def test_agent_files_are_keyed_by_agent(world):
    world.write(world.agent_dir("reviewer"), "sub/deep.md", memory_text("deep"))
    record = world.session(ScriptedSelector(lambda r: ["sub/deep.md"])).turn("@agent-reviewer x y")
    assert record.surfaced_keys == ("@reviewer/sub/deep.md",)


def test_agents_can_be_given_as_definitions(world):
    session = world.session(EverythingSelector(), agents=[AgentDefinition("reviewer", "user")])
    assert [d.scope for d in session.turn("@agent-reviewer look").dirs] == ["reviewer"]


def test_unknown_memory_scope_is_a_clear_error():
    with pytest.raises(MemevalError, match="memory scope 'team'"):
        AgentDefinition("x", "team")  # type: ignore[arg-type]
