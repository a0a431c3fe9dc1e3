"""`memeval compare RUN_A RUN_B [--pair A=B] [--out DIR]`: is run B better than baseline A?"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval compare reports/baseline reports/latest --out reports/compare
  memeval run -s 'claude?prompt=a' --out /tmp/a && memeval run -s 'claude?prompt=b' --out /tmp/b
  memeval compare /tmp/a /tmp/b --out /tmp/a-vs-b
  memeval compare reports/base reports/new --pair bm25=bm25   # one selector of several
"""


def _cell(c: dict[str, Any]) -> str:
    diff, low, high = c.get("mean_diff"), c.get("ci_low"), c.get("ci_high")
    if diff is None:
        return "—"
    if low is None or high is None:
        return f"{diff:+.3f}"
    return f"{diff:+.3f} [{low:+.2f}, {high:+.2f}]"


def _mean(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def summary_table(data: dict[str, Any]) -> str:
    """The terminal view of a compare record: one line per selector pair and metric."""
    from memeval.scoring.catalog import BY_NAME
    from memeval.scoring.compare import COMPARE_METRICS

    header = ["selector", "metric", "A", "B", "B − A [95% CI]", "verdict", "pairs"]
    lines = []
    for pair in data["pairs"]:
        name = pair["selector_a"] if pair["selector_a"] == pair["selector_b"] else \
            f"{pair['selector_a']} → {pair['selector_b']}"
        for metric in COMPARE_METRICS:
            c = pair["overall"][metric]
            verdict = c["significance"] + (" (underpowered)" if c.get("power_warning") else "")
            declared = BY_NAME[metric]
            lines.append([name, f"{declared.label} {declared.arrow}", _mean(c["mean_a"]),
                          _mean(c["mean_b"]), _cell(c), verdict, str(c["n_pairs"])])
            name = ""
        lines.append(["", "turns", "", "", f"{len(pair['won'])} won, {len(pair['lost'])} lost",
                      "", str(pair["paired_turns"])])
    widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*line).rstrip() for line in lines)])


@click.command("compare", epilog=EXAMPLES)
@click.argument("run_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(file_okay=False, path_type=Path))
@click.option("--pair", "pairs", multiple=True, metavar="A_SELECTOR=B_SELECTOR",
              help="Compare this selector of A with this one of B (repeatable). Default: "
                   "same-named selectors, or the only selector of each run.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write compare.html and compare.json into this folder.")
def command(run_a: Path, run_b: Path, pairs: tuple[str, ...], out: Path | None) -> None:
    """Compare run B against baseline run A, turn by turn.

    Prints B − A per metric with paired 95 % intervals (resampling whole scenarios);
    the verdict reads each metric's direction (↑ higher or ↓ lower is better);
    with --out, compare.html adds per-category deltas (Holm-adjusted) and the turns B
    won or lost, with drill-downs. The gate pairs selectors by the same rule.
    """
    for name, run in (("RUN_A", run_a), ("RUN_B", run_b)):
        if not run.is_dir():
            raise click.BadParameter(f"{run} is not a folder; pass a run folder written by "
                                     "`memeval run --out DIR`", param_hint=name)
    from memeval.scoring.compare import compare_runs, parse_pairs

    try:
        chosen = parse_pairs(pairs)
        if out is None:
            data, html = compare_runs(run_a, run_b, pairs=chosen), None
        else:
            from memeval.report import render_compare

            html, data = render_compare(run_a, run_b, out, pairs=chosen)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    click.echo(summary_table(data))
    for note in data.get("notes") or []:
        click.echo(f"note: {note}", err=True)
    for warning in data.get("warnings") or []:
        click.echo(f"power: {warning}", err=True)
    if html is not None:
        click.echo(f"compare: {html}")
