"""`memeval compare RUN_A RUN_B --out DIR`: is run B better than baseline A?"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval compare reports/baseline reports/latest --out reports/compare
  memeval run -s 'claude?prompt=a' --out /tmp/a && memeval run -s 'claude?prompt=b' --out /tmp/b
  memeval compare /tmp/a /tmp/b --out /tmp/a-vs-b
"""


def _cell(c: dict[str, Any]) -> str:
    diff, low, high = c.get("mean_diff"), c.get("ci_low"), c.get("ci_high")
    if diff is None or math.isnan(diff):
        return "—"
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return f"{diff:+.3f}"
    return f"{diff:+.3f} [{low:+.2f}, {high:+.2f}]"


def _mean(value: Any) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def summary_table(data: dict[str, Any]) -> str:
    """The terminal view: one line per selector pair and metric."""
    from memeval.report._compare import COMPARE_METRICS

    header = ["selector", "metric", "A", "B", "B − A [95% CI]", "verdict", "pairs"]
    lines = []
    for pair in data["pairs"]:
        name = pair["selector_a"] if pair["selector_a"] == pair["selector_b"] else \
            f"{pair['selector_a']} → {pair['selector_b']}"
        for metric in COMPARE_METRICS:
            c = pair["overall"][metric]
            verdict = c["significance"] + (" (underpowered)" if c.get("power_warning") else "")
            lines.append([name, metric, _mean(c["mean_a"]), _mean(c["mean_b"]), _cell(c),
                          verdict, str(c["n_pairs"])])
            name = ""
        lines.append(["", "turns", "", "", f"{len(pair['won'])} won, {len(pair['lost'])} lost",
                      "", str(pair["paired_turns"])])
    widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*line).rstrip() for line in lines)])


@click.command("compare", epilog=EXAMPLES)
@click.argument("run_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for compare.html and compare.json (created if needed).")
def command(run_a: Path, run_b: Path, out: Path) -> None:
    """Compare run B against baseline run A, turn by turn.

    Selectors are paired by name (or, when each run has exactly one, with each other).
    Prints B − A per metric with paired 95 % CIs; compare.html adds per-category deltas
    and the turns B won or lost, with drill-downs.
    """
    for name, run in (("RUN_A", run_a), ("RUN_B", run_b)):
        if not run.is_dir():
            raise click.BadParameter(f"{run} is not a folder; pass a run folder written by "
                                     "`memeval run --out DIR`", param_hint=name)
    from memeval.report import render_compare
    from memeval.report._compare import COMPARE_JSON

    try:
        html = render_compare(run_a, run_b, out)
    except MemevalError as exc:
        raise click.ClickException(str(exc)) from None
    import json

    data = json.loads((out / COMPARE_JSON).read_text(encoding="utf-8"))
    click.echo(summary_table(_restore_nan(data)))
    for warning in data.get("warnings") or []:
        click.echo(f"power: {warning}", err=True)
    click.echo(f"compare: {html}")


def _restore_nan(value: Any) -> Any:
    """compare.json writes undefined numbers as null; the table wants NaN back."""
    if value is None:
        return math.nan
    if isinstance(value, dict):
        return {k: _restore_nan(v) if k not in ("warning",) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_restore_nan(v) for v in value]
    return value
