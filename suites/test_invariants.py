"""The invariants of phase-2 recall (SPEC §3), as hypothesis properties.

Each property builds a small world on disk (a memory base with a project memdir,
agent memdirs of every scope, nested folders, `MEMORY.md` at several depths, files of
random sizes, line counts and mtimes, sometimes symlinks pointing out), runs a few
turns of a Session against an adversarial selector (too many names, duplicates, the
index, `../` and absolute paths, another memdir's files, case and Unicode variants,
non-strings, exceptions), and checks one invariant over every turn.

Each invariant runs under three kinds of settings:
- `hardened` must hold it, always;
- `faithful` (Claude Code's behaviour) holds it too, unless a known quirk breaks it;
- `hardened+<quirk>`, one per quirk that breaks the invariant, is a strict xfail
  named after the quirk, with an explicit example that shows it.

A failure prints the shrunk world as a memdir listing, then what each turn did.
Profiles: `ci` (default; 200 examples, deterministic) or `deep` (5 000), chosen by
`--memeval-profile` or `MEMEVAL_PROFILE`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given, note, settings
from hypothesis import strategies as st

from memeval.memdir import agent_memory_dir, project_memory_dir
from memeval.selectors.base import SelectionRequest, SelectionResult
from memeval.selectors.testing import AdversarialSelector, Move
from memeval.session import Compat, Session, TurnRecord

PROFILE = settings.get_profile(os.environ.get("MEMEVAL_PROFILE", "ci"))

# The limits as SPEC §2 states them, written here rather than imported, so a wrong
# constant in the code is caught instead of silently moving the goalposts.
MAX_SURFACED_PER_TURN = 5
MAX_MEMORY_BYTES = 4096
MAX_MEMORY_LINES = 200
MAX_SESSION_BYTES = 60 * 1024
TRUNCATION_NOTE = ("\n\n> This memory file was truncated ({limit}). "
                   "Use the Read tool to view the complete file at: {path}")


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
NOW_MS = 1_796_040_000_000.0  # 2026-12-01T12:00:00Z
DAY_MS = 86_400_000

# Agents every session knows; only some get a memdir on disk in a given world.
AGENT_SCOPES: dict[str, str | None] = {
    "rev": "user", "ops:db": "project", "scribe": "local", "my-agent-x": "user", "helper": None,
}
MEMDIR_AGENTS = tuple(a for a, s in AGENT_SCOPES.items() if s is not None)
MENTIONABLE = (*AGENT_SCOPES, "ghost")  # "ghost" is defined nowhere

FOLDERS = ("", "sub/", "sub/deep/", "notes/")
BASENAMES = ("a.md", "b.md", "MEMORY.md", "memory.md", "Notes.md", "caf\u00e9.md", "c.txt", "d.md")
OUTSIDE_FILES = ("secret.md", "MEMORY.md", "deep/x.md")
LINK_KINDS = ("dir-out", "file-out", "dir-in")

# Literal names a hostile selector may return; `{...}` is filled in per world.
HOSTILE_LITERALS = (
    "MEMORY.md", "sub/MEMORY.md", "sub/deep/MEMORY.md", "../outside/secret.md",
    "../../../../../outside/secret.md", "{outside}/secret.md", "{project}/a.md",
    "{agent}/a.md", "a.md", "sub/a.md", "linked/secret.md", "ln.md", "/etc/hostname", "",
    "./a.md", "a.md/", "sub//a.md", "A.MD", "caf\u0065\u0301.md",
)
NON_STRINGS = (42, None, ["a.md"], 1.5, b"a.md")
STRAY_SLOTS = ("{stray0}", "{stray1}", "{stray2}")  # files on disk that are not candidates


# ------------------------------------------------------------------ the world
@dataclass(frozen=True)
class FileSpec:
    rel: str
    lines: int
    width: int
    char: str
    final_newline: bool
    age_days: float
    frontmatter: bool

    def text(self) -> str:
        head = (f"---\ndescription: notes on {self.rel}\ntype: project\n---\n"
                if self.frontmatter else "")
        body = "\n".join(self.char * self.width for _ in range(self.lines))
        return head + body + ("\n" if self.final_newline and self.lines else "")

    def __repr__(self) -> str:
        extras = [x for x, on in ((r"final \n", self.final_newline),
                                  ("frontmatter", self.frontmatter)) if on]
        return (f"{self.rel}  [{self.lines} lines x {self.width} {self.char!r}, "
                + "".join(f"{x}, " for x in extras) + f"{self.age_days:g} d old]")


@dataclass(frozen=True)
class TurnSpec:
    mentions: tuple[tuple[str, bool], ...] = ()  # (agent type, quoted form)
    moves: tuple[Move, ...] = ()
    single_word: bool = False
    raise_error: bool = False
    reads: tuple[str, ...] = ()  # memdir-relative files the model Read before this turn
    compact_before: bool = False
    used_tools: bool = True

    @property
    def query(self) -> str:
        if self.single_word:
            return "help"
        parts = [f'@"{t} (agent)"' if quoted else f"@agent-{t}" for t, quoted in self.mentions]
        return " ".join(["please", *parts, "help with this"])

    @property
    def intended_agents(self) -> tuple[str, ...]:
        """Agents the user meant, that have a memory scope: the turn's true scope."""
        return tuple(dict.fromkeys(
            t for t, _ in self.mentions if AGENT_SCOPES.get(t) is not None))

    def __repr__(self) -> str:
        flags = [f for f, on in (("compact first", self.compact_before),
                                 ("no tool use", not self.used_tools),
                                 ("selector raises", self.raise_error)) if on]
        moves = ", ".join(f"{m.kind}({m.arg!r})" for m in self.moves)
        return (f"turn {self.query!r} reads={list(self.reads)} [{moves}]"
                + (f" ({', '.join(flags)})" if flags else ""))


@dataclass(frozen=True)
class Case:
    """A world on disk plus the turns to run. Its repr is the memdir listing."""

    project: tuple[FileSpec, ...]
    agents: tuple[tuple[str, tuple[FileSpec, ...]], ...] = ()
    links: tuple[str, ...] = ()
    turns: tuple[TurnSpec, ...] = (TurnSpec(),)

    def __repr__(self) -> str:
        out = ["", "project memdir:"]
        out += [f"  {f!r}" for f in self.project] or ["  (empty)"]
        for link in self.links:
            out.append(f"  {LINK_TEXT[link]}")
        for agent, files in self.agents:
            out.append(f"agent {agent} ({AGENT_SCOPES[agent]} scope) memdir:")
            out += [f"  {f!r}" for f in files] or ["  (empty)"]
        out.append("outside (never to be opened): " + ", ".join(OUTSIDE_FILES))
        out += [f"{i}. {t!r}" for i, t in enumerate(self.turns, 1)]
        return "\n".join(out)


LINK_TEXT = {
    "dir-out": "linked/ -> ../../../../outside/   (symlinked folder out of the memdir)",
    "file-out": "ln.md -> outside/secret.md   (symlinked file out of the memdir)",
    "dir-in": "alias/ -> sub/   (symlinked folder inside the memdir)",
}


@dataclass
class World:
    root: Path
    project_dir: Path
    agent_dirs: dict[str, Path]
    outside: Path

    @property
    def base(self) -> Path:
        return self.root / "base"

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    def show(self, path: str | Path) -> str:
        """A path as the listing names it: relative to the world's root."""
        return os.path.relpath(path, self.root)

    def placeholders(self) -> dict[str, str]:
        return {"{outside}": str(self.outside), "{project}": str(self.project_dir),
                "{agent}": str(self.agent_dirs["rev"])}


def write_file(memdir: Path, spec: FileSpec) -> None:
    path = memdir / spec.rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec.text(), encoding="utf-8")
    ns = int((NOW_MS - spec.age_days * DAY_MS) * 1_000_000)
    os.utime(path, ns=(ns, ns))


def build_world(case: Case, root: Path) -> World:
    repo = root / "repo"
    repo.mkdir(parents=True)
    base = root / "base"
    project_dir = project_memory_dir(base, repo)
    agent_dirs = {a: agent_memory_dir(a, AGENT_SCOPES[a], memory_base=base, cwd=repo)
                  for a in MEMDIR_AGENTS}
    outside = root / "outside"
    for rel in OUTSIDE_FILES:
        target = outside / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("---\ndescription: a secret outside every memdir\n---\nsecret\n")
    project_dir.mkdir(parents=True)
    for spec in case.project:
        write_file(project_dir, spec)
    for agent, files in case.agents:
        agent_dirs[agent].mkdir(parents=True, exist_ok=True)
        for spec in files:
            write_file(agent_dirs[agent], spec)
    if "dir-out" in case.links:
        os.symlink(outside, project_dir / "linked", target_is_directory=True)
    if "file-out" in case.links:
        os.symlink(outside / "secret.md", project_dir / "ln.md")
    if "dir-in" in case.links:
        (project_dir / "sub").mkdir(exist_ok=True)
        os.symlink(project_dir / "sub", project_dir / "alias", target_is_directory=True)
    return World(root, project_dir, agent_dirs, outside)


# --------------------------------------------------------------- watching opens
_WATCH: list[tuple[str, str]] | None = None


def _audit(event_name: str, args: tuple[Any, ...]) -> None:
    if _WATCH is None or event_name not in ("open", "os.listdir", "os.scandir"):
        return
    target = args[0] if args else None
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if isinstance(target, str | os.PathLike):
        _WATCH.append((event_name, os.path.abspath(os.fspath(target))))


sys.addaudithook(_audit)  # hooks cannot be removed; it records only inside watch_opens()


@contextmanager
def watch_opens() -> Iterator[list[tuple[str, str]]]:
    """Record every file open and folder listing (path as passed, made absolute)."""
    global _WATCH
    seen: list[tuple[str, str]] = []
    _WATCH = seen
    try:
        yield seen
    finally:
        _WATCH = None


# ----------------------------------------------------------- the hostile selector
class Hostile(AdversarialSelector):
    """The test's adversary: this turn's moves, with world paths filled in."""

    name = "hostile"

    def __init__(self, world: World, case: Case) -> None:
        super().__init__(())
        self.world = world
        self.raise_error = False
        # Files that exist in each memdir but are not memories: the index, non-.md
        # files, and what links out lead to. `{stray<i>}` names the i-th of them.
        self.strays: dict[str, list[str]] = {
            str(world.project_dir): strays(case.project, case.links)}
        for agent, files in case.agents:
            self.strays[str(world.agent_dirs[agent])] = strays(files, ())

    def answer(self, request: SelectionRequest) -> SelectionResult:
        if self.raise_error:
            raise RuntimeError("selector exploded")
        built = super().answer(request).names
        names = tuple(self._fill(n, request) for n in built)
        return SelectionResult(names=names, raw_output=f"hostile: {names!r}")

    def _fill(self, name: Any, request: SelectionRequest) -> Any:
        if not isinstance(name, str):
            return name
        for key, value in self.world.placeholders().items():
            name = name.replace(key, value)
        found = self.strays.get(str(request.memory_dir)) or ["MEMORY.md"]
        for i in range(len(STRAY_SLOTS)):
            name = name.replace(f"{{stray{i}}}", found[i % len(found)])
        return name


def strays(files: tuple[FileSpec, ...], links: tuple[str, ...]) -> list[str]:
    out = [f.rel for f in files
           if f.rel.rsplit("/", 1)[-1] == "MEMORY.md" or not f.rel.endswith(".md")]
    if "dir-out" in links:
        out += [f"linked/{rel}" for rel in OUTSIDE_FILES]
    if "file-out" in links:
        out.append("ln.md")
    return out


# ------------------------------------------------------------------ running
@dataclass
class TurnRun:
    spec: TurnSpec
    record: TurnRecord
    opens: list[tuple[str, str]]
    compacted_before: bool
    # What the compaction before this turn read back into the read-file state.
    restored: frozenset[str] = frozenset()
    # The read-file state when the turn starts (after its window's tool reads).
    read_before: frozenset[str] = frozenset()


@dataclass
class Outcome:
    world: World
    compat: Compat
    runs: list[TurnRun] = field(default_factory=list)


def run_case(case: Case, compat: Compat, root: Path) -> Outcome:
    world = build_world(case, root)
    selector = Hostile(world, case)
    session = Session(world.base, world.repo, selector=selector, agents=AGENT_SCOPES,
                      now_ms=NOW_MS, compat=compat)
    outcome = Outcome(world, compat)
    # Hypothesis prints how the case was built; this prints what it is, as a listing.
    note(f"compat: {compat.preset_name}\nworld (shrunk):{case!r}\nwhat each turn did:")
    for spec in case.turns:
        restored: frozenset[str] = frozenset()
        if spec.compact_before:
            session.compact()
            restored = frozenset(r.path for r in session.last_restore if r.put_back)
        selector.moves = spec.moves
        selector.raise_error = spec.raise_error
        events = [{"tool": "Read", "ok": True, "path": str(world.project_dir / rel)}
                  for rel in spec.reads]
        read_before = frozenset(session.read_file_state) | {e["path"] for e in events}
        with watch_opens() as opens:
            record = session.turn(spec.query, tool_events=events, used_tools=spec.used_tools)
        note(f"{spec.query!r}: skipped={record.skipped} dirs={[d.scope for d in record.dirs]} "
             f"picked={list(record.selected_names)} surfaced={list(record.surfaced_keys)} "
             f"errors={list(record.errors)}"
             + (f" restored before={sorted(out_show(world, restored))}" if restored else ""))
        outcome.runs.append(TurnRun(spec, record, opens, spec.compact_before, restored,
                                    read_before))
    return outcome


def out_show(world: World, paths: frozenset[str]) -> list[str]:
    return [world.show(p) for p in paths]


# Worlds are many small folders; tmpfs makes creating and removing them ~30x faster.
_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def check(case: Case, compat: Compat, invariant: Callable[[Outcome], None]) -> None:
    root = Path(tempfile.mkdtemp(prefix="memeval-inv-", dir=_TMP))
    try:
        invariant(run_case(case, compat, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------- strategies
# Hypothesis pays per draw, so each record is a few draws from precomputed choices
# (ordered simplest first, which is where shrinking heads).
SHAPES = (  # (lines, width): empty, small, near and over the 200-line and 4096-byte caps
    (0, 0), (1, 10), (3, 40), (30, 20), (45, 100), (199, 1), (200, 1), (200, 30),
    (201, 1), (230, 5), (1, 4097), (2, 2100), (12, 400),
)
CONTENTS = tuple((lines, width, char) for lines, width in SHAPES for char in ("x", "é", "😀", "中"))
AGES = (0, 0.5, 1, 1.5, 2, 30, 400, 0.999999, 2.0000001, 3.25)
METAS = tuple((age, nl, fm) for age in AGES for nl in (True, False) for fm in (True, False))
RELS = tuple(folder + base for folder in FOLDERS for base in BASENAMES)
ALL_MOVES = (
    *(Move("pick", i) for i in range(10)),
    *(Move(kind, i) for kind in ("absolute", "parent", "case", "nfd", "nfc") for i in range(4)),
    *(Move("literal", name) for name in HOSTILE_LITERALS),
    *(Move("literal", slot) for slot in STRAY_SLOTS),
)
GREEDY = tuple(Move("pick", i) for i in range(10))


def file_specs(sizes: tuple[int, ...]) -> st.SearchStrategy[tuple[FileSpec, ...]]:
    """Memdirs of one of the given sizes (plain `st.lists` stays too small to fill
    the cap of five)."""
    spec = st.builds(
        lambda rel, content, meta: FileSpec(rel, content[0], content[1], content[2], *meta),
        st.sampled_from(RELS), st.sampled_from(CONTENTS), st.sampled_from(METAS),
    )
    return st.sampled_from(sizes).flatmap(
        lambda k: st.lists(spec, min_size=k, max_size=k, unique_by=lambda f: f.rel).map(tuple))


# One turn in ten is odd in each way: a single word, a selector that raises, a
# non-string in the answer (which spoils the whole answer), compaction, no tool use,
# and two in ten have a greedy selector naming ten candidates.
FLAGS = tuple(range(10))
turns = st.builds(
    lambda mentions, moves, odd, extra, reads: TurnSpec(
        mentions=tuple(mentions),
        moves=(*moves, Move("nonstring", NON_STRINGS[extra % len(NON_STRINGS)]))
        if odd == 3 else (*GREEDY, *moves) if odd in (6, 7) or extra == 6 else tuple(moves),
        single_word=odd == 1,
        raise_error=odd == 2,
        compact_before=odd == 4 or extra == 4,
        used_tools=odd != 5,
        reads=tuple(reads),
    ),
    st.lists(st.sampled_from([(a, q) for a in MENTIONABLE for q in (False, True)]), max_size=3),
    st.lists(st.sampled_from(ALL_MOVES), max_size=9),
    st.sampled_from(FLAGS),
    st.sampled_from(FLAGS),
    st.lists(st.sampled_from(RELS), max_size=2),
)

cases = st.builds(
    Case,
    project=file_specs((0, 1, 3, 6, 8, 10)),
    agents=st.lists(st.tuples(st.sampled_from(MEMDIR_AGENTS), file_specs((0, 2, 4, 6))),
                    max_size=2,
                    unique_by=lambda a: a[0]).map(tuple),
    links=st.lists(st.sampled_from(LINK_KINDS), unique=True, max_size=3).map(tuple),
    turns=st.lists(turns, min_size=1, max_size=3).map(tuple),
)


def _f(rel: str, lines: int = 3, width: int = 10, age: float = 2) -> FileSpec:
    return FileSpec(rel, lines, width, "x", True, age, True)


# Explicit worlds that show each quirk; the faithful runs must fail on them.
DUPLICATE_NAMES = Case(project=(_f("a.md"),), turns=(
    TurnSpec(moves=(Move("pick", 0), Move("pick", 0))),))
AGENT_BOTH_WAYS = Case(project=(), agents=(("rev", (_f("a.md"),)),), turns=(
    TurnSpec(mentions=(("rev", True), ("rev", False)), moves=(Move("pick", 0),)),))
QUOTED_AGENT_PREFIX = Case(project=(_f("a.md"),), agents=(("my-agent-x", (_f("b.md"),)),),
                           turns=(TurnSpec(mentions=(("my-agent-x", True),),
                                           moves=(Move("pick", 0),)),))
OVER_CAP = Case(project=tuple(_f(f"m{i}.md", age=i) for i in range(7)), turns=(
    TurnSpec(moves=GREEDY),))
STRAY_FILES = Case(project=(_f("a.md"), _f("MEMORY.md"), _f("c.txt"), _f("sub/MEMORY.md")),
                   turns=(TurnSpec(moves=tuple(Move("literal", s) for s in STRAY_SLOTS)),))
SYMLINK_OUT = Case(project=(_f("a.md"),), links=("dir-out", "file-out"), turns=(
    TurnSpec(moves=(Move("literal", "linked/secret.md"), Move("literal", "ln.md"))),))


def compat_cases(*breaking: str) -> list[Any]:
    """hardened (must hold); faithful (xfail naming the quirks that break the
    invariant, else must hold); hardened plus each breaking quirk alone (xfail)."""
    params = [pytest.param(Compat.hardened(), id="hardened")]
    if breaking:
        params.append(pytest.param(Compat.faithful(), id="faithful", marks=pytest.mark.xfail(
            strict=True, reason=f"known divergence, quirk(s): {', '.join(breaking)}")))
    else:
        params.append(pytest.param(Compat.faithful(), id="faithful"))
    for quirk in breaking:
        params.append(pytest.param(
            Compat.hardened().with_quirks(**{quirk: True}), id=f"hardened+{quirk}",
            marks=pytest.mark.xfail(strict=True, reason=f"quirk {quirk} breaks this invariant")))
    return params


def property_test(*explicit: Case) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`@given(case=cases)` under the chosen profile, with explicit examples first."""

    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        decorated = given(case=cases)(fn)
        for case in reversed(explicit):
            decorated = example(case=case)(decorated)
        return settings(PROFILE)(decorated)

    return wrap


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _inside(path: str, root: str | Path) -> bool:
    root_s = os.path.normpath(os.fspath(root))
    return os.path.normpath(path) == root_s or os.path.normpath(path).startswith(root_s + os.sep)


# --------------------------------------------------------------- invariants
@pytest.mark.parametrize("compat", compat_cases())
@property_test(STRAY_FILES, SYMLINK_OUT)
def test_memory_md_is_never_a_candidate_selected_or_surfaced(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        for run in out.runs:
            r = run.record
            for d in r.dirs:
                assert all(_base(h.filename) != "MEMORY.md" for h in d.candidates), d.manifest
                assert "MEMORY.md" not in {_base(n) for n in d.valid}
            assert all(_base(p.path) != "MEMORY.md" for p in r.picked)
            assert all(_base(s.path) != "MEMORY.md" for s in (*r.surfaced, *r.discarded))

    check(case, compat, invariant)


@pytest.mark.parametrize("compat", compat_cases())
@property_test(OVER_CAP, DUPLICATE_NAMES, AGENT_BOTH_WAYS)
def test_at_most_five_memories_surface_per_turn(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        for run in out.runs:
            assert len(run.record.surfaced) <= MAX_SURFACED_PER_TURN
            assert len(run.record.discarded) <= MAX_SURFACED_PER_TURN
            memories = (run.record.attachment or {"memories": []})["memories"]
            assert len(memories) <= MAX_SURFACED_PER_TURN
            assert len(run.record.system_reminders) == len(run.record.surfaced)

    check(case, compat, invariant)


def _before_note(content: str, path: str) -> str:
    for limit in (f"{MAX_MEMORY_BYTES} byte limit", f"first {MAX_MEMORY_LINES} lines"):
        note_text = TRUNCATION_NOTE.format(limit=limit, path=path)
        if content.endswith(note_text):
            return content[: -len(note_text)]
    return content


@pytest.mark.parametrize("compat", compat_cases())
@property_test()
def test_surfaced_content_fits_4096_bytes_and_200_lines_before_the_note(
    compat: Compat, case: Case
) -> None:
    def invariant(out: Outcome) -> None:
        for run in out.runs:
            for s in (*run.record.surfaced, *run.record.discarded):
                body = _before_note(s.content, s.path)
                assert s.memory.truncated == (body != s.content), "note iff truncated"
                assert utf8_len(body) <= MAX_MEMORY_BYTES
                assert body.count("\n") + 1 <= MAX_MEMORY_LINES

    check(case, compat, invariant)


@pytest.mark.parametrize(
    "compat", compat_cases("duplicate_names_surface_twice")
)
@property_test(DUPLICATE_NAMES, AGENT_BOTH_WAYS)
def test_no_path_surfaces_twice_in_a_session_until_compaction(compat: Compat, case: Case) -> None:
    """Invariant 4 with its compaction exception stated exactly: a path surfaces at
    most once between two compactions; after a compaction it may surface again only
    if that compaction did not read it back into the read-file state (it was not among
    the five newest eligible entries, was over 5 000 estimated tokens, or could not be
    read), or if it has since left the read-file state by LRU eviction (100 newer
    entries)."""

    def invariant(out: Outcome) -> None:
        seen: set[str] = set()
        for run in out.runs:
            if run.compacted_before:
                seen = set(run.restored)
            earlier = set(seen)
            for path in run.record.surfaced_paths:
                if path in earlier and path not in run.read_before:
                    earlier.discard(path)  # evicted since: the exception applies, once
                    seen.discard(path)
                assert path not in seen, f"{out.world.show(path)} surfaced again"
                seen.add(path)

    check(case, compat, invariant)


# Memories surfaced, then a compaction: the restored ones must not surface again.
RESTORED_STAY_READ = Case(project=tuple(_f(f"m{i}.md", age=i + 1) for i in range(3)), turns=(
    TurnSpec(moves=GREEDY), TurnSpec(moves=GREEDY, compact_before=True)))


@pytest.mark.parametrize("compat", [
    pytest.param(Compat.hardened(), id="hardened"),
    pytest.param(Compat.faithful().with_quirks(duplicate_names_surface_twice=False),
                 id="faithful-duplicate_names_surface_twice"),
])
@property_test(RESTORED_STAY_READ)
def test_a_path_compaction_restored_does_not_surface_while_it_stays_read(
    compat: Compat, case: Case
) -> None:
    """The other half of invariant 4's exception: what a compaction read back is in the
    read-file state, and does not surface until it leaves it."""

    def invariant(out: Outcome) -> None:
        since: set[str] = set()
        for run in out.runs:
            if run.compacted_before:
                since = set(run.restored)
                assert since <= run.read_before, "a restored file is not in the state"
            for path in run.record.surfaced_paths:
                assert path not in since or path not in run.read_before, (
                    f"{out.world.show(path)} was restored by the compaction and still "
                    "surfaced")
            for path in run.record.surfaced_paths:
                since.discard(path)

    check(case, compat, invariant)


@pytest.mark.parametrize("compat", compat_cases("quoted_agent_prefix_quirk"))
@property_test(QUOTED_AGENT_PREFIX)
def test_agent_turn_surfaces_only_that_agents_memdir(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        for run in out.runs:
            intended = run.spec.intended_agents
            for s in (*run.record.surfaced, *run.record.discarded):
                if intended:
                    assert any(_inside(s.path, out.world.agent_dirs[a]) for a in intended), (
                        f"{out.world.show(s.path)} is outside the memdirs of {intended}")
                else:
                    assert _inside(s.path, out.world.project_dir), out.world.show(s.path)
                    assert not any(_inside(s.path, d) for d in out.world.agent_dirs.values())

    check(case, compat, invariant)


@pytest.mark.parametrize("compat", compat_cases("follow_symlinks_out_of_memdir"))
@property_test(SYMLINK_OUT)
def test_no_file_outside_the_scoped_memdirs_is_ever_opened(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        world_root = os.path.realpath(out.world.root)
        for run in out.runs:
            scoped = [os.path.realpath(d.memory_dir) for d in run.record.dirs]
            for kind, path in run.opens:
                real = os.path.realpath(path)
                if not _inside(real, world_root):
                    continue  # the interpreter's own files (lazy imports, templates)
                assert any(_inside(real, d) for d in scoped), (
                    f"{kind} {out.world.show(path)} (really {out.world.show(real)}) is outside "
                    f"the memdirs in scope {[out.world.show(d) for d in scoped]}")

    check(case, compat, invariant)


@pytest.mark.parametrize("compat", compat_cases())
@property_test(STRAY_FILES, SYMLINK_OUT, DUPLICATE_NAMES)
def test_every_surfaced_memory_was_a_listed_candidate(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        for run in out.runs:
            listed = {str(h.file_path) for h in run.record.candidates}
            for s in (*run.record.surfaced, *run.record.discarded):
                assert s.path in listed, f"{out.world.show(s.path)} was never a candidate"

    check(case, compat, invariant)


@pytest.mark.parametrize("compat", compat_cases())
@property_test(DUPLICATE_NAMES)
def test_selector_failures_are_recorded_as_errors_never_as_empty_picks(
    compat: Compat, case: Case
) -> None:
    """A raising selector is an error; a non-string inside a list of names is not a
    failure (the system drops it alone), so the string names of that answer count."""

    def invariant(out: Outcome) -> None:
        for run in out.runs:
            expect_error = run.spec.raise_error
            for d in run.record.dirs:
                if not d.called:
                    continue
                assert (d.error is not None) == expect_error, (d.error, run.spec)
                if expect_error:
                    assert d.valid == ()
                    assert not any(s.scope == d.scope for s in run.record.surfaced)
                    continue
                # Each nonstring move puts one non-string into the answer: it alone goes.
                strays = [n for n in d.invalid if n.reason == "not-a-string"]
                assert len(strays) == sum(m.kind == "nonstring" for m in run.spec.moves)
                assert all(isinstance(n, str) for n in d.valid)
            if expect_error and run.record.selector_called:
                assert run.record.errors

    check(case, compat, invariant)


# The budget needs many large files to be reached: its own world shape. A file near
# the byte cap surfaces ~4.2 K units, so three full turns pass the 60 K budget. No
# frontmatter: the scan's YAML parse would dominate the run time.
BIG_SHAPES = ((41, 99), (41, 99), (1, 4096), (41, 99), (1, 4097), (3, 1500), (201, 5))
big_files = st.lists(st.tuples(st.sampled_from(BIG_SHAPES), st.sampled_from(AGES)),
                     min_size=20, max_size=26).map(lambda specs: tuple(
    FileSpec(f"big{i:02d}.md", shape[0], shape[1], "x", True, age, False)
    for i, (shape, age) in enumerate(specs)))
FIVE_AND_MORE = tuple(Move("pick", i) for i in range(7))
budget_cases = st.builds(
    Case,
    project=big_files,
    turns=st.lists(st.builds(
        TurnSpec,
        moves=st.sampled_from([FIVE_AND_MORE] * 4 + [FIVE_AND_MORE[:3]]),
        compact_before=st.sampled_from(FLAGS).map(lambda n: n == 1),
        used_tools=st.sampled_from(FLAGS).map(lambda n: n != 2),
    ), min_size=5, max_size=6).map(tuple),
)


@pytest.mark.parametrize("compat", compat_cases())
@settings(PROFILE)
@given(case=budget_cases)
def test_budget_stops_recall_once_reached(compat: Compat, case: Case) -> None:
    def invariant(out: Outcome) -> None:
        attached_units = 0
        for run in out.runs:
            r = run.record
            if run.compacted_before:
                attached_units = 0
            assert r.surfaced_bytes_before == attached_units
            if attached_units >= MAX_SESSION_BYTES:
                event("budget reached")
                assert r.skipped == "budget"
                assert not r.selector_called and r.surfaced == ()
            else:
                assert r.skipped != "budget"
            attached_units += sum(utf16_len(s.content) for s in r.surfaced)
            assert r.surfaced_bytes_after == attached_units

    check(case, compat, invariant)

