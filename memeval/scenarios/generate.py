"""Seeded synthetic scenarios: memdirs of any size whose gold labels hold by construction.

Hand-written fixtures are realistic but few; a generator gives size (up to tens of
thousands of files) and a truth that needs no judgement: every memory is built from
an (entity, topic) pair or a singleton concept, and every query is built to need
exactly the memories it names. The same seed writes byte-identical files.

Shape of what is built:
- entity memories: `<entity>-<topic>.md`, one per (entity, topic), mixed types, in
  nested folders; an entity with six or more of them feeds `over-five` turns;
- stale pairs: two memories on one (entity, topic), the newer replacing the older;
- tool pairs: a usage doc and a pitfall note for one tool (`recent-tool-docs`);
- concepts: singletons whose paraphrase query shares no word with them;
- above 200 files, the memories turns need are the newest 150, so the
  200-newest cut keeps them; superseded twins are the oldest files (`large-memdir`).
"""

from __future__ import annotations

import os
import random
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memeval.errors import MemevalError
from memeval.scenarios import _vocab as V
from memeval.scenarios._write import mtimes_lines, to_ms, write_file, yaml_str
from memeval.scenarios.schema import DAY_MS, INDEX_FILENAME

DEFAULT_NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
MAX_FILES = 100_000
MAX_AGENTS = 20
SCAN_CUT = 200  # the scanner keeps the newest 200 (SPEC §2.3)
HOT_FILES = 150  # above the cut, turn targets are this many newest files
COMPACT_EVERY = 25  # turns between compactions, so the 60 KB budget never stops recall


@dataclass
class _File:
    path: str
    type: str
    name: str
    description: str
    body: str
    hot: bool = True
    age_range: tuple[float, float] = (0.0, 720.0)  # days
    mtime_ms: int = 0


@dataclass
class _EntityUnit:
    entity: str
    files: list[tuple[str, _File]] = field(default_factory=list)  # (topic slug, file)


@dataclass
class _StaleUnit:
    entity: str
    noun: str
    old: _File
    new: _File


@dataclass
class _ToolUnit:
    tool: str
    usage: _File
    gotcha: _File


@dataclass
class _AgentUnit:
    type: str
    scope: str
    files: list[tuple[str, str, _File]] = field(default_factory=list)  # entity, slug, file


@dataclass
class _Turn:
    category: str
    query: str
    why: str
    relevant: list[str]
    tool: str | None = None
    compact_before: bool = False


_TOPIC = {slug: (noun, details) for slug, noun, details in V.TOPICS}


class _Builder:
    """All random choices of one generation, drawn in a fixed order from one seed."""

    def __init__(self, seed: int, files: int, turns: int, agents: int = 0) -> None:
        self.rng = random.Random(seed)
        self.n_files = files
        self.n_turns = turns
        self.n_agents = agents
        self.agents: list[_AgentUnit] = []
        self.large = files > SCAN_CUT
        self.files: list[_File] = []
        self.entities: list[_EntityUnit] = []
        self.stale: list[_StaleUnit] = []
        self.tools: list[_ToolUnit] = []
        self.concepts: list[tuple[tuple[str, str, str], _File]] = []
        names = [f"{a}-{n}" for a in V.ADJECTIVES for n in V.NOUNS]
        self.rng.shuffle(names)
        self._names = names
        self._name_index = 0

    # -- names and files -------------------------------------------------------------
    def _entity(self) -> str:
        i = self._name_index
        self._name_index += 1
        base = self._names[i % len(self._names)]
        rounds = i // len(self._names)
        if rounds == 0:
            return base
        suffix = V.SUFFIXES[(rounds - 1) % len(V.SUFFIXES)]
        extra = (rounds - 1) // len(V.SUFFIXES)
        return f"{base}-{suffix}" + (f"{extra + 1}" if extra else "")

    def _type(self) -> str:
        return self.rng.choices(V.MEMORY_TYPES, weights=V.TYPE_WEIGHTS)[0]

    def _folder(self, mem_type: str, slug: str) -> str:
        roll = self.rng.random()
        if roll < 0.4:
            return ""
        if roll < 0.8:
            return f"{mem_type}/"
        return f"{mem_type}/{slug}/"

    def _body(self, statement: str) -> str:
        why = self.rng.choice(V.WHYS)
        apply = self.rng.choice(V.APPLIES)
        return (f"{statement[0].upper()}{statement[1:]}.\n\n"
                f"**Why:** {why}.\n**How to apply:** {apply}.\n")

    def _add(self, file: _File) -> _File:
        self.files.append(file)
        return file

    def _entity_file(self, entity: str, slug: str, hot: bool) -> _File:
        noun, details = _TOPIC[slug]
        mem_type = self._type()
        detail = self.rng.choice(details)
        description = f"{entity} {noun} {V.TYPE_LABELS[mem_type]} — {detail}"
        return self._add(_File(
            path=f"{self._folder(mem_type, slug)}{entity}-{slug}.md", type=mem_type,
            name=f"{entity} {noun}", description=description,
            body=self._body(f"for {entity}, the {noun}: {detail}"), hot=hot,
            age_range=(0, 90) if self.large and hot else (91, 1500) if self.large
            else (0, 720)))

    # -- units -----------------------------------------------------------------------
    def _entity_units(self, budget: int, hot: bool) -> None:
        first = True
        while budget > 0:
            size = min(budget, 7 if first and budget >= 10 else self.rng.randint(1, 8))
            first = False
            entity = self._entity()
            unit = _EntityUnit(entity)
            for topic in self.rng.sample(range(len(V.TOPICS)), size):
                slug = V.TOPICS[topic][0]
                unit.files.append((slug, self._entity_file(entity, slug, hot)))
            if hot:
                self.entities.append(unit)
            budget -= size

    def _stale_unit(self) -> None:
        entity = self._entity()
        slug, noun, details = V.TOPICS[self.rng.randrange(len(V.TOPICS))]
        old_detail, new_detail = self.rng.sample(details, 2)
        folder = self._folder("project", slug)
        names = [f"{folder}{entity}-{slug}.md", f"{folder}{entity}-{slug}-update.md"]
        self.rng.shuffle(names)
        old = self._add(_File(
            path=names[0], type="project", name=f"{entity} {noun}",
            description=f"{entity} {noun} decision — {old_detail}",
            body=self._body(f"for {entity}, the {noun}: {old_detail}"),
            hot=not self.large, age_range=(1500, 2000) if self.large else (300, 720)))
        new = self._add(_File(
            path=names[1], type="project", name=f"{entity} {noun} (revised)",
            description=f"{entity} {noun} decision, revised — {new_detail}",
            body=self._body(f"for {entity}, the {noun} changed: {new_detail}; this "
                            f"replaces the earlier rule ({old_detail})"),
            age_range=(0, 60)))
        self.stale.append(_StaleUnit(entity, noun, old, new))

    def _tool_unit(self, spec: tuple[str, str, str, str, str]) -> None:
        tool, short, usage_text, gotcha_text, _ = spec
        age = (0, 90) if self.large else (0, 720)
        usage = self._add(_File(f"tools/{short}-usage.md", "reference", f"{short} usage",
                                usage_text, self._body(usage_text), age_range=age))
        gotcha = self._add(_File(f"tools/{short}-pitfall.md", "feedback", f"{short} pitfall",
                                 gotcha_text, self._body(gotcha_text), age_range=age))
        self.tools.append(_ToolUnit(tool, usage, gotcha))

    def _concept(self, spec: tuple[str, str, str]) -> None:
        slug, description, _ = spec
        mem_type = "user" if description.startswith("the user") else \
            self.rng.choice(("project", "reference"))
        folder = self.rng.choice(("", "team/"))
        file = self._add(_File(f"{folder}{slug}.md", mem_type, slug.replace("-", " "),
                               description, self._body(description),
                               age_range=(0, 90) if self.large else (0, 720)))
        self.concepts.append((spec, file))

    def build_files(self) -> None:
        hot = min(self.n_files, HOT_FILES) if self.large else self.n_files
        n_tools = min(len(V.TOOLS), hot // 12)
        n_concepts = min(len(V.CONCEPTS), hot // 8)
        n_stale = hot // 12
        if self.large:
            n_stale = min(n_stale, self.n_files - SCAN_CUT)
        for spec in self.rng.sample(V.TOOLS, n_tools):
            self._tool_unit(spec)
        for spec in self.rng.sample(V.CONCEPTS, n_concepts):
            self._concept(spec)
        for _ in range(n_stale):
            self._stale_unit()
        used_hot = sum(f.hot for f in self.files)
        self._entity_units(hot - used_hot, hot=True)
        self._entity_units(self.n_files - len(self.files), hot=False)
        for number in range(self.n_agents):  # drawn last: agents=0 keeps older outputs
            self._agent_unit(number)

    def _agent_unit(self, number: int) -> None:
        """An agent memdir whose notes sit on (entity, topic) pairs the project also has,
        so the project memory is the tempting but out-of-scope one."""
        base = V.AGENT_TYPES[number % len(V.AGENT_TYPES)]
        rounds = number // len(V.AGENT_TYPES)
        agent = _AgentUnit(f"{base}-{rounds + 1}" if rounds else base,
                           V.AGENT_SCOPES[number % len(V.AGENT_SCOPES)])
        pairs = [(u.entity, slug) for u in self.entities for slug, _ in u.files]
        taken: set[str] = set()
        for _ in range(self.rng.randint(3, 8)):
            if pairs:
                entity, slug = self.rng.choice(pairs)
            else:
                entity, slug = self._entity(), self.rng.choice(V.TOPICS)[0]
            name = f"{entity}-{slug}.md"
            if name in taken:
                continue
            taken.add(name)
            noun, details = _TOPIC[slug]
            detail = self.rng.choice(details)
            description = f"{agent.type} checklist for {entity} {noun} — {detail}"
            agent.files.append((entity, slug, _File(
                name, "feedback", f"{agent.type} on {entity} {noun}", description,
                self._body(f"when reviewing {entity}, the {noun}: {detail}"),
                age_range=(0, 90) if self.large else (0, 720))))
        self.agents.append(agent)

    def all_files(self) -> list[_File]:
        return self.files + [f for a in self.agents for _, _, f in a.files]

    def assign_mtimes(self, now_ms: int) -> None:
        taken: set[int] = set()
        for file in self.all_files():
            low, high = file.age_range
            while True:
                age = self.rng.randrange(int(low * DAY_MS), int(high * DAY_MS))
                if now_ms - age not in taken:
                    break
            file.mtime_ms = now_ms - age
            taken.add(file.mtime_ms)

    # -- turns -----------------------------------------------------------------------
    def build_turns(self) -> list[_Turn]:
        used: set[str] = set()
        makers = {
            "direct": self._direct, "multi": self._multi, "over-five": self._over_five,
            "already-surfaced": self._already_surfaced, "paraphrase": self._paraphrase,
            "recent-tool-docs": self._tool_docs,
            "large-memdir" if self.large else "stale": self._stale,
            "none": self._none, "keyword-trap": self._trap,
        }
        if self.agents:
            makers["agent-scope"] = self._agent_scope
        turns: list[_Turn] = []
        since_compact = 0
        while len(turns) < self.n_turns:
            order = list(makers)
            self.rng.shuffle(order)
            progressed = False
            for category in order:
                left = self.n_turns - len(turns)
                if left <= 0:
                    break
                compact = since_compact >= COMPACT_EVERY
                if compact:
                    used.clear()
                made = makers[category](used, left)
                if made is None and not compact and used:
                    used.clear()  # material exists but surfaced already: compact first
                    compact = True
                    made = makers[category](used, left)
                if made is None:
                    continue
                if compact:
                    made[0].compact_before = True
                    since_compact = 0
                for turn in made:
                    used.update(turn.relevant)
                turns.extend(made)
                since_compact += len(made)
                progressed = True
            if not progressed:  # pragma: no cover - `none` always makes a turn
                raise MemevalError("generator could not make any turn")
        return turns

    def _free(self, unit: _EntityUnit, used: set[str]) -> list[tuple[str, _File]]:
        return [(slug, f) for slug, f in unit.files if f.path not in used]

    def _direct(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [(u, s, f) for u in self.entities for s, f in self._free(u, used)]
        if not pool:
            return None
        unit, slug, file = self.rng.choice(pool)
        noun = _TOPIC[slug][0]
        query = self.rng.choice(V.DIRECT_TEMPLATES).format(noun=noun, entity=unit.entity)
        return [_Turn("direct", query, f"{file.path} is the only memory on the {noun} of "
                      f"{unit.entity}", [file.path])]

    def _multi(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [u for u in self.entities if len(self._free(u, used)) >= 2]
        if not pool:
            return None
        unit = self.rng.choice(pool)
        free = self._free(unit, used)
        picked = self.rng.sample(free, min(len(free), self.rng.choice((2, 2, 3))))
        nouns = [_TOPIC[s][0] for s, _ in picked]
        listed = ", ".join(nouns[:-1]) + f" and {nouns[-1]}"
        query = self.rng.choice(V.MULTI_TEMPLATES).format(nouns=listed, entity=unit.entity)
        return [_Turn("multi", query, f"one memory each covers the {listed} of {unit.entity}",
                      [f.path for _, f in picked])]

    def _over_five(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [u for u in self.entities
                if len(u.files) > 5 and all(f.path not in used for _, f in u.files)]
        if not pool:
            return None
        unit = self.rng.choice(pool)
        query = self.rng.choice(V.OVER_FIVE_TEMPLATES).format(entity=unit.entity)
        return [_Turn("over-five", query, f"all {len(unit.files)} memories about "
                      f"{unit.entity} answer it; at most 5 can surface",
                      [f.path for _, f in unit.files])]

    def _already_surfaced(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [u for u in self.entities if len(self._free(u, used)) >= 2]
        if left < 2 or not pool:
            return None
        unit = self.rng.choice(pool)
        (slug1, first), (slug2, second) = self.rng.sample(self._free(unit, used), 2)
        noun1, noun2 = _TOPIC[slug1][0], _TOPIC[slug2][0]
        ask = self.rng.choice(V.DIRECT_TEMPLATES).format(noun=noun1, entity=unit.entity)
        follow = self.rng.choice(V.FOLLOW_UP_TEMPLATES).format(
            noun1=noun1, noun2=noun2, entity=unit.entity)
        return [
            _Turn("direct", ask, f"{first.path} is the only memory on the {noun1} of "
                  f"{unit.entity}", [first.path]),
            _Turn("already-surfaced", follow, f"{first.path} surfaced in the previous turn "
                  f"and must not repeat; only {second.path} is new", [second.path]),
        ]

    def _paraphrase(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [(spec, f) for spec, f in self.concepts if f.path not in used]
        if not pool:
            return None
        spec, file = self.rng.choice(pool)
        return [_Turn("paraphrase", spec[2], f"{file.path} ({spec[1]}) answers it with no "
                      "word in common", [file.path])]

    def _tool_docs(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [u for u in self.tools if u.gotcha.path not in used]
        if not pool:
            return None
        unit = self.rng.choice(pool)
        question = next(t[4] for t in V.TOOLS if t[0] == unit.tool)
        query = self.rng.choice(V.TOOL_TEMPLATES).format(question=question)
        return [_Turn("recent-tool-docs", query, f"{unit.tool} was just used: its pitfall "
                      f"note must surface, its usage doc {unit.usage.path} must not",
                      [unit.gotcha.path], tool=unit.tool)]

    def _stale(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [u for u in self.stale if u.new.path not in used]
        if not pool:
            return None
        unit = self.rng.choice(pool)
        query = self.rng.choice(V.STALE_TEMPLATES).format(noun=unit.noun, entity=unit.entity)
        if self.large:
            return [_Turn("large-memdir", query, f"{unit.new.path} is among the newest "
                          f"{SCAN_CUT}; the superseded {unit.old.path} is beyond the cut",
                          [unit.new.path])]
        return [_Turn("stale", query, f"{unit.new.path} replaced the older "
                      f"{unit.old.path}, which now misleads", [unit.new.path])]

    def _agent_scope(self, used: set[str], left: int) -> list[_Turn] | None:
        pool = [(a, e, s, f) for a in self.agents for e, s, f in a.files
                if f"@{a.type}/{f.path}" not in used]
        if not pool:
            return None
        agent, entity, slug, file = self.rng.choice(pool)
        noun = _TOPIC[slug][0]
        query = self.rng.choice(V.AGENT_TEMPLATES).format(agent=agent.type, noun=noun,
                                                          entity=entity)
        return [_Turn("agent-scope", query, f"only {agent.type}'s memory holds its checklist "
                      f"for the {noun} of {entity}; project memories are out of scope",
                      [f"@{agent.type}/{file.path}"])]

    def _none(self, used: set[str], left: int) -> list[_Turn] | None:
        return [_Turn("none", self.rng.choice(V.NONE_QUERIES),
                      "a general question; no memory is about it", [])]

    def _trap(self, used: set[str], left: int) -> list[_Turn] | None:
        present = {slug for u in self.entities for slug, _ in u.files}
        pool = [(slug, q) for slug, q in V.TRAPS if slug in present]
        if not pool:
            return None
        slug, query = self.rng.choice(pool)
        return [_Turn("keyword-trap", query, f"shares words with the {_TOPIC[slug][0]} "
                      "memories, but asks about something else", [])]


def _memory_text(file: _File) -> str:
    return (f"---\nname: {file.name}\ndescription: {file.description}\ntype: {file.type}\n"
            f"---\n{file.body}")


def _index_text(files: list[_File]) -> str:
    lines = []
    for file in sorted(files, key=lambda f: f.path):
        hook = file.description if len(file.description) <= 110 else \
            file.description[:107].rstrip() + "..."
        lines.append(f"- [{file.name}]({file.path}) — {hook}")
    return "\n".join(lines) + "\n"


def _mtimes(indent: str, files: list[_File], index_ms: int) -> list[str]:
    return mtimes_lines(indent, [(INDEX_FILENAME, index_ms)] + [
        (f.path, f.mtime_ms) for f in sorted(files, key=lambda f: f.path)])


def _agent_dirname(scenario_id: str, agent_type: str) -> str:
    return f"{scenario_id}-agent-{agent_type}"


def _scenario_text(scenario_id: str, seed: int, now: datetime, files: list[_File],
                   index_ms: int, turns: list[_Turn],
                   agents: list[_AgentUnit] | None = None) -> str:
    out = [
        f"# Generated by `memeval generate --seed {seed} --files {len(files)} "
        f"--turns {len(turns)}`; gold labels hold by construction.",
        f"id: {scenario_id}",
        f"description: {yaml_str(f'Synthetic memdir of {len(files)} files, seed {seed}.')}",
        f"now: {now:%Y-%m-%dT%H:%M:%S}.{now.microsecond // 1000:03d}Z",
        "mode: recall",
        f"project_root: /home/user/{scenario_id}",
        "memdirs:",
        "  project:",
        f"    from: {scenario_id}",
        "    mtimes:",
    ]
    out += _mtimes("      ", files, index_ms)
    if agents:
        out.append("agents:")
        for agent in agents:
            out += [f"  {agent.type}:", f"    scope: {agent.scope}", "    memdir:",
                    f"      from: {_agent_dirname(scenario_id, agent.type)}", "      mtimes:"]
            out += _mtimes("        ", [f for _, _, f in agent.files], index_ms)
    out.append("turns:")
    for number, turn in enumerate(turns, 1):
        out += [f"  - id: t{number}", f"    query: {yaml_str(turn.query)}",
                f"    category: {turn.category}", f"    why: {yaml_str(turn.why)}",
                f"    relevant: [{', '.join(yaml_str(p) for p in turn.relevant)}]"]
        if turn.tool:
            out.append(f"    tool_events: [{{tool: {yaml_str(turn.tool)}, ok: true}}]")
        if turn.compact_before:
            out.append("    compact_before: true")
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Rendered:
    """A generated scenario before it is written: every output file's bytes.

    Args:
        scenario_id: the scenario's id.
        scenario_text: the scenario YAML.
        files: path relative to the memdir -> (bytes, mtime in ms), `MEMORY.md` included.
        agent_files: memdir folder name -> its files, likewise, one per agent.
    """

    scenario_id: str
    scenario_text: str
    files: dict[str, tuple[bytes, int]]
    agent_files: dict[str, dict[str, tuple[bytes, int]]] = field(default_factory=dict)


def render(seed: int, files: int, turns: int, *, now: datetime = DEFAULT_NOW,
           scenario_id: str | None = None, agents: int = 0) -> Rendered:
    """Build a synthetic scenario in memory (what `generate` writes); see `generate`."""
    if not 1 <= files <= MAX_FILES:
        raise MemevalError(f"files must be between 1 and {MAX_FILES}, got {files}")
    if turns < 1:
        raise MemevalError(f"turns must be at least 1, got {turns}")
    if now.tzinfo is None:
        raise MemevalError("now must be timezone-aware (UTC)")
    now = now.astimezone(UTC)
    scenario_id = scenario_id or f"synthetic-s{seed}-f{files}-t{turns}"
    if not 0 <= agents <= MAX_AGENTS:
        raise MemevalError(f"agents must be between 0 and {MAX_AGENTS}, got {agents}")
    builder = _Builder(seed, files, turns, agents)
    builder.build_files()
    now_ms = to_ms(now)
    builder.assign_mtimes(now_ms)
    made = builder.build_turns()
    out = {f.path: (_memory_text(f).encode("utf-8"), f.mtime_ms) for f in builder.files}
    out[INDEX_FILENAME] = (_index_text(builder.files).encode("utf-8"), now_ms)
    agent_out: dict[str, dict[str, tuple[bytes, int]]] = {}
    for agent in builder.agents:
        agent_files = [f for _, _, f in agent.files]
        folder = {f.path: (_memory_text(f).encode("utf-8"), f.mtime_ms) for f in agent_files}
        folder[INDEX_FILENAME] = (_index_text(agent_files).encode("utf-8"), now_ms)
        agent_out[_agent_dirname(scenario_id, agent.type)] = folder
    text = _scenario_text(scenario_id, seed, now, builder.files, now_ms, made, builder.agents)
    return Rendered(scenario_id, text, out, agent_out)


def _write_folder(folder: Path, content: dict[str, tuple[bytes, int]]) -> None:
    for name, (data, mtime_ms) in content.items():
        write_file(folder / name, data, mtime_ms)


def generate(seed: int, files: int, turns: int, out: str | os.PathLike[str], *,
             now: datetime = DEFAULT_NOW, scenario_id: str | None = None,
             agents: int = 0, overwrite: bool = False) -> Path:
    """Write a synthetic scenario and its memdir; return the scenario file.

    Writes `<out>/scenarios/<id>.yaml` and `<out>/memdirs/<id>/` (with `MEMORY.md`),
    the same layout as `fixtures/`, so `load` finds the memdir by itself. Memory
    files on disk also get the mtimes the scenario states.

    Args:
        seed: the same seed (and sizes) gives byte-identical output.
        files: memory files to write (1 to 100 000), `MEMORY.md` not counted.
        turns: turns to write (at least 1).
        out: the output folder.
        now: the scenario clock; mtimes are spread before it.
        scenario_id: default `synthetic-s<seed>-f<files>-t<turns>`.
        agents: agents with their own memdirs (scopes user, project, local in turn),
            which add `agent-scope` turns; 0 leaves the output as without agents.
        overwrite: replace an earlier output of the same id instead of refusing.

    Raises:
        MemevalError: sizes out of range, or the output exists and `overwrite` is off.
    """
    rendered = render(seed, files, turns, now=now, scenario_id=scenario_id, agents=agents)
    root = Path(out)
    scenario_path = root / "scenarios" / f"{rendered.scenario_id}.yaml"
    memdir = root / "memdirs" / rendered.scenario_id
    folders = {memdir: rendered.files}
    folders.update({root / "memdirs" / name: content
                    for name, content in rendered.agent_files.items()})
    if scenario_path.exists() or any(folder.exists() for folder in folders):
        if not overwrite:
            raise MemevalError(f"{scenario_path} or {memdir} already exists; pick another "
                               "output folder or overwrite (--force)")
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        scenario_path.unlink(missing_ok=True)
    for folder, content in folders.items():
        _write_folder(folder, content)
    scenario_path.parent.mkdir(parents=True, exist_ok=True)
    scenario_path.write_bytes(rendered.scenario_text.encode("utf-8"))
    return scenario_path
