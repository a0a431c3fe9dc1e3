"""`memeval audit RUN…`: turns where the selectors agree against the gold labels."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval run -s bm25 -s embedding -s claude -j gold -j claude --out reports/audit
  memeval audit reports/audit
"""


@click.command("audit", epilog=EXAMPLES)
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--min-pickers", type=click.IntRange(min=1), default=2, show_default=True,
              help="At least this many selectors must agree (all that ran the turn).")
def command(runs: tuple[Path, ...], min_pickers: int) -> None:
    """List candidate label errors: a memory gold calls irrelevant that every
    non-oracle selector picked and no model judge rejects, with a YAML patch to
    review. Run several strong selectors (and a model judge) first."""
    from memeval.scoring.audit import audit_runs

    try:
        findings = audit_runs(runs, min_pickers=min_pickers)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    for finding in findings:
        click.echo(finding.patch() + "\n")
    click.echo(f"{len(findings)} candidate label error(s)")
