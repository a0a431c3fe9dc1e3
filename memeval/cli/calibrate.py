"""`memeval calibrate RUN`: the gate margin a baseline's own noise supports, per selector."""

from __future__ import annotations

import math
from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError
from memeval.scoring.catalog import GATED, TESTABLE

EXAMPLES = """
\b
Examples:
  memeval run -s 'claude?prompt=v1' --repeats 5 --out reports/baseline
  memeval calibrate reports/baseline          # writes reports/baseline/calibration.json
  memeval gate reports/pr --baseline reports/baseline   # uses the calibrated margins
"""


def _turns(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{int(value)}"


@click.command("calibrate", epilog=EXAMPLES)
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--metric", "metrics", multiple=True, type=click.Choice(TESTABLE),
              default=GATED, show_default=True,
              help="A gated metric to calibrate (repeatable); the gate's defaults unless given.")
def command(run: Path, metrics: tuple[str, ...]) -> None:
    """Measure a baseline run's run-to-run noise and write, per selector × judge × metric,
    the margin that keeps an A/A gate (the same selector against itself) failing at most
    5 % of the time — never below what the suite resolves.

    RUN must have been run with --repeats 2 or more. `memeval gate --baseline RUN`
    then uses these margins unless --margin is given. For F1 it also prints the power
    to catch a loss of 10 % and 20 % of correct picks, and the turns 80 % would take.
    """
    from memeval.scoring.calibrate import CALIBRATION_FILE, calibrate_run

    try:
        results = calibrate_run(run, metrics=metrics)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    for c in results:
        click.echo(f"{c.selector} × {c.judge}: {c.metric} margin {c.margin:.3f} "
                   f"(A/A of {c.repeats} repeats {c.aa_margin:.3f}, suite resolution "
                   f"{c.resolvable_margin:.3f}; {c.turns} turns, {c.clusters} scenarios)")
        for p in c.power:
            click.echo(f"  power to catch a {p.loss:.0%} loss of correct picks: {p.power:.0%}"
                       f"; 80 % takes about {_turns(p.turns_for_80)} turns that need memory")
    if run.is_dir():
        click.echo(f"wrote {run / CALIBRATION_FILE}")
