"""`memeval gate`: the pytest plugin's regression gate, on a finished run folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError
from memeval.log import write_json
from memeval.provenance import NotComparable
from memeval.scoring.catalog import GATED, TESTABLE
from memeval.scoring.gate import DEFAULT_MAX_ERROR_RATE, GATE_FILE, gate_run

EXIT_PASS = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2  # click's own code for usage errors, kept for bad input files too


def _unit_interval(_ctx: click.Context, param: click.Parameter,
                   value: float | None) -> float | None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise click.BadParameter(f"{value} is not between 0 and 1", param=param)
    return value


@click.command("gate")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--baseline", type=click.Path(path_type=Path), default=None,
              help="summary.json (or run folder) of the reference run, e.g. main's.")
@click.option("--margin", type=float, default=None,
              help="How far the one-sided 95% lower bound of the paired gain over the "
                   "baseline may fall below 0 before it counts as a regression, for every "
                   "gated metric. Default, per selector × judge × metric: the baseline's "
                   "calibrated margin (`memeval calibrate`), else the margin read from the "
                   "baseline's own turn-to-turn spread. The output names the rule used.")
@click.option("--min-precision", type=float, default=None, callback=_unit_interval,
              help="Fail when a selector's mean precision is below this.")
@click.option("--min-recall", type=float, default=None, callback=_unit_interval,
              help="Fail when a selector's mean recall is below this.")
@click.option("--max-error-rate", type=float, default=DEFAULT_MAX_ERROR_RATE,
              show_default=True, callback=_unit_interval,
              help="Fail when a selector or judge errs on more than this share of its turns.")
@click.option("--secondary", multiple=True, type=click.Choice(TESTABLE),
              help=f"Also gate METRIC, on top of {', '.join(GATED)} (always gated); each "
                   "test points the way the metric's direction says. Repeatable.")
@click.option("--pair", "pairs", multiple=True, metavar="BASELINE=CANDIDATE",
              help="Gate this candidate selector against this baseline selector "
                   "(as in `memeval compare --pair`).")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the checks as Markdown (e.g. $GITHUB_STEP_SUMMARY).")
@click.option("--write/--no-write", default=True, show_default=True,
              help=f"Write the checks to RUN/{GATE_FILE} (when RUN is a folder).")
def command(run: Path, baseline: Path | None, margin: float | None,
            min_precision: float | None,
            min_recall: float | None, max_error_rate: float, secondary: tuple[str, ...],
            pairs: tuple[str, ...], markdown: Path | None, write: bool) -> None:
    """Gate a finished run: error rates, thresholds and non-inferiority to a baseline.

    RUN is a run folder (memeval run --out, or the pytest plugin's --memeval-report)
    or its summary.json. Errors are always checked, in RUN and in the baseline
    (--max-error-rate, default 0). Against --baseline, every selector × judge must be
    non-inferior on F1 and on false alarms (lower is better), each a one-sided 95 %
    test with its own margin (see --margin). Exit code 0: every check passed; 1: a
    check failed — an error rate, a threshold, a regression, missing baseline turns,
    too few pairs, or nothing tested at all; 2: usage error (bad option, unreadable
    file).

    \b
    Example:
      memeval gate reports/pr --baseline reports/main/summary.json --min-recall 0.5
    """
    if margin is not None and margin < 0:
        raise click.BadParameter(f"{margin} is negative", param_hint="--margin")
    for name, path in (("RUN", run), ("--baseline", baseline)):
        if path is not None and not path.exists():
            raise click.BadParameter(f"{path} does not exist", param_hint=name)
    from memeval.scoring.compare import parse_pairs

    try:
        result = gate_run(run, baseline, margin=margin, min_precision=min_precision,
                          min_recall=min_recall, max_error_rate=max_error_rate,
                          secondary=secondary,
                          pairs=[(c, b) for b, c in parse_pairs(pairs)])
    except NotComparable as exc:  # one line naming the fix, not the usage text
        raise InputError(str(exc)) from None
    except MemevalError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(result.table())  # ends with the rule behind each margin
    if markdown is not None:
        with markdown.open("a", encoding="utf-8") as handle:
            handle.write(result.markdown())
    if write and run.is_dir():
        write_json(run / GATE_FILE, result.to_dict())
    if result.passed:
        click.echo("gate: PASS")
        sys.exit(EXIT_PASS)
    for check in result.failures:
        click.echo(f"gate: FAIL: {check.message()}", err=True)
    sys.exit(EXIT_REGRESSION)
