"""Discovery order and file selection (SPEC §4.1) on temporary folder trees."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import replace
from pathlib import Path

import pytest
from _files import write

from memeval.memdir.paths import project_memory_dir
from memeval.startup import (
    MemoryFileType,
    StartupEnv,
    discover,
    discover_memory_files,
    memory_dir_for,
    startup_context_for,
)

T = MemoryFileType


@pytest.fixture
def env(tmp_path: Path) -> StartupEnv:
    env = StartupEnv.in_folder(tmp_path, cwd="work/repo/pkg/sub")
    env.cwd.mkdir(parents=True)
    (tmp_path / "work/repo/.git").mkdir()
    return env


def listing(env: StartupEnv) -> list[tuple[str, str]]:
    root = env.home.parent.parent
    return [(str(f.path.relative_to(root)), f.type.value) for f in discover_memory_files(env)]


def test_full_order_managed_user_project_local_automem_teammem(env: StartupEnv) -> None:
    root = env.home.parent.parent
    repo = root / "work/repo"
    write(env.managed_dir / "CLAUDE.md", "managed")
    write(env.managed_dir / ".claude/rules/m.md", "managed rule")
    write(env.config_home / "CLAUDE.md", "user")
    write(env.config_home / "rules/u.md", "user rule")
    write(root / "work/CLAUDE.md", "above the repo: the walk does not stop at the git root")
    write(repo / "CLAUDE.local.md", "repo local")
    write(repo / "CLAUDE.md", "repo")
    write(repo / ".claude/CLAUDE.md", "repo dot-claude")
    write(repo / ".claude/rules/b.md", "rule b")
    write(repo / ".claude/rules/a.md", "rule a")
    write(repo / "pkg/CLAUDE.md", "pkg")
    write(repo / "pkg/sub/CLAUDE.md", "sub")
    write(repo / "pkg/sub/CLAUDE.local.md", "sub local")
    memdir = memory_dir_for(env)
    write(memdir / "MEMORY.md", "- [a](a.md) — hook")
    write(memdir / "team/MEMORY.md", "- [t](t.md) — team hook")
    env = replace(env, team_memory_enabled=True)
    memdir_rel = str(memdir.relative_to(root))
    assert listing(env) == [
        ("etc/claude-code/CLAUDE.md", "Managed"),
        ("etc/claude-code/.claude/rules/m.md", "Managed"),
        ("home/user/.claude/CLAUDE.md", "User"),
        ("home/user/.claude/rules/u.md", "User"),
        ("work/CLAUDE.md", "Project"),
        ("work/repo/CLAUDE.md", "Project"),
        ("work/repo/.claude/CLAUDE.md", "Project"),
        ("work/repo/.claude/rules/a.md", "Project"),
        ("work/repo/.claude/rules/b.md", "Project"),
        ("work/repo/CLAUDE.local.md", "Local"),
        ("work/repo/pkg/CLAUDE.md", "Project"),
        ("work/repo/pkg/sub/CLAUDE.md", "Project"),
        ("work/repo/pkg/sub/CLAUDE.local.md", "Local"),
        (f"{memdir_rel}/MEMORY.md", "AutoMem"),
        (f"{memdir_rel}/team/MEMORY.md", "TeamMem"),
    ]


def test_folders_below_cwd_and_siblings_are_not_read(env: StartupEnv) -> None:
    root = env.home.parent.parent
    write(root / "work/repo/pkg/sub/deeper/CLAUDE.md", "below cwd")
    write(root / "work/repo/other/CLAUDE.md", "sibling")
    write(root / "work/repo/pkg/sub/CLAUDE.md", "cwd")
    assert listing(env) == [("work/repo/pkg/sub/CLAUDE.md", "Project")]


def test_memdir_is_named_by_the_git_root_not_the_cwd(env: StartupEnv) -> None:
    repo = env.home.parent.parent / "work/repo"
    assert memory_dir_for(env) == project_memory_dir(env.memory_base, repo)
    assert memory_dir_for(env) != project_memory_dir(env.memory_base, env.cwd)


def test_outside_git_the_cwd_names_the_memdir(tmp_path: Path) -> None:
    env = StartupEnv.in_folder(tmp_path, cwd="plain/folder")
    env.cwd.mkdir(parents=True)
    assert memory_dir_for(env) == project_memory_dir(env.memory_base, env.cwd)


def make_worktree(main: Path, worktree: Path, name: str = "wt") -> None:
    """A linked worktree as `git worktree add` lays it out (without running git)."""
    git_dir = main / ".git" / "worktrees" / name
    git_dir.mkdir(parents=True)
    (git_dir / "commondir").write_text("../..\n")
    (git_dir / "gitdir").write_text(str(worktree / ".git") + "\n")
    worktree.mkdir(parents=True, exist_ok=True)
    (worktree / ".git").write_text(f"gitdir: {git_dir}\n")


def test_worktree_shares_the_main_repository_memdir(tmp_path: Path) -> None:
    main = tmp_path / "src/main-repo"
    (main / ".git").mkdir(parents=True)
    worktree = tmp_path / "src/feature-x"
    make_worktree(main, worktree)
    wt_env = StartupEnv.in_folder(tmp_path, cwd="src/feature-x")
    main_env = StartupEnv.in_folder(tmp_path, cwd="src/main-repo")
    assert memory_dir_for(wt_env) == memory_dir_for(main_env)
    write(memory_dir_for(main_env) / "MEMORY.md", "- [a](a.md) — shared")
    write(worktree / "CLAUDE.md", "worktree checkout")
    assert [f.type for f in discover_memory_files(wt_env)] == [T.PROJECT, T.AUTO_MEM]


def test_nested_worktree_skips_main_repo_project_files_but_not_local(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    (main / ".git").mkdir(parents=True)
    worktree = main / ".claude/worktrees/wt"
    make_worktree(main, worktree)
    write(main / "CLAUDE.md", "main copy")
    write(main / ".claude/rules/r.md", "main rule copy")
    write(main / "CLAUDE.local.md", "untracked, only in main")
    write(worktree / "CLAUDE.md", "worktree copy")
    env = StartupEnv.in_folder(tmp_path, cwd="repo/.claude/worktrees/wt")
    paths = [str(f.path.relative_to(tmp_path)) for f in discover_memory_files(env)]
    assert paths == ["repo/CLAUDE.local.md", "repo/.claude/worktrees/wt/CLAUDE.md"]


def test_rules_are_recursive_md_only_in_byte_order(env: StartupEnv) -> None:
    rules = env.cwd / ".claude/rules"
    write(rules / "b.md", "b")
    write(rules / "B.md", "upper B sorts first in byte order")
    write(rules / "nested/deep/c.md", "c")
    write(rules / "notes.txt", "not markdown")
    write(rules / "d.MD", "suffix is case-sensitive")
    names = [str(f.path.relative_to(rules)) for f in discover_memory_files(env)]
    assert names == ["B.md", "b.md", "nested/deep/c.md"]


def test_rules_symlink_cycle_terminates_and_loads_each_rule_once(env: StartupEnv) -> None:
    rules = env.cwd / ".claude/rules"
    write(rules / "a/x.md", "x")
    os.symlink(rules, rules / "a/loop")
    os.symlink(rules / "a", rules / "back-to-a")
    files = discover_memory_files(env)
    assert [f.content for f in files] == ["x"]


def test_symlinked_rules_folder_is_followed(env: StartupEnv, tmp_path: Path) -> None:
    shared = tmp_path / "shared-rules"
    write(shared / "style.md", "shared style")
    (env.cwd / ".claude/rules").mkdir(parents=True)
    os.symlink(shared, env.cwd / ".claude/rules/shared")
    files = discover_memory_files(env)
    assert [(f.path, f.content) for f in files] == [(shared / "style.md", "shared style")]


def test_conditional_rules_are_set_aside_with_their_globs(env: StartupEnv) -> None:
    rules = env.cwd / ".claude/rules"
    write(rules / "always.md", "---\ndescription: x\n---\nalways")
    write(rules / "api.md", '---\npaths: "src/api/**, *.{ts,tsx}"\n---\napi rules')
    write(rules / "list.md", "---\npaths:\n  - docs/**\n  - '**/*.sql'\n---\nlisted")
    write(rules / "everything.md", "---\npaths: '**'\n---\nmatch-all is unconditional")
    found = discover(env)
    assert [f.content for f in found.files] == ["always", "match-all is unconditional"]
    globs = {f.path.name: f.globs for f in found.conditional}
    assert globs == {"api.md": ("src/api", "*.ts", "*.tsx"), "list.md": ("docs", "**/*.sql")}


def test_includes_of_a_conditional_rule_load_unconditionally(env: StartupEnv) -> None:
    # The system filters rule files by their own globs only; what a conditional rule
    # includes has no globs and so joins the startup context (faithful).
    write(env.cwd / ".claude/rules/api.md", "---\npaths: src/**\n---\napi @./shared.md")
    write(env.cwd / ".claude/rules/shared.md.txt", "not a rule by name")
    write(env.cwd / ".claude/rules/shared.md", "SHARED")
    found = discover(env)
    assert [f.content for f in found.conditional] == ["api @./shared.md"]
    assert [(f.content, f.parent.name if f.parent else None) for f in found.files] == [
        ("SHARED", "api.md")
    ]


def test_claude_md_with_paths_frontmatter_still_loads(env: StartupEnv) -> None:
    # Only rules files are conditional; a CLAUDE.md's `paths:` is ignored.
    write(env.cwd / "CLAUDE.md", "---\npaths: src/**\n---\nbody")
    files = discover_memory_files(env)
    assert [(f.content, f.globs) for f in files] == [("body", ("src",))]


def test_symlink_to_loaded_file_is_reloaded_by_the_faithful_quirk(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "once")
    (env.cwd / ".claude").mkdir()
    os.symlink(env.cwd / "CLAUDE.md", env.cwd / ".claude/CLAUDE.md")
    assert [f.content for f in discover_memory_files(env)] == ["once", "once"]
    hardened = replace(env, quirk_symlink_reload=False)
    assert [f.content for f in discover_memory_files(hardened)] == ["once"]


def test_symlink_met_before_its_target_marks_the_target(env: StartupEnv) -> None:
    target = write(env.cwd / ".claude/CLAUDE.md", "target")
    os.symlink(target, env.cwd / "CLAUDE.md")
    assert [f.content for f in discover_memory_files(env)] == ["target"]


def test_additional_dirs_need_the_env_flag_and_have_no_local_file(
    env: StartupEnv, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    write(extra / "CLAUDE.md", "extra")
    write(extra / ".claude/CLAUDE.md", "extra dot")
    write(extra / ".claude/rules/r.md", "extra rule")
    write(extra / "CLAUDE.local.md", "never loaded")
    off = replace(env, additional_dirs=(extra,))
    assert discover_memory_files(off) == []
    on = replace(off, additional_dirs_claude_md=True)
    assert [(f.content, f.type) for f in discover_memory_files(on)] == [
        ("extra", T.PROJECT),
        ("extra dot", T.PROJECT),
        ("extra rule", T.PROJECT),
    ]


def test_auto_and_team_memory_flags(env: StartupEnv) -> None:
    memdir = memory_dir_for(env)
    write(memdir / "MEMORY.md", "- [a](a.md) — a")
    write(memdir / "team/MEMORY.md", "- [b](b.md) — b")
    write(memdir / "a.md", "---\ndescription: topic\n---\nnever loaded at startup")
    assert [f.type for f in discover_memory_files(env)] == [T.AUTO_MEM]
    team = replace(env, team_memory_enabled=True)
    assert [f.type for f in discover_memory_files(team)] == [T.AUTO_MEM, T.TEAM_MEM]
    off = replace(team, auto_memory_enabled=False)
    assert discover_memory_files(off) == []


def test_memory_dir_override(env: StartupEnv, tmp_path: Path) -> None:
    memdir = tmp_path / "materialized"
    write(memdir / "MEMORY.md", "- [a](a.md) — a")
    overridden = replace(env, memory_dir=memdir)
    assert [f.path for f in discover_memory_files(overridden)] == [memdir / "MEMORY.md"]


def test_empty_and_whitespace_instruction_files_are_dropped(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "  \n\t\n")
    write(env.cwd / "CLAUDE.local.md", "---\ntitle: only frontmatter\n---\n")
    assert discover_memory_files(env) == []


@pytest.mark.parametrize("raw", ["", "\n\n   \n", "\ufeff \u3000\n"])
def test_an_empty_or_whitespace_index_is_listed_with_empty_content(
    env: StartupEnv, raw: str
) -> None:
    # The system reads the index without the emptiness check instruction files get.
    write(memory_dir_for(env) / "MEMORY.md", raw)
    context = startup_context_for(env, today=dt.date(2026, 11, 30))
    [index] = context.files
    assert index.type == T.AUTO_MEM and index.content == ""
    assert context.in_context == () and "claudeMd" not in context.text


def test_unreadable_entries_are_skipped(env: StartupEnv) -> None:
    (env.cwd / "CLAUDE.md").mkdir()  # a folder named like the file
    os.mkfifo(env.cwd / "CLAUDE.local.md")  # would block a naive read
    write(env.cwd / ".claude/CLAUDE.md", "still loads")
    assert [f.content for f in discover_memory_files(env)] == ["still loads"]


def test_nothing_outside_the_env_roots_is_needed(tmp_path: Path) -> None:
    env = StartupEnv.in_folder(tmp_path, cwd="empty")
    env.cwd.mkdir()
    assert discover_memory_files(env) == []


def test_from_os_reads_the_process_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_REMOTE_MEMORY_DIR", str(tmp_path / "remote"))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    monkeypatch.setenv("CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD", "true")
    env = StartupEnv.from_os(cwd=tmp_path)
    assert env.config_home == tmp_path / "home/.claude"
    assert env.memory_base == tmp_path / "remote"
    assert not env.auto_memory_enabled and env.additional_dirs_claude_md
    assert env.managed_dir == Path("/etc/claude-code")
