"""`memeval merge OUT RUN…`: join the shares of a sharded run into one run folder."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval run --shard 1/3 --out runs/s1   # on three machines, or a CI matrix
  memeval run --shard 2/3 --out runs/s2
  memeval run --shard 3/3 --out runs/s3
  memeval merge runs/all runs/s1 runs/s2 runs/s3
"""


@click.command("merge", epilog=EXAMPLES)
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(file_okay=False, exists=True, path_type=Path))
def command(out: Path, runs: tuple[Path, ...]) -> None:
    """Join RUNS (the shares of one `memeval run --shard K/N` command) into OUT.

    Checks that the shares ran the same configuration, are finished, cover every share
    once and hold disjoint sessions; then writes results, summary and report as if
    one machine had run it all.
    """
    from memeval.log import INCOMPLETE_MARKER
    from memeval.report import RunPage
    from memeval.run.evaluate import finish_run
    from memeval.run.shards import merge_runs

    try:
        rows = merge_runs(out, runs)
        finish_run(out, page=RunPage())
        # Summary and report are written: the merged folder is a finished run (and can
        # itself be merged or gated like one).
        (out / INCOMPLETE_MARKER).unlink(missing_ok=True)
    except MemevalError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{rows} rows from {len(runs)} shares in {out}\nreport: {out / 'index.html'}")
