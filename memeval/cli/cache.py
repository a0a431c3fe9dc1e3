"""`memeval cache`: look into and trim the response cache that makes reruns free."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memeval.cli._errors import InputError

if TYPE_CHECKING:
    from memeval.llm import ResponseCache

DAY_S = 86_400.0


def _open(path: Path | None) -> ResponseCache:
    """The cache at `path`, else `$MEMEVAL_LLM_CACHE`, else the default one."""
    from memeval.llm import ResponseCache
    from memeval.llm.config import configured_cache_path, default_cache_path
    from memeval.llm.errors import LLMError

    chosen = path or configured_cache_path() or default_cache_path()
    if not chosen.exists():
        raise InputError(f"{chosen}: no response cache there yet (a run with a model "
                         "creates it); pass --cache PATH for another one")
    try:
        return ResponseCache(chosen)
    except LLMError as exc:
        raise InputError(str(exc)) from None


def _when(epoch: float | None) -> str:
    return "—" if epoch is None else datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d")


CACHE_OPTION = click.option("--cache", "path", type=click.Path(path_type=Path), default=None,
                            help="The cache file (default: $MEMEVAL_LLM_CACHE, else "
                                 "~/.cache/memeval/llm.sqlite).")


@click.group("cache")
def command() -> None:
    """Inspect or trim the model-answer cache (answers are keyed by request and server).

    \b
    Examples:
      memeval cache stats
      memeval cache prune --older-than 30
      memeval cache prune --model claude-sonnet-4-5
    """


@command.command("stats")
@CACHE_OPTION
def stats(path: Path | None) -> None:
    """Answers stored per model, their size and age."""
    cache = _open(path)
    rows = cache.stats()
    click.echo(f"{cache.path}: {sum(r['answers'] for r in rows)} answers, "
               f"{cache.path.stat().st_size / 1e6:.1f} MB on disk")
    for r in rows:
        click.echo(f"  {r['model']:<40} {r['answers']:>7} answers {r['bytes'] / 1e6:>8.2f} MB"
                   f"  {_when(r['oldest'])} … {_when(r['newest'])}")


@command.command("prune")
@CACHE_OPTION
@click.option("--older-than", type=click.FloatRange(min=0), default=None, metavar="DAYS",
              help="Delete answers stored more than DAYS ago.")
@click.option("--model", default=None, metavar="PREFIX",
              help="Delete answers of models whose id starts with PREFIX.")
def prune(path: Path | None, older_than: float | None, model: str | None) -> None:
    """Delete cached answers (they are fetched, and paid for, again when next needed)."""
    if older_than is None and model is None:
        raise InputError("prune what? give --older-than DAYS and/or --model PREFIX")
    cache = _open(path)
    gone = cache.prune(older_than_s=None if older_than is None else older_than * DAY_S,
                       model=model)
    click.echo(f"{cache.path}: {gone} answers deleted, {len(cache)} kept")

