"""`memeval lint MEMDIR`: check a memory directory's MEMORY.md index and its memories."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.startup.lint import CODES, MAX_ENTRY_CHARS, lint_paths


@click.command(name="lint")
@click.argument(
    "memdirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=Path),
)
@click.option(
    "--max-entry-chars",
    type=click.IntRange(min=1),
    default=MAX_ENTRY_CHARS,
    show_default=True,
    help="Longest acceptable index line (UTF-16 units, as the system counts).",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    type=click.Choice(sorted(CODES)),
    help="Skip a problem code (repeatable): " + "; ".join(f"{k}: {v}" for k, v in CODES.items()),
)
def command(memdirs: tuple[Path, ...], max_entry_chars: int, ignore: tuple[str, ...]) -> None:
    """Check the index (every line links to an existing memory file and stays short)
    and the memories (each is linked from the index and has readable frontmatter
    with a description).

    Prints one `path:line: code: problem` line per problem and exits 1 if any;
    also flags an index over the startup limits (200 lines, 25 000 units), which the
    model would only see in part.

    \b
    Examples:
      memeval lint ~/.claude/projects/-home-me-webshop/memory
      memeval lint fixtures/memdirs/* --max-entry-chars 150 --ignore over-limits
    """
    problems = lint_paths(list(memdirs), max_entry_chars=max_entry_chars, ignore=frozenset(ignore))
    for problem in problems:
        click.echo(str(problem))
    if problems:
        raise SystemExit(1)
    click.echo(f"{len(memdirs)} memdir(s) checked, no problems", err=True)
