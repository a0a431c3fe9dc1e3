"""Read scenario YAML into `Scenario` records, reporting every problem at once.

A scenario is written by hand, so a mistake should cost one edit, not one run per
mistake: the loader checks the whole file, collects each problem with its line and
field and the fix, and raises them together as one `ScenarioError`.
"""

from __future__ import annotations

import difflib
import glob
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import datetime
from pathlib import Path

from memeval.labels import PROJECT_SCOPE, GoldLabels, memory_key, split_memory_key
from memeval.scenarios._check import Checker, did_you_mean, join, kind, to_ms
from memeval.scenarios._yaml import Node, YamlSyntaxError, parse
from memeval.scenarios.schema import (
    AGENT_SCOPES,
    CATEGORIES,
    DAY_MS,
    DEFAULT_FLAGS,
    INDEX_FILENAME,
    MODES,
    TURNS_ARE,
    AgentSpec,
    MemdirSpec,
    MemoryFileSpec,
    Scenario,
    ScenarioError,
    ScenarioIssue,
    ToolEvent,
    Turn,
    is_candidate_name,
)

TOP_KEYS = ("id", "description", "now", "mode", "project_root", "flags", "default_age_days",
            "memdirs", "agents", "turns", "categories", "turns_are")
MEMDIR_KEYS = ("from", "mtimes", "files")
MTIME_KEYS = ("age_days", "mtime", "mtime_ms")
NAME_MAX = 255  # bytes in one path segment on common filesystems
MAX_AGE_DAYS = 36_500  # older is before any file time a filesystem keeps
AGE_CAP = " days (about 100 years; older is before any file time)"
MAX_MTIME_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z; later overflows time_t
FILE_KEYS = ("content", *MTIME_KEYS)
AGENT_KEYS = ("scope", "memdir")
TURN_KEYS = ("id", "query", "category", "why", "relevant", "acceptable", "tool_events",
             "used_tools", "compact_before", "tags", "answer")
TOOL_EVENT_KEYS = ("tool", "ok", "path")
MEMDIR_NAMES = (PROJECT_SCOPE,)
MAX_SCENARIO_BYTES = 64 * 2**20  # the largest generated suites are a few MB; more is a mistake
MAX_FROM_FILE_BYTES = 8 * 2**20  # a memory is read for a few KB (the scan's and surfacing's
#                                  caps); a bigger file in a fixture is a mistake, not a memory

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")


def _filename_problem(name: str) -> str | None:
    if not name or name.strip() != name:
        return "must be a non-empty path without surrounding spaces"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "must be relative to the memdir, not absolute"
    if "\\" in name:
        return "use / to separate folders"
    if "\0" in name:
        return "must not contain a NUL byte"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "must not contain empty, '.' or '..' segments (files stay inside the memdir)"
    if any(len(p.encode("utf-8", "surrogatepass")) > NAME_MAX for p in parts):
        return f"has a path segment over {NAME_MAX} bytes, more than a filesystem allows"
    return None


@dataclass(frozen=True)
class FolderFiles:
    """What a `from:` folder holds: its files' bytes by posix path, the symlinks that
    leave it, the files over `MAX_FROM_FILE_BYTES` (left unread), and the sub-folders
    that could not be listed, with why (a path past the system's limit, no access)."""

    files: dict[str, bytes]
    outside: list[str]
    too_big: list[str]
    unlisted: list[tuple[str, str]] = dc_field(default_factory=list)


def _read_capped(path: str | Path) -> bytes | None:
    """A file's bytes, or None when it holds more than `MAX_FROM_FILE_BYTES` (read no
    further than that: a sparse file of gigabytes costs nothing)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_FROM_FILE_BYTES + 1)
    return None if len(data) > MAX_FROM_FILE_BYTES else data


def _read_folder(folder: Path, root: Path | None = None) -> FolderFiles:
    """All regular files under `folder` by posix path, and symlinks that leave it.

    Hidden files are skipped; a symlink whose target is outside the folder (`root`:
    its real path, when the caller has it) is not read (a fixture bundle must not
    pull in files from elsewhere on the machine). Files come in `os.walk`'s order (a
    folder's files by name, then its sub-folders by name), from one listing per
    folder: no `stat` for a plain file.
    """
    found: dict[str, bytes] = {}
    outside: list[str] = []
    too_big: list[str] = []
    unlisted: list[tuple[str, str]] = []
    root = folder.resolve() if root is None else root

    # Depth first, a folder's sub-folders in name order: a stack of those still to read.
    stack = [(os.fspath(folder), "")]
    while stack:
        path, prefix = stack.pop()
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=_entry_name)
        except OSError as exc:
            if not prefix:
                raise  # the folder itself: the caller says it cannot be read
            # Its files would silently be missing from the memdir: say which and why.
            unlisted.append((prefix.rstrip("/"), exc.strerror or type(exc).__name__))
            continue
        subfolders = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if _is_dir(entry):
                if not entry.is_symlink():  # a linked folder is not entered
                    subfolders.append((entry.path, f"{prefix}{name}/"))
                continue
            relative = prefix + name
            if entry.is_symlink():
                linked = Path(entry.path)
                if not linked.resolve().is_relative_to(root):
                    outside.append(relative)
                elif linked.is_file():
                    _keep(found, too_big, relative, _read_capped(linked))
            elif entry.is_file():
                _keep(found, too_big, relative, _read_capped(entry.path))
        stack += reversed(subfolders)
    return FolderFiles(found, outside, too_big, unlisted)


def _keep(found: dict[str, bytes], too_big: list[str], name: str, data: bytes | None) -> None:
    if data is None:
        too_big.append(name)
    else:
        found[name] = data


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # as os.walk: an entry that cannot be checked is not a folder
        return False


@dataclass
class _Context:
    check: Checker
    scenario_dir: Path
    memdirs_root: Path
    now_ms: float
    default_age_days: float
    # memdirs whose definition is broken: labels into them are not checked again
    broken_scopes: set[str] = dc_field(default_factory=set)


def _mtime(ctx: _Context, node: Node, field: str) -> float | None:
    """The mtime a `{age_days|mtime|mtime_ms}` mapping names, or `None` if it names none."""
    given = [k for k in MTIME_KEYS if k in node.value]
    if len(given) > 1:
        ctx.check.error(node.line, field, f"give one of {', '.join(given)}, not several")
        return None
    if not given:
        return None
    key = given[0]
    value_node = node.value[key]
    sub = join(field, key)
    if key == "age_days":
        age = ctx.check.number(value_node, sub, math.nan, minimum=0, maximum=MAX_AGE_DAYS,
                               why_maximum=AGE_CAP)
        if math.isnan(age):
            return None
        return ctx.now_ms - age * DAY_MS
    if key == "mtime_ms":
        ms = ctx.check.number(value_node, sub, math.nan, minimum=0, maximum=MAX_MTIME_MS,
                              why_maximum=" (9999-12-31)")
        return None if math.isnan(ms) else ms
    instant = ctx.check.instant(value_node, sub)
    return None if instant is None else to_ms(instant)


def _default_mtime(ctx: _Context) -> float:
    return ctx.now_ms - ctx.default_age_days * DAY_MS


def _memdir(ctx: _Context, node: Node | None, field: str, scope: str) -> MemdirSpec:
    check = ctx.check
    if node is None or node.value is None:
        return MemdirSpec()
    if not check.mapping(node, field, "from/mtimes/files"):
        ctx.broken_scopes.add(scope)
        return MemdirSpec()
    check.keys(node, MEMDIR_KEYS, field)
    files: dict[str, MemoryFileSpec] = {}
    source: Path | None = None
    folder_files: dict[str, bytes] = {}

    from_node = node.value.get("from")
    from_name = check.string(from_node, join(field, "from"))
    if from_node is not None and from_name is not None:
        found = _resolve_from(ctx, from_name, from_node.line, join(field, "from"))
        if found is None:
            ctx.broken_scopes.add(scope)
        else:
            source, real = found
            try:
                read = _read_folder(source, real)
                folder_files = read.files
                for name in read.outside:
                    check.error(from_node.line, join(field, "from"), f"{source}/{name} is a "
                                "symlink to a file outside the folder; copy the file in")
                for name, why in read.unlisted:
                    check.error(from_node.line, join(field, "from"), f"cannot list "
                                f"{source}/{name} ({why}); its files would be missing from "
                                "the memdir: shorten the path or make the folder readable")
                for name in read.too_big:
                    check.error(from_node.line, join(field, "from"), f"{source}/{name} holds "
                                f"more than {MAX_FROM_FILE_BYTES // 2**20} MB; a memory is "
                                "read for a few KB, so cut the file down or remove it")
            except OSError as exc:
                check.error(from_node.line, join(field, "from"), f"cannot read {source}: {exc}")

    mtimes: dict[str, float] = {}
    mtimes_node = node.value.get("mtimes")
    if mtimes_node is not None and mtimes_node.value is not None and \
            check.mapping(mtimes_node, join(field, "mtimes"), "filename -> {age_days|mtime}"):
        mfield = join(field, "mtimes")
        if from_node is None:
            check.error(mtimes_node.line, mfield, "mtimes apply to files of a `from` folder; "
                        "add `from:` or put age_days/mtime on each inline file")
        for name, entry in mtimes_node.value.items():
            efield = join(mfield, name)
            line = mtimes_node.key_lines[name]
            if source is not None and name not in folder_files:
                hint = did_you_mean(name, folder_files)
                check.error(line, efield, f"no file {name!r} in {source}{hint}")
                continue
            if isinstance(entry.value, int | float) and not isinstance(entry.value, bool):
                check.error(entry.line, efield, f"write {{age_days: {entry.value}}} "
                            f"or {{mtime: 2026-11-30T12:00:00Z}}")
                continue
            if not check.mapping(entry, efield, "age_days/mtime/mtime_ms"):
                continue
            check.keys(entry, MTIME_KEYS, efield)
            value = _mtime(ctx, entry, efield)
            if value is None and not any(k in entry.value for k in MTIME_KEYS):
                check.error(entry.line, efield, "give age_days, mtime or mtime_ms")
            if value is not None:
                mtimes[name] = value

    for name, raw in folder_files.items():
        try:
            content = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            check.error(from_node.line if from_node else None, join(field, "from"),
                        f"{source}/{name} is not UTF-8 text ({exc.reason} at byte {exc.start})")
            continue
        files[name] = MemoryFileSpec(content, mtimes.get(name, _default_mtime(ctx)))

    files_node = node.value.get("files")
    if files_node is not None and files_node.value is not None and \
            check.mapping(files_node, join(field, "files"), "filename -> {content, age_days}"):
        ffield = join(field, "files")
        for name, entry in files_node.value.items():
            efield = join(ffield, name)
            line = files_node.key_lines[name]
            problem = _filename_problem(name)
            if problem:
                check.error(line, efield, f"filename {problem}")
                continue
            if isinstance(entry.value, str):  # shorthand: the content itself
                files[name] = MemoryFileSpec(entry.value, _default_mtime(ctx))
                continue
            if not check.mapping(entry, efield, "content and age_days/mtime"):
                continue
            check.keys(entry, FILE_KEYS, efield)
            content = check.string(entry.value.get("content"), join(efield, "content"))
            if "content" not in entry.value:
                check.error(line, join(efield, "content"),
                            "is required (the file's text, frontmatter included)")
            mtime = _mtime(ctx, entry, efield)
            if content is not None:
                files[name] = MemoryFileSpec(
                    content, mtime if mtime is not None else _default_mtime(ctx))

    names = set(files)
    for name in sorted(names):
        parts = name.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if prefix in names:
                check.error(node.line, field, f"{prefix!r} is a file but {name!r} needs it to "
                            "be a folder; rename one")
    return MemdirSpec(files=files, source=source)


def _resolve_from(ctx: _Context, name: str, line: int,
                  field: str) -> tuple[Path, Path] | None:
    """The `from:` folder as named and its real path, or None (reported)."""
    if not name or os.path.isabs(name) or os.path.normpath(name).split(os.sep)[0] == "..":
        ctx.check.error(line, field, f"{name!r} must name a folder under {ctx.memdirs_root} "
                        "(or next to the scenario), without '..' or an absolute path")
        return None
    tried = [(ctx.memdirs_root / name, ctx.memdirs_root), (ctx.scenario_dir / name,
                                                          ctx.scenario_dir)]
    for candidate, base in tried:
        if candidate.is_dir():
            real = candidate.resolve()
            if not real.is_relative_to(base.resolve()):
                ctx.check.error(line, field, f"{candidate} is, or passes through, a link to "
                                f"{real}, outside {base}; copy the memdir "
                                "into the fixtures instead of linking it")
                return None
            return candidate, real
    known: list[str] = []
    if ctx.memdirs_root.is_dir():
        known = sorted(p.name for p in ctx.memdirs_root.iterdir() if p.is_dir())
    hint = did_you_mean(name, known)
    ctx.check.error(line, field, f"folder {name!r} not found (looked in "
                    f"{', '.join(str(p) for p, _ in tried)}){hint}")
    return None


def _agents(ctx: _Context, node: Node | None) -> dict[str, AgentSpec]:
    check = ctx.check
    agents: dict[str, AgentSpec] = {}
    if node is None or node.value is None or not check.mapping(node, "agents",
                                                               "agent type -> {scope, memdir}"):
        return agents
    for agent_type, entry in node.value.items():
        spec = _agent(ctx, agent_type, entry, node.key_lines[agent_type])
        if spec is None:
            ctx.broken_scopes.add(agent_type)
        else:
            agents[agent_type] = spec
    return agents


def _agent(ctx: _Context, agent_type: str, entry: Node, line: int) -> AgentSpec | None:
    check = ctx.check
    field = join("agents", agent_type)
    if (not agent_type or "/" in agent_type or "\0" in agent_type
            or re.search(r"\s", agent_type) or agent_type in (".", "..")
            or len(agent_type.encode("utf-8", "surrogatepass")) > NAME_MAX):
        check.error(line, field, "an agent type is a folder name: no '/', spaces or NUL, "
                    f"not '.' or '..', at most {NAME_MAX} bytes (e.g. code-reviewer or "
                    "plugin:helper)")
        return None
    if entry.value is None or not check.mapping(entry, field, "scope and memdir"):
        if entry.value is None:
            check.error(line, join(field, "scope"),
                        f"is required: one of {', '.join(AGENT_SCOPES)}")
        return None
    check.keys(entry, AGENT_KEYS, field)
    scope_node = entry.value.get("scope")
    scope = check.string(scope_node, join(field, "scope"))
    if scope_node is None:
        check.error(entry.line, join(field, "scope"),
                    f"is required: one of {', '.join(AGENT_SCOPES)}")
        return None
    if scope is None:
        return None
    if scope not in AGENT_SCOPES:
        check.error(scope_node.line, join(field, "scope"),
                    f"{scope!r} is not a scope{did_you_mean(scope, AGENT_SCOPES)}; "
                    f"use one of {', '.join(AGENT_SCOPES)}")
        return None
    memdir_node = entry.value.get("memdir")
    if scope == "none":
        if memdir_node is not None:
            check.error(memdir_node.line, join(field, "memdir"),
                        "an agent with scope none has no memdir; remove it or set a scope")
        return AgentSpec(agent_type, "none", None)
    memdir = _memdir(ctx, memdir_node, join(field, "memdir"), agent_type)
    return AgentSpec(agent_type, scope, memdir)  # type: ignore[arg-type]


def _flags(check: Checker, node: Node | None) -> dict[str, object]:
    flags: dict[str, object] = dict(DEFAULT_FLAGS)
    if node is None or node.value is None or not check.mapping(node, "flags", "flag -> value"):
        return flags
    for name, value in node.value.items():
        field = join("flags", name)
        line = node.key_lines[name]
        if name in DEFAULT_FLAGS:
            flags[name] = check.boolean(value, field, DEFAULT_FLAGS[name])
            continue
        # Extra switches pass through, but a near-miss of a known one is a typo.
        near = difflib.get_close_matches(name, list(DEFAULT_FLAGS), n=1, cutoff=0.8)
        if near:
            check.error(line, field, f"unknown flag {name!r} (did you mean {near[0]!r}?); "
                        "remove it or fix the name")
            continue
        if value.is_map or value.is_seq:
            check.error(value.line, field, "a flag must be a single value")
            continue
        flags[name] = value.value
    return flags


def _label_keys(ctx: _Context, node: Node | None, field: str, scenario_files: Mapping[str, str],
                agents: Mapping[str, AgentSpec]) -> dict[str, int]:
    """Validated label keys -> line; `scenario_files` maps every file key to its scope."""
    check = ctx.check
    keys: dict[str, int] = {}
    for index, (key, line) in enumerate(check.string_list(node, field)):
        ifield = f"{field}[{index}]"
        if key in keys:
            check.error(line, ifield, f"{key!r} is listed twice (also line {keys[key]})")
            continue
        scope, name = split_memory_key(key)
        if scope in ctx.broken_scopes:  # already reported where the memdir is defined
            keys[key] = line
            continue
        if key.startswith("@") and "/" not in key:
            check.error(line, ifield, f"{key!r}: an agent memory key is @<agent-type>/<file>")
            continue
        if scope != PROJECT_SCOPE and scope not in agents:
            known = ", ".join(sorted(agents)) or "none defined"
            check.error(line, ifield, f"{key!r} names agent {scope!r}, which is not under "
                        f"agents: ({known}){did_you_mean(scope, agents)}")
            continue
        if scope != PROJECT_SCOPE and agents[scope].memdir is None:
            check.error(line, ifield, f"agent {scope!r} has scope none, so no memory files")
            continue
        if key in scenario_files and not is_candidate_name(name):
            why = ("MEMORY.md is the index, never a memory" if name.rsplit("/", 1)[-1] ==
                   INDEX_FILENAME else "only .md files are memories")
            check.error(line, ifield, f"{key!r} can never surface ({why}); remove it")
            continue
        if key not in scenario_files:
            hint = did_you_mean(key, (k for k in scenario_files
                                      if is_candidate_name(split_memory_key(k)[1])))
            agent_keys = [memory_key(a, key) for a in agents if memory_key(a, key) in
                          scenario_files]
            if agent_keys and scope == PROJECT_SCOPE:
                hint = f" (an agent's file is named {agent_keys[0]!r})"
            check.error(line, ifield, f"no memory file {key!r} in this scenario{hint}")
            continue
        keys[key] = line
    return keys


def _turns(ctx: _Context, node: Node | None, files: Mapping[str, str],
           agents: Mapping[str, AgentSpec], categories: tuple[str, ...],
           independent: bool = False) -> list[Turn]:
    check = ctx.check
    if node is None or node.value is None:
        check.error(node.line if node else None, "turns", "is required: a list of turns "
                    "(id, query, category, relevant, ...)")
        return []
    if not node.is_seq:
        check.error(node.line, "turns", f"must be a list of turns, got {kind(node)}")
        return []
    turns: list[Turn] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(node.value):
        field = f"turns[{index}]"
        if not entry.is_map:
            check.error(entry.line, field, f"a turn must be a mapping (id, query, ...), "
                        f"got {kind(entry)}")
            continue
        check.keys(entry, TURN_KEYS, field)
        get = entry.value.get
        turn_id = check.string(get("id"), join(field, "id"), allow_numbers=True)
        if get("id") is None:
            check.error(entry.line, join(field, "id"), "is required (unique within the "
                        "scenario, e.g. t1)")
        elif turn_id is not None:
            if turn_id in seen:
                check.error(get("id").line, join(field, "id"), f"duplicate turn id {turn_id!r}"
                            f" (first on line {seen[turn_id]}); make it unique")
            else:
                seen[turn_id] = get("id").line
        query = check.string(get("query"), join(field, "query"))
        if get("query") is None:
            check.error(entry.line, join(field, "query"), "is required (the user's message)")
        category = check.string(get("category"), join(field, "category"))
        if get("category") is None:
            check.error(entry.line, join(field, "category"),
                        f"is required: one of {', '.join(CATEGORIES)}")
        elif category is not None and category not in CATEGORIES and category not in categories:
            check.error(get("category").line, join(field, "category"),
                        f"unknown category {category!r}"
                        f"{did_you_mean(category, (*CATEGORIES, *categories))}; known: "
                        f"{', '.join(CATEGORIES)} (declare others under `categories:`)")
        why = check.string(get("why"), join(field, "why"), default="") or ""
        why = why.strip()
        if "\n" in why:
            check.error(get("why").line, join(field, "why"), "must be one line")
        relevant = _label_keys(ctx, get("relevant"), join(field, "relevant"), files, agents)
        acceptable = _label_keys(ctx, get("acceptable"), join(field, "acceptable"), files,
                                 agents)
        for key in sorted(set(relevant) & set(acceptable)):
            check.error(acceptable[key], join(field, "acceptable"),
                        f"{key!r} is also relevant (line {relevant[key]}); a memory is "
                        "either relevant or acceptable, keep one")
        events = _tool_events(check, get("tool_events"), join(field, "tool_events"))
        used_tools = check.boolean(get("used_tools"), join(field, "used_tools"), True)
        compact = check.boolean(get("compact_before"), join(field, "compact_before"),
                                independent)
        if independent and not compact:
            check.error(get("compact_before").line, join(field, "compact_before"),
                        "is false, but the scenario's turns are independent questions, "
                        "each started fresh; drop it or declare turns_are: conversation")
        tags = tuple(t for t, _ in check.string_list(get("tags"), join(field, "tags")))
        answer = check.string(get("answer"), join(field, "answer"), allow_numbers=True)
        if turn_id is None or query is None or category is None:
            continue
        labels = GoldLabels(relevant=frozenset(relevant), acceptable=frozenset(acceptable),
                            category=category, why=why)
        turns.append(Turn(id=turn_id, query=query, labels=labels, tool_events=events,
                          used_tools=used_tools, compact_before=compact, line=entry.line,
                          tags=tags, answer=answer))
    if not node.value:
        check.error(node.line, "turns", "is empty; a scenario needs at least one turn")
    return turns


def _tool_events(check: Checker, node: Node | None, field: str) -> tuple[ToolEvent, ...]:
    if node is None or node.value is None:
        return ()
    if not node.is_seq:
        check.error(node.line, field, f"must be a list of {{tool, ok, path}}, got {kind(node)}")
        return ()
    events: list[ToolEvent] = []
    for index, entry in enumerate(node.value):
        efield = f"{field}[{index}]"
        if isinstance(entry.value, str):  # shorthand: a successful call of that tool
            events.append(ToolEvent(entry.value))
            continue
        if not entry.is_map:
            check.error(entry.line, efield, f"must be {{tool: Bash, ok: true}}, got "
                        f"{kind(entry)}")
            continue
        check.keys(entry, TOOL_EVENT_KEYS, efield)
        tool = check.string(entry.value.get("tool"), join(efield, "tool"))
        if "tool" not in entry.value:
            check.error(entry.line, join(efield, "tool"), "is required (e.g. Bash)")
        ok = check.boolean(entry.value.get("ok"), join(efield, "ok"), True)
        path = check.string(entry.value.get("path"), join(efield, "path"))
        if tool:
            events.append(ToolEvent(tool, ok, path))
    return tuple(events)


def _scenario(root: Node, path: Path, check: Checker,
              memdirs_root: Path | None) -> Scenario | None:
    if not root.is_map:
        check.error(root.line, "", f"a scenario is a mapping (id, now, memdirs, turns), "
                    f"got {kind(root)}")
        return None
    check.keys(root, TOP_KEYS, "")
    get = root.value.get
    scenario_id = check.string(get("id"), "id", allow_numbers=True)
    if get("id") is None:
        check.error(root.line, "id", "is required (unique across the suite, e.g. webshop-basics)")
    elif scenario_id is not None and not _ID.match(scenario_id):
        check.error(get("id").line, "id", f"{scenario_id!r} must be letters, digits, '.', '_', "
                    "':' or '-' (it names report files)")
    description = (check.string(get("description"), "description", default="") or "").strip()
    now: datetime | None = None
    if get("now") is None:
        check.error(root.line, "now", "is required: the session clock, e.g. 2026-11-30T12:00:00Z")
    else:
        now = check.instant(get("now"), "now")
    mode = check.string(get("mode"), "mode", default="recall")
    if mode is not None and mode not in MODES:
        check.error(get("mode").line, "mode", f"{mode!r} is not a mode"
                    f"{did_you_mean(mode, MODES)}; use recall or index")
    project_root = check.string(get("project_root"), "project_root")
    if project_root is not None and not (project_root.startswith("/") or
                                         re.match(r"^[A-Za-z]:[\\/]", project_root)):
        check.error(get("project_root").line, "project_root",
                    f"{project_root!r} must be an absolute path such as /home/dev/webshop")
    if project_root is None:
        project_root = f"/home/user/{scenario_id or 'project'}"
    flags = _flags(check, get("flags"))
    default_age = check.number(get("default_age_days"), "default_age_days", 0.0, minimum=0,
                               maximum=MAX_AGE_DAYS, why_maximum=AGE_CAP)
    categories = tuple(c for c, _ in check.string_list(get("categories"), "categories"))
    turns_are = check.string(get("turns_are"), "turns_are", default="conversation")
    if turns_are is not None and turns_are not in TURNS_ARE:
        check.error(get("turns_are").line, "turns_are", f"{turns_are!r}"
                    f"{did_you_mean(turns_are, TURNS_ARE)}; use conversation (context "
                    "carries over) or independent (each turn a question of its own)")

    now_ms = to_ms(now) if now is not None else 0.0
    ctx = _Context(check, path.parent, memdirs_root or path.parent.parent / "memdirs", now_ms,
                   default_age)
    memdirs: dict[str, MemdirSpec] = {}
    memdirs_node = get("memdirs")
    if memdirs_node is not None and memdirs_node.value is not None and \
            check.mapping(memdirs_node, "memdirs", "memdir name -> {from, mtimes, files}"):
        for name, entry in memdirs_node.value.items():
            if name not in MEMDIR_NAMES:
                hint = did_you_mean(name, MEMDIR_NAMES) or \
                    " (agent memdirs go under agents.<type>.memdir)"
                check.error(memdirs_node.key_lines[name], join("memdirs", name),
                            f"unknown memdir {name!r}{hint}")
                ctx.broken_scopes.add(PROJECT_SCOPE)
                continue
            memdirs[name] = _memdir(ctx, entry, join("memdirs", name), name)
    memdirs.setdefault(PROJECT_SCOPE, MemdirSpec())
    agents = _agents(ctx, get("agents"))

    files: dict[str, str] = {}
    for scope, memdir in [(PROJECT_SCOPE, memdirs[PROJECT_SCOPE])] + \
            [(a.type, a.memdir) for a in agents.values() if a.memdir is not None]:
        for name in memdir.files:
            files[memory_key(scope, name)] = scope
    turns = _turns(ctx, get("turns"), files, agents, categories,
                   independent=turns_are == "independent")
    if check.issues or now is None or scenario_id is None or mode is None or turns_are is None:
        return None
    return Scenario(id=scenario_id, path=path, description=description, now=now, now_ms=now_ms,
                    mode=mode, project_root=project_root, flags=flags,  # type: ignore[arg-type]
                    default_age_days=default_age, memdirs=memdirs, agents=agents,
                    turns=tuple(turns), categories=categories,
                    turns_are=turns_are)  # type: ignore[arg-type]


def loads(text: str, path: str | Path = "<string>", *,
          memdirs_root: str | Path | None = None) -> Scenario:
    """Load a scenario from YAML text; `path` names it in errors and anchors `from` folders.

    Raises:
        ScenarioError: listing every problem found.
    """
    path = Path(path)
    check = Checker(str(path))
    try:
        root = parse(text)
    except YamlSyntaxError as exc:
        check.error(exc.line, "", exc.message)
        raise ScenarioError(check.reported()) from None
    if root is None:
        check.error(1, "", "the file is empty; a scenario needs at least id, now and turns")
        raise ScenarioError(check.reported())
    scenario = _scenario(root, path, check,
                         Path(memdirs_root) if memdirs_root is not None else None)
    if scenario is None:
        raise ScenarioError(check.reported())
    return scenario


def load(path: str | Path, *, memdirs_root: str | Path | None = None) -> Scenario:
    """Load and validate one scenario file.

    Args:
        path: the YAML file.
        memdirs_root: where `from:` folders live; default `<scenario dir>/../memdirs`
            (so `fixtures/scenarios/x.yaml` finds `fixtures/memdirs/`). A `from` is
            also looked up next to the scenario file.

    Raises:
        ScenarioError: every problem in the file, one per line as
            `file:line: field: message`.
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        raise ScenarioError([ScenarioIssue(str(path), None, "",
                                           f"cannot read: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError([ScenarioIssue(str(path), None, "", (
            f"the file holds more than {MAX_SCENARIO_BYTES // 2**20} MB, more than any "
            "scenario needs; split it into several scenario files"))])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError([ScenarioIssue(str(path), None, "", f"not UTF-8 text "
                                           f"({exc.reason} at byte {exc.start})")]) from None
    return loads(text, path, memdirs_root=memdirs_root)


@dataclass(frozen=True)
class LoadResult:
    """Scenarios that loaded, and one error per file that did not."""

    scenarios: tuple[Scenario, ...]
    errors: tuple[ScenarioError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def expand_paths(paths: Iterable[str | Path] | str | Path) -> list[Path]:
    """Files named by paths, glob patterns and folders (their `*.yaml`/`*.yml`), in order."""
    if isinstance(paths, str | Path):
        paths = [paths]
    out: list[Path] = []
    for item in paths:
        text = str(item)
        if glob.has_magic(text):
            out.extend(Path(p) for p in sorted(glob.glob(text, recursive=True)))
        elif Path(text).is_dir():
            folder = Path(text)
            out.extend(sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]))
        else:
            out.append(Path(text))
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def _top_key_line(path: Path, key: str) -> int | None:
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, 1):
        if line.startswith(f"{key}:"):
            return number
    return None


def load_many(paths: Iterable[str | Path] | str | Path, *,
              memdirs_root: str | Path | None = None) -> LoadResult:
    """Load every scenario named, keeping the good ones when some files are broken.

    Args:
        paths: files, folders (their `*.yaml`) or glob patterns.
        memdirs_root: as for `load`.

    A scenario whose id repeats an earlier file's id is reported and left out.
    """
    scenarios: list[Scenario] = []
    errors: list[ScenarioError] = []
    named = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    files = expand_paths(named)
    if not files:
        shown = ", ".join(str(p) for p in named) or "(none given)"
        errors.append(ScenarioError([ScenarioIssue(
            shown, None, "", "no scenario files matched; check the path, or quote the glob "
            "so the shell does not expand it")]))
    seen: dict[str, Path] = {}
    for path in files:
        try:
            scenario = load(path, memdirs_root=memdirs_root)
        except ScenarioError as exc:
            errors.append(exc)
            continue
        except Exception as exc:  # a loader bug must not end the run: record it, go on
            errors.append(ScenarioError([ScenarioIssue(
                str(path), None, "", f"internal error while loading ({type(exc).__name__}: "
                f"{exc}); please report it")]))
            continue
        if scenario.id in seen:
            errors.append(ScenarioError([ScenarioIssue(
                str(path), _top_key_line(path, "id"), "id",
                f"scenario id {scenario.id!r} is already used by {seen[scenario.id]}; "
                "ids must be unique across a suite")]))
            continue
        seen[scenario.id] = path
        scenarios.append(scenario)
    return LoadResult(tuple(scenarios), tuple(errors))
