"""The per-file pipeline (SPEC §4.2): frontmatter, HTML comments, `@include`s."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from _files import write

from memeval.startup import (
    MAX_INCLUDE_DEPTH,
    MemoryFileType,
    StartupEnv,
    discover_memory_files,
    memory_dir_for,
)
from memeval.startup.markdown import strip_html_comments


@pytest.fixture
def env(tmp_path: Path) -> StartupEnv:
    env = StartupEnv.in_folder(tmp_path, cwd="proj")
    env.cwd.mkdir(parents=True)
    return env


def contents(env: StartupEnv) -> list[str]:
    return [f.content for f in discover_memory_files(env)]


# --- frontmatter -------------------------------------------------------------------


def test_frontmatter_is_stripped_and_flagged_as_differing(env: StartupEnv) -> None:
    raw = "---\nname: x\ndescription: y\n---\nBody text\n"
    write(env.cwd / "CLAUDE.md", raw)
    [file] = discover_memory_files(env)
    assert file.content == "Body text\n"
    assert file.content_differs_from_disk and file.raw_content == raw


def test_unchanged_file_does_not_differ(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "plain\n")
    [file] = discover_memory_files(env)
    assert not file.content_differs_from_disk and file.raw_content is None


def test_frontmatter_block_ends_at_the_first_dashes_anywhere(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "---\ndescription: a---b\nrest: 1\n---\nbody")
    assert contents(env) == ["b\nrest: 1\n---\nbody"]


def test_frontmatter_not_at_the_very_start_is_content(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "\n---\nk: v\n---\nbody")
    assert contents(env) == ["\n---\nk: v\n---\nbody"]


def test_index_frontmatter_is_stripped_too(env: StartupEnv) -> None:
    write(memory_dir_for(env) / "MEMORY.md", "---\nname: index\n---\n- [a](a.md) — hook\n")
    assert contents(env) == ["- [a](a.md) — hook"]


# --- HTML comments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("A\n\n<!-- hidden -->\n\nB\n", "A\n\nB\n"),
        ("A\n\n<!--\nmulti\nline\n-->\nB\n", "A\n\nB\n"),
        ("<!-- note --> Use bun\n", " Use bun\n"),
        ("<!-- a --><!-- b -->\nx\n", "x\n"),
        ("Text with <!-- inline --> comment\n", "Text with <!-- inline --> comment\n"),
        ("A\n\n<!-- never closed\n\nB\n", "A\n\n<!-- never closed\n\nB\n"),
        ("- item\n\n  <!-- in a list -->\n", "- item\n\n  <!-- in a list -->\n"),
        ("```\n<!-- in code -->\n```\n", "```\n<!-- in code -->\n```\n"),
        ("   <!-- indented three -->\nx\n", "x\n"),
        ("    <!-- indented four is code -->\n", "    <!-- indented four is code -->\n"),
        ("A\r\n\r\n<!-- c -->\r\nB\r\n", "A\n\nB\n"),
    ],
    ids=[
        "block",
        "multiline",
        "residue-kept",
        "two-on-a-line",
        "inline-kept",
        "unclosed-kept",
        "nested-in-list-kept",
        "in-fence-kept",
        "indent-3",
        "indent-4-is-code",
        "crlf",
    ],
)
def test_block_html_comments(source: str, expected: str) -> None:
    from memeval.startup.markdown import normalize_newlines

    assert strip_html_comments(normalize_newlines(source)) == expected


def test_comment_stripping_in_a_loaded_file(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "Keep\n\n<!-- TODO: private note -->\n\nAlso keep <!-- x -->\n")
    [file] = discover_memory_files(env)
    assert file.content == "Keep\n\nAlso keep <!-- x -->\n"
    assert file.content_differs_from_disk


def test_index_comments_are_stripped(env: StartupEnv) -> None:
    write(memory_dir_for(env) / "MEMORY.md", "<!-- maintained by hand -->\n- [a](a.md) — h\n")
    assert contents(env) == ["- [a](a.md) — h"]


# --- includes ----------------------------------------------------------------------


def test_includer_comes_before_its_includes_and_they_inherit_the_type(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.local.md", "local @./a.md and @b.md")
    write(env.cwd / "a.md", "A @./c.md")
    write(env.cwd / "b.md", "B")
    write(env.cwd / "c.md", "C")
    files = discover_memory_files(env)
    assert [f.path.name for f in files] == ["CLAUDE.local.md", "a.md", "c.md", "b.md"]
    assert {f.type for f in files} == {MemoryFileType.LOCAL}
    assert [f.parent.name if f.parent else None for f in files] == [
        None,
        "CLAUDE.local.md",
        "a.md",
        "CLAUDE.local.md",
    ]


def test_include_cycle_terminates_with_each_file_once(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "root @a.md")
    write(env.cwd / "a.md", "a @b.md")
    write(env.cwd / "b.md", "b @a.md @CLAUDE.md")
    assert contents(env) == ["root @a.md", "a @b.md", "b @a.md @CLAUDE.md"]


def test_include_chain_of_depth_6_stops_after_4_nested_levels(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "level 0 @l1.md")
    for level in range(1, 6):
        write(env.cwd / f"l{level}.md", f"level {level} @l{level + 1}.md")
    loaded = [f.path.name for f in discover_memory_files(env)]
    assert MAX_INCLUDE_DEPTH == 5
    assert loaded == ["CLAUDE.md", "l1.md", "l2.md", "l3.md", "l4.md"]


def test_too_deep_file_can_still_load_on_its_own_later(env: StartupEnv) -> None:
    # Depth-rejected files are not marked processed, so discovery may reach them again.
    write(env.cwd / "CLAUDE.md", "@l1.md")
    for level in range(1, 5):
        write(env.cwd / f"l{level}.md", f"@l{level + 1}.md")
    write(env.cwd / "l5.md", "deep")
    write(env.cwd / "CLAUDE.local.md", "@l5.md")
    names = [f.path.name for f in discover_memory_files(env)]
    assert names.count("l5.md") == 1 and names[-1] == "l5.md"


@pytest.mark.parametrize(
    "body",
    [
        "```\n@secret.md\n```\n",
        "~~~md\n@secret.md\n~~~\n",
        "    @secret.md\n",
        "Run `@secret.md` in a span\n",
        "<div>\n@secret.md\n</div>\n",
        "<!-- @secret.md -->\n",
        "email me@secret.md\n",
        "[link](@secret.md)\n",
        "@@secret.md\n",
    ],
    ids=[
        "fence",
        "tilde-fence",
        "indented-code",
        "code-span",
        "html-block",
        "in-comment",
        "not-after-space",
        "link-href",
        "double-at",
    ],
)
def test_include_not_expanded(env: StartupEnv, body: str) -> None:
    write(env.cwd / "CLAUDE.md", body)
    write(env.cwd / "secret.md", "SECRET")
    assert "SECRET" not in contents(env)


@pytest.mark.parametrize(
    "body",
    [
        "@target.md",
        "See @./target.md please",
        "@target.md#some-heading",
        "# Heading @target.md",
        "- list item @target.md",
        "> quoted @target.md",
        "*emphasis @target.md*",
        "[see @target.md](http://x)",
        "<!-- note --> @target.md",
        "text\n@target.md",
    ],
)
def test_include_expanded(env: StartupEnv, body: str) -> None:
    write(env.cwd / "CLAUDE.md", body)
    write(env.cwd / "target.md", "TARGET")
    assert contents(env)[1:] == ["TARGET"]


def test_a_markdown_escape_ends_the_include_path_like_marked(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "@my\\_notes.md")
    write(env.cwd / "my_notes.md", "NOTES")
    write(env.cwd / "my", "PREFIX")
    assert contents(env) == ["@my\\_notes.md", "PREFIX"]


def test_include_in_code_span_inside_a_list_item_is_expanded_like_marked(
    env: StartupEnv,
) -> None:
    # marked scans a list item's raw text, code spans included: a faithful quirk.
    write(env.cwd / "CLAUDE.md", "- run `cat @target.md now`\n")
    write(env.cwd / "target.md", "TARGET")
    assert contents(env)[1:] == ["TARGET"]


def test_escaped_spaces_home_and_absolute_includes(env: StartupEnv, tmp_path: Path) -> None:
    write(env.cwd / "my notes.md", "SPACED")
    write(env.home / "personal.md", "HOME")
    absolute = write(env.cwd / "abs.md", "ABS")
    write(env.config_home / "CLAUDE.md", f"@~/personal.md @{absolute}")
    write(env.cwd / "CLAUDE.md", r"@my\ notes.md")
    assert contents(env) == [
        f"@~/personal.md @{absolute}",
        "HOME",
        "ABS",
        r"@my\ notes.md",
        "SPACED",
    ]


def test_includes_resolve_relative_to_the_including_file(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "@docs/guide.md")
    write(env.cwd / "docs/guide.md", "guide @./part.md")
    write(env.cwd / "docs/part.md", "PART")
    write(env.cwd / "part.md", "WRONG")
    assert contents(env) == ["@docs/guide.md", "guide @./part.md", "PART"]


def test_missing_and_non_text_targets_are_ignored(env: StartupEnv) -> None:
    write(env.cwd / "CLAUDE.md", "@missing.md @logo.png @Makefile")
    (env.cwd / "logo.png").write_bytes(b"\x89PNG\r\n")
    write(env.cwd / "Makefile", "all:\n\ttrue")
    assert contents(env) == ["@missing.md @logo.png @Makefile", "all:\n\ttrue"]


def test_external_includes_need_approval_except_for_user_files(
    env: StartupEnv, tmp_path: Path
) -> None:
    outside = write(tmp_path / "outside/shared.md", "OUTSIDE")
    write(env.cwd / "CLAUDE.md", f"@{outside}")
    assert contents(env) == [f"@{outside}"]
    approved = replace(env, external_includes_approved=True)
    assert contents(approved) == [f"@{outside}", "OUTSIDE"]
    write(env.config_home / "CLAUDE.md", f"@{outside}")
    (env.cwd / "CLAUDE.md").unlink()
    assert contents(env) == [f"@{outside}", "OUTSIDE"]


def test_parent_folder_include_counts_as_external(tmp_path: Path) -> None:
    # "External" means outside the cwd, so a repo-root file including its own docs
    # from a subfolder session is held back until approved (faithful).
    env = StartupEnv.in_folder(tmp_path, cwd="repo/sub")
    env.cwd.mkdir(parents=True)
    write(tmp_path / "repo/CLAUDE.md", "@docs/x.md")
    write(tmp_path / "repo/docs/x.md", "DOCS")
    assert contents(env) == ["@docs/x.md"]


def test_index_gets_no_include_processing(env: StartupEnv) -> None:
    memdir = memory_dir_for(env)
    write(memdir / "MEMORY.md", "- [a](a.md) — see @a.md")
    write(memdir / "a.md", "TOPIC")
    external_ok = replace(env, external_includes_approved=True)
    assert contents(external_ok) == ["- [a](a.md) — see @a.md"]


def test_symlinked_file_includes_relative_to_its_target(env: StartupEnv, tmp_path: Path) -> None:
    real = write(env.cwd / "shared/CLAUDE.md", "@./near.md")
    write(env.cwd / "shared/near.md", "NEAR")
    write(env.cwd / "near.md", "WRONG")
    (env.cwd / "CLAUDE.md").symlink_to(real)
    assert contents(env) == ["@./near.md", "NEAR"]
