"""Which memdirs a turn searches: agent mentions in the query (SPEC §2.2).

Pure functions of the query text and the agent definitions; the filesystem is not
touched here, so the scope rules can be tested (and property-tested) on their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from memeval.memdir.text import JS_SPACE_CLASS, js_is_space

MemoryScope = Literal["user", "project", "local"]
MEMORY_SCOPES: tuple[str, ...] = ("user", "project", "local")

# JavaScript's `\w` is ASCII-only; spell it out so re's Unicode `\w` cannot leak in.
_TYPE_CHARS = r"[A-Za-z0-9_:.@-]"
QUOTED_AGENT_RE = re.compile(rf'(?:^|{JS_SPACE_CLASS})@"({_TYPE_CHARS}+) \(agent\)"')
UNQUOTED_AGENT_RE = re.compile(rf"(?:^|{JS_SPACE_CLASS})@(agent-{_TYPE_CHARS}+)")


def js_has_whitespace(text: str) -> bool:
    """JavaScript's `/\\s/.test(text)`."""
    return any(js_is_space(ch) for ch in text)


@dataclass(frozen=True)
class AgentDefinition:
    """An agent the user can @-mention.

    Args:
        agent_type: the type as defined (`code-reviewer`, `plugin:helper`).
        memory_scope: where its memdir lives (`user`, `project`, `local`), or `None`
            when the agent has no memory; mentioning it then adds no memdir.
    """

    agent_type: str
    memory_scope: MemoryScope | None = None

    def __post_init__(self) -> None:
        if self.memory_scope is not None and self.memory_scope not in MEMORY_SCOPES:
            from memeval.errors import MemevalError

            raise MemevalError(
                f"agent {self.agent_type!r}: memory scope {self.memory_scope!r} is not one of "
                f"{', '.join(MEMORY_SCOPES)} (or none)"
            )


@dataclass(frozen=True)
class AgentMention:
    """One mention found in a query and what it resolved to.

    Args:
        raw: the mention as extracted (`agent-reviewer` for `@agent-reviewer`,
            `reviewer` for `@"reviewer (agent)"`).
        quoted: whether it used the quoted form.
        agent_type: the type looked up after the prefix rule.
        memory_scope: the scope of the matching agent, `None` when no agent matched
            or the agent has no memory.
    """

    raw: str
    quoted: bool
    agent_type: str
    memory_scope: str | None

    def to_dict(self) -> dict[str, object]:
        return {"raw": self.raw, "quoted": self.quoted, "agent_type": self.agent_type,
                "memory_scope": self.memory_scope}


def extract_agent_mentions(query: str) -> list[tuple[str, bool]]:
    """Mentions in the order Claude Code lists them: every quoted one first, then every
    `@agent-` one, each group in text order, exact duplicates removed."""
    found: list[tuple[str, bool]] = []
    seen: set[str] = set()
    for match in QUOTED_AGENT_RE.finditer(query):
        found.append((match.group(1), True))
    for match in UNQUOTED_AGENT_RE.finditer(query):
        found.append((match.group(1), False))
    unique: list[tuple[str, bool]] = []
    for raw, quoted in found:
        if raw in seen:  # uniq() over the raw strings, as the system does
            continue
        seen.add(raw)
        unique.append((raw, quoted))
    return unique


def agent_type_from_mention(raw: str, *, quoted: bool, prefix_quirk: bool) -> str:
    """The first `agent-` is removed from every mention in the faithful system; with the
    quirk off a quoted mention already is the type."""
    if quoted and not prefix_quirk:
        return raw
    return raw.replace("agent-", "", 1)


def resolve_mentions(
    query: str, agents: Mapping[str, AgentDefinition], *, prefix_quirk: bool
) -> tuple[AgentMention, ...]:
    mentions = []
    for raw, quoted in extract_agent_mentions(query):
        agent_type = agent_type_from_mention(raw, quoted=quoted, prefix_quirk=prefix_quirk)
        definition = agents.get(agent_type)
        scope = definition.memory_scope if definition is not None else None
        mentions.append(AgentMention(raw, quoted, agent_type, scope))
    return tuple(mentions)


def agents_by_type(
    agents: Mapping[str, AgentDefinition | str | None] | Iterable[AgentDefinition] | None,
) -> dict[str, AgentDefinition]:
    """Normalize the ways a caller may give agents: a mapping type → definition or
    scope, or an iterable of definitions."""
    if agents is None:
        return {}
    if isinstance(agents, Mapping):
        out: dict[str, AgentDefinition] = {}
        for agent_type, value in agents.items():
            if isinstance(value, AgentDefinition):
                out[agent_type] = value
            else:
                scope = None if value in (None, "none") else value
                out[agent_type] = AgentDefinition(agent_type, scope)  # type: ignore[arg-type]
        return out
    return {a.agent_type: a for a in agents}
