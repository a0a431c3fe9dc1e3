"""`memeval calibrate RUN`: the gate margin a baseline's own noise supports."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval run -s 'claude?prompt=v1' --repeats 5 --out reports/baseline
  memeval calibrate reports/baseline          # writes reports/baseline/calibration.json
  memeval gate reports/pr --baseline reports/baseline   # uses the calibrated margin
"""


@click.command("calibrate", epilog=EXAMPLES)
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--metric", default="f1", show_default=True,
              type=click.Choice(["f1", "precision", "recall", "exact_match"]),
              help="The metric the gate tests.")
def command(run: Path, metric: str) -> None:
    """Measure a baseline run's run-to-run noise and write the margin that keeps an A/A
    gate (the same selector against itself) failing at most 5 % of the time.

    RUN must have been run with --repeats 2 or more. `memeval gate --baseline RUN`
    then uses this margin unless --margin is given.
    """
    from memeval.scoring.calibrate import calibrate_run

    try:
        results = calibrate_run(run, metric=metric)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    for c in results:
        click.echo(f"{c.selector} × {c.judge}: {metric} margin {c.margin:.3f} "
                   f"({c.repeats} repeats, {c.trials} A/A trials, {c.turns} turns); "
                   f"a margin of 0.03 needs about {c.turns_needed(0.03)} turns, "
                   f"0.01 about {c.turns_needed(0.01)}")
    click.echo(f"wrote {run / 'calibration.json'}" if run.is_dir() else "")
