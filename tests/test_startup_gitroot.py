"""Git-root searches bounded by a ceiling: a materialized session never reads a `.git`
above its own tree, nor a git dir a `.git` file inside it points out to."""

from __future__ import annotations

from pathlib import Path

from memeval.startup import find_canonical_git_root, find_git_root


def test_without_a_ceiling_the_search_climbs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "box" / "repo"
    inner.mkdir(parents=True)
    assert find_git_root(inner) == tmp_path
    assert find_canonical_git_root(inner) == tmp_path


def test_a_repository_above_the_ceiling_is_not_found(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "box" / "repo"
    inner.mkdir(parents=True)
    assert find_git_root(inner, tmp_path / "box") is None
    assert find_canonical_git_root(inner, tmp_path / "box") is None


def test_the_ceiling_itself_is_searched(tmp_path: Path) -> None:
    box = tmp_path / "box"
    (box / ".git").mkdir(parents=True)
    (box / "repo").mkdir()
    assert find_git_root(box / "repo", box) == box
    assert find_canonical_git_root(box / "repo", box) == box


def test_a_start_outside_the_ceiling_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "box").mkdir()
    assert find_git_root(tmp_path, tmp_path / "box") is None


def test_a_worktree_file_pointing_out_of_the_ceiling_is_its_own_root(tmp_path: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    (main_git / "worktrees" / "wt").mkdir(parents=True)
    (main_git / "worktrees" / "wt" / "commondir").write_text("../..\n")
    box = tmp_path / "box"
    worktree = box / "wt"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'wt'}\n")
    assert find_canonical_git_root(worktree) == tmp_path / "main"  # unbounded: followed
    assert find_canonical_git_root(worktree, box) == worktree


def test_a_worktree_inside_the_ceiling_still_maps_to_its_main_repository(
        tmp_path: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    (main_git / "worktrees" / "wt").mkdir(parents=True)
    (main_git / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'wt'}\n")
    assert find_canonical_git_root(worktree, tmp_path) == tmp_path / "main"
