"""`memeval run`: the main job."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval run                                  # bundled fixtures; bm25, recency, oracle
  memeval run -s bm25 -s none --out reports/try1
  memeval run --scenarios 'my/scenarios/*.yaml' --repeats 3 --shuffle-manifest
  ANTHROPIC_API_KEY=... memeval run -s claude -s 'claude:claude-sonnet-4-6?prompt=recall'
"""


def update_latest_link(run_dir: Path) -> None:
    """Point `<reports>/latest` at the newest run (a symlink; replaced atomically)."""
    link = run_dir.parent / "latest"
    tmp = run_dir.parent / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name, target_is_directory=True)
    os.replace(tmp, link)


@click.command("run", epilog=EXAMPLES)
@click.option("--scenarios", "scenarios", multiple=True, metavar="PATH|GLOB",
              help="Scenario YAML files, folders or globs. Default: the bundled fixtures.")
@click.option("-s", "--selector", "selectors", multiple=True, metavar="SPEC",
              help="A selector spec, repeatable (bm25, recency?k=3, oracle, claude, ...). "
                   "Default: bm25, recency, oracle.")
@click.option("-j", "--judge", "judges", multiple=True, metavar="SPEC",
              help="A judge spec, repeatable (gold, claude). Default: gold.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run folder. Default: reports/<UTC timestamp>/ (and reports/latest).")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sessions per scenario × selector (exposes unstable selectors).")
@click.option("--shuffle-manifest", is_flag=True,
              help="Shuffle each manifest per repeat, so order bias shows up as flips.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Sessions evaluated at once.")
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed for shuffles.")
@click.option("--compat", type=click.Choice(["faithful", "hardened"]), default="faithful",
              show_default=True,
              help="faithful reproduces Claude Code's quirks; hardened holds every invariant.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Stop issuing model calls once the run's spend would pass this.")
@click.option("--cache", "cache", type=click.Path(dir_okay=False), default=None,
              help="Model response cache (SQLite). Default: ~/.cache/memeval/llm.sqlite.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--record-cassette", type=click.Path(dir_okay=False), default=None,
              help="Record every model exchange into this cassette (safe to commit).")
@click.option("--replay-cassette", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Answer model calls from this cassette only; no network, no key.")
@click.option("--batches", is_flag=True, default=None,
              help="Send model calls through the Message Batches API (half price).")
@click.option("--prices", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A price table overriding the bundled one (see docs/llm.md).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def command(scenarios: tuple[str, ...], selectors: tuple[str, ...], judges: tuple[str, ...],
            out: Path | None, repeats: int, shuffle_manifest: bool, concurrency: int,
            seed: int, compat: str, max_cost: float | None, cache: str | None, no_cache: bool,
            record_cassette: str | None, replay_cassette: str | None, batches: bool | None,
            prices: str | None, quiet: bool) -> None:
    """Evaluate selectors on scenarios and write a run folder.

    The folder holds results.jsonl (one row per turn × selector × judge), summary.json,
    config.json and index.html. Rerunning the same command with the same --out resumes
    an interrupted run.
    """
    from memeval.evaluate import (
        LLMOptions,
        RunConfig,
        default_scenarios,
        evaluate,
        timestamped_run_dir,
    )
    from memeval.results import RunFolderBusy

    if cache and no_cache:
        raise click.UsageError("--cache and --no-cache contradict each other; pick one")
    llm = LLMOptions(cache=False if no_cache else cache, record=record_cassette,
                     replay=replay_cassette, max_cost=max_cost, batches=batches, prices=prices)

    config = RunConfig(
        scenarios=scenarios or default_scenarios(),
        **({"selectors": selectors} if selectors else {}),
        **({"judges": judges} if judges else {}),
        repeats=repeats, shuffle_manifest=shuffle_manifest, concurrency=concurrency,
        seed=seed, compat=compat, llm=llm,  # type: ignore[arg-type]
    )
    run_dir = out or timestamped_run_dir(Path("reports"))
    try:
        outcome = evaluate(config, run_dir, progress=not quiet)
    except RunFolderBusy as exc:  # not a mistake in the command: another run holds the folder
        raise click.ClickException(str(exc)) from None
    except MemevalError as exc:  # a bad spec, scenario path, --out or setting: exit code 2
        raise click.UsageError(str(exc)) from None
    if out is None:
        update_latest_link(run_dir)
    for problem in outcome.scenario_errors:
        click.echo(f"skipped: {problem}", err=True)
    click.echo(f"{outcome.rows} rows in {run_dir} "
               f"({outcome.units_run} sessions run, {outcome.units_resumed} resumed)")
    table = outcome.summary.get("table")
    if table:
        click.echo(table)
    click.echo(f"report: {run_dir / 'index.html'}")
    if outcome.unit_errors:
        for problem in outcome.unit_errors:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(1)
