"""`memeval report RUN`: re-render a run folder's index.html from its results."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval report reports/latest
  memeval report /tmp/run1 && xdg-open /tmp/run1/index.html
"""


@click.command("report", epilog=EXAMPLES)
@click.argument("run", type=click.Path(file_okay=False, path_type=Path))
def command(run: Path) -> None:
    """Rebuild RUN/summary.json from RUN/results.jsonl, then RUN/index.html (plus
    config.json and invariants.json when present). The page is one offline file:
    open it in a browser."""
    if not run.is_dir():
        raise click.BadParameter(f"{run} is not a folder; pass a run folder written by "
                                 "`memeval run --out DIR`", param_hint="RUN")
    from memeval.log import REPORT_FILE
    from memeval.report import RunPage
    from memeval.run.evaluate import rebuild_run

    try:
        rebuild_run(run, RunPage())
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    click.echo(f"report: {run / REPORT_FILE}")
