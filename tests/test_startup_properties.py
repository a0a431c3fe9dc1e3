"""Phase-1 properties over generated folder trees (hypothesis).

Each example builds its tree in a fresh temporary folder: hypothesis runs many
examples per test, and pytest's `tmp_path` is shared by all of them.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from _files import write
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memeval.memdir.text import js_trim, utf16_len
from memeval.startup import (
    MAX_INCLUDE_DEPTH,
    MemoryFileType,
    StartupEnv,
    discover_memory_files,
    memory_dir_for,
    startup_context_for,
)

TODAY = dt.date(2026, 11, 30)
PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FS_HEAVY = settings(PROPERTY, max_examples=30)


@contextmanager
def sandbox(cwd: str = "proj", **flags: object) -> Iterator[StartupEnv]:
    with tempfile.TemporaryDirectory() as folder:
        env = StartupEnv.in_folder(Path(os.path.realpath(folder)), cwd=cwd, **flags)
        env.cwd.mkdir(parents=True)
        yield env


# --- index truncation ----------------------------------------------------------------

index_lines = st.lists(
    st.tuples(st.integers(0, 320), st.sampled_from(["a", "é", "字", "😀", " ", "-"])),
    max_size=320,
)


@PROPERTY
@given(spec=index_lines)
def test_index_is_truncated_within_limits_and_warning_names_the_reason(
    spec: list[tuple[int, str]],
) -> None:
    raw = "\n".join(char * length for length, char in spec)
    trimmed = js_trim(raw)
    with sandbox() as env:
        write(memory_dir_for(env) / "MEMORY.md", raw)
        files = discover_memory_files(env)
    if not trimmed:
        assert [f.content for f in files] == [""]
        return
    [index] = files
    lines = trimmed.split("\n")
    over_lines = len(lines) > 200
    over_size = utf16_len(trimmed) > 25_000
    body, sep, warning = index.content.partition("\n\n> WARNING: MEMORY.md is ")
    if not (over_lines or over_size):
        assert index.content == trimmed and not sep
        return
    assert sep, "a truncated index must carry the warning"
    assert trimmed.startswith(body)
    assert len(body.split("\n")) <= 200
    assert utf16_len(body) <= 25_000
    if over_lines and not over_size:
        assert warning.startswith(f"{len(lines)} lines (limit: 200).")
    elif over_size and not over_lines:
        assert "(limit: 24.4KB) — index entries are too long." in warning
        assert not warning.startswith(f"{len(lines)} lines")
    else:
        assert warning.startswith(f"{len(lines)} lines and ")
    assert (index.was_line_truncated, index.was_byte_truncated) == (over_lines, over_size)


# --- topic files and the mode flag ----------------------------------------------------

TOPIC_POOL = [
    "testing.md",
    "memory.md",
    "user-role.md",
    "notes/db.md",
    "notes/deep/ci.md",
    "feedback/tone.md",
    "a.md",
    "project/MEMORY-old.md",
    "ref/links.md",
    "x/y/z.md",
]
topic_names = st.lists(st.sampled_from(TOPIC_POOL), min_size=1, max_size=6, unique=True)


def build_memdir(env: StartupEnv, names: list[str], data: st.DataObject) -> None:
    memdir = memory_dir_for(env)
    for i, name in enumerate(names):
        write(memdir / name, f"---\ndescription: topic {i}\n---\nTOPIC-BODY-{i}\n")
    linked = data.draw(st.lists(st.sampled_from(names), unique=True))
    lines = [f"- [{n}]({n}) — hook @{n} @./{n}" for n in linked]
    if data.draw(st.booleans()):
        lines.append("<!-- hidden --> @" + names[0])
    write(memdir / "MEMORY.md", "\n".join(lines) or "# empty index")
    # A nested MEMORY.md is a topic-folder index, never the project index.
    write(memdir / "sub" / "MEMORY.md", "NESTED-INDEX")


@FS_HEAVY
@given(names=topic_names, data=st.data(), team=st.booleans())
def test_topic_memory_files_never_enter_the_startup_context(
    names: list[str], data: st.DataObject, team: bool
) -> None:
    with sandbox(team_memory_enabled=team, external_includes_approved=True) as env:
        build_memdir(env, names, data)
        context = startup_context_for(env, today=TODAY)
    assert "TOPIC-BODY" not in context.text and "NESTED-INDEX" not in context.text
    memdir = memory_dir_for(env)
    assert [f.path for f in context.files] == [memdir / "MEMORY.md"]


@FS_HEAVY
@given(names=topic_names, data=st.data(), team=st.booleans())
def test_in_recall_mode_memory_md_never_appears(
    names: list[str], data: st.DataObject, team: bool
) -> None:
    with sandbox(recall_mode=True, team_memory_enabled=team) as env:
        build_memdir(env, names, data)
        write(memory_dir_for(env) / "team" / "MEMORY.md", "- [t](t.md) — TEAM-INDEX")
        write(env.cwd / "CLAUDE.md", "project rules stay")
        context = startup_context_for(env, today=TODAY)
    assert "MEMORY.md" not in context.text
    assert "TEAM-INDEX" not in context.text and "hook" not in context.text
    assert "project rules stay" in context.text
    assert all(
        f.type not in (MemoryFileType.AUTO_MEM, MemoryFileType.TEAM_MEM) for f in context.in_context
    )


# --- includes ------------------------------------------------------------------------

graphs = st.integers(1, 7).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.lists(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=3),
    )
)


def reachable_within(edges: list[list[int]], roots: list[int], depth: int) -> set[int]:
    seen, frontier = set(roots), set(roots)
    for _ in range(depth):
        frontier = {t for f in frontier for t in edges[f]} - seen
        seen |= frontier
    return seen


@PROPERTY
@given(graph=graphs)
def test_include_graphs_terminate_load_each_file_once_and_respect_depth(
    graph: tuple[int, list[list[int]], list[int]],
) -> None:
    n, edges, roots = graph
    with sandbox() as env:
        for i in range(n):
            write(env.cwd / f"f{i}.md", f"file {i} " + " ".join(f"@f{t}.md" for t in edges[i]))
        # The discovered entry files include the roots (in turn) and nothing else.
        entry_points = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"]
        for name, root in zip(entry_points, roots, strict=False):
            write(env.cwd / name, f"entry @{env.cwd}/f{root}.md")
        files = discover_memory_files(env)
    loaded = [f.path.name for f in files if f.path.name.startswith("f")]
    assert len(loaded) == len(set(loaded)), "a file was loaded twice"
    used_roots = roots[: len(entry_points)]
    # Entry files sit at depth 0, so the graph is walked at most 3 hops from a root.
    allowed = reachable_within(edges, used_roots, MAX_INCLUDE_DEPTH - 2)
    assert {int(name[1:-3]) for name in loaded} <= allowed
    assert set(used_roots) <= {int(name[1:-3]) for name in loaded}
    by_path = {f.path: f for f in files}
    for f in files:
        if f.parent is not None:
            assert f.path.name in by_path[f.parent].content


# --- no file twice, with symlinks ----------------------------------------------------

SLOTS = [
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/rules/r1.md",
    ".claude/rules/sub/r2.md",
    "docs/d.md",
]
layouts = st.lists(
    st.tuples(
        st.sampled_from(["proj", "proj/a"]),
        st.sampled_from(SLOTS),
        st.one_of(st.none(), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=8,
    unique_by=lambda t: (t[0], t[1]),
)


def build_layout(env: StartupEnv, layout: list[tuple[str, str, int | None]]) -> None:
    """Real files at some slots; at others, symlinks to earlier real files."""
    root = env.home.parent.parent
    real: list[Path] = []
    for folder, slot, link_to in layout:
        path = root / folder / slot
        path.parent.mkdir(parents=True, exist_ok=True)
        if link_to is not None and real:
            os.symlink(real[link_to % len(real)], path)
        else:
            path.write_text(f"{folder}/{slot} @./d.md @{root / 'proj/docs/d.md'}")
            real.append(path)


@PROPERTY
@given(layout=layouts)
def test_no_file_is_loaded_twice_in_the_hardened_mode(
    layout: list[tuple[str, str, int | None]],
) -> None:
    with sandbox(cwd="proj/a", quirk_symlink_reload=False, external_includes_approved=True) as env:
        build_layout(env, layout)
        files = discover_memory_files(env)
        real_paths = [os.path.realpath(f.path) for f in files]
    assert len(real_paths) == len(set(real_paths))


@pytest.mark.xfail(
    strict=True,
    reason="known divergence, quirk_symlink_reload: Claude Code checks only the requested "
    "path, so a symlink met after its target loads the same file again",
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts)
@example(layout=[("proj/a", "CLAUDE.md", None), ("proj/a", ".claude/CLAUDE.md", 0)])
def test_no_file_is_loaded_twice_with_the_faithful_quirk(
    layout: list[tuple[str, str, int | None]],
) -> None:
    with sandbox(cwd="proj/a", external_includes_approved=True) as env:
        build_layout(env, layout)
        files = discover_memory_files(replace(env, quirk_symlink_reload=True))
        real_paths = [os.path.realpath(f.path) for f in files]
    assert len(real_paths) == len(set(real_paths))


@PROPERTY
@given(claude_md=st.text(max_size=400), index=st.text(max_size=400))
def test_arbitrary_file_content_never_breaks_discovery(claude_md: str, index: str) -> None:
    with sandbox(external_includes_approved=True) as env:
        write(env.cwd / "CLAUDE.md", claude_md + "\n@" + claude_md[:40])
        write(memory_dir_for(env) / "MEMORY.md", index)
        context = startup_context_for(env, today=TODAY)
    assert context.text.startswith("<system-reminder>\n")
    # Instruction files are dropped when blank; an index is listed even then.
    assert all(js_trim(f.content) for f in context.files if not f.is_index)


# --- every rule of a rules tree loads (hardened), NFD names included ------------------

RULE_NAMES = ("a.md", "b.md", "caf\u00e9.md", "cafe\u0301.md", "x\u0301y.md", "z.md",
              "sub/c.md", "sub/e\u0301.md", "sub/deep/d.md", "notes.txt")
rule_trees = st.lists(st.sampled_from(RULE_NAMES), min_size=1, max_size=6, unique=True)


def _rule_tree(env: StartupEnv, names: list[str]) -> set[str]:
    rules = env.cwd / ".claude" / "rules"
    for name in names:
        write(rules / name, f"rule {name}")
    return {f"rule {n}" for n in names if n.endswith(".md")}


@PROPERTY
@given(names=rule_trees)
def test_every_rule_file_loads_in_the_hardened_mode(names: list[str]) -> None:
    with sandbox(quirk_nfd_rules_folder_skipped=False) as env:
        expected = _rule_tree(env, names)
        loaded = {f.content for f in discover_memory_files(env)}
    assert loaded == expected


@pytest.mark.xfail(
    strict=True,
    reason="known divergence, quirk_nfd_rules_folder_skipped: Claude Code resolves paths "
    "to NFC, so a rules folder holding an NFD-named entry is given up whole",
)
@PROPERTY
@given(names=rule_trees)
@example(names=["a.md", "cafe\u0301.md"])
def test_every_rule_file_loads_with_the_faithful_quirk(names: list[str]) -> None:
    with sandbox() as env:
        expected = _rule_tree(env, names)
        loaded = {f.content for f in discover_memory_files(env)}
    assert loaded == expected
