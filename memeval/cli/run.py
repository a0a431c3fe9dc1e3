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
@click.option("--quiet", is_flag=True, help="No progress bar.")
def command(scenarios: tuple[str, ...], selectors: tuple[str, ...], judges: tuple[str, ...],
            out: Path | None, repeats: int, shuffle_manifest: bool, concurrency: int,
            seed: int, compat: str, quiet: bool) -> None:
    """Evaluate selectors on scenarios and write a run folder.

    The folder holds results.jsonl (one row per turn × selector × judge), summary.json,
    config.json and index.html. Rerunning the same command with the same --out resumes
    an interrupted run.
    """
    from memeval.evaluate import RunConfig, default_scenarios, evaluate, timestamped_run_dir

    config = RunConfig(
        scenarios=scenarios or default_scenarios(),
        **({"selectors": selectors} if selectors else {}),
        **({"judges": judges} if judges else {}),
        repeats=repeats, shuffle_manifest=shuffle_manifest, concurrency=concurrency,
        seed=seed, compat=compat,  # type: ignore[arg-type]
    )
    run_dir = out or timestamped_run_dir(Path("reports"))
    try:
        outcome = evaluate(config, run_dir, progress=not quiet)
    except MemevalError as exc:
        raise click.ClickException(str(exc)) from None
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
