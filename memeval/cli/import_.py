"""`memeval import`: turn public memory benchmarks into scenarios (bring your own data)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

SHOWN_DROPS = 20  # the rest go to the report file, so a big import stays readable

LOCOMO_EXAMPLES = """
\b
Examples:
  memeval import locomo locomo10.json --out data/locomo
  memeval import locomo locomo10.json --granularity observation --out data/locomo-obs
  memeval run --scenarios 'data/locomo/scenarios/*.yaml'
"""
LONGMEMEVAL_EXAMPLES = """
\b
Examples:
  memeval import longmemeval longmemeval_s.json --out data/lme --limit 50
  memeval run --scenarios 'data/lme/scenarios/*.yaml'
"""


def _instant(_ctx: click.Context, _param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    from memeval.scenarios._check import parse_instant

    try:
        return parse_instant(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _finish(report, out: Path, source: str) -> None:
    """Check every written scenario loads, print a summary, keep all drops in a file."""
    from memeval.scenarios import load_many

    loaded = load_many(list(report.scenarios)) if report.scenarios else None
    if loaded is not None and loaded.errors:
        raise click.ClickException("an imported scenario does not load (a bug in the "
                                   f"importer, please report it):\n{loaded.errors[0]}")
    click.echo(f"wrote {len(report.scenarios)} scenario(s) to {out / 'scenarios'} "
               f"({report.memories} memories, {report.turns} turns)")
    if report.dropped:
        log = out / f"import-{source}-dropped.txt"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("\n".join(report.dropped) + "\n", encoding="utf-8")
        click.echo(f"left out or adjusted {len(report.dropped)} item(s), all listed in {log}:",
                   err=True)
        for line in report.dropped[:SHOWN_DROPS]:
            click.echo(f"  {line}", err=True)
        if len(report.dropped) > SHOWN_DROPS:
            click.echo(f"  ... and {len(report.dropped) - SHOWN_DROPS} more", err=True)
    if not report.scenarios:
        raise InputError(f"nothing imported from the {source} file")


GROUP_EXAMPLES = """
\b
Examples:
  memeval import locomo locomo10.json --out data/locomo
  memeval import longmemeval longmemeval_s.json --out data/lme
"""


@click.group("import", epilog=GROUP_EXAMPLES)
def command() -> None:
    """Import a public memory benchmark as memdirs and gold-labelled scenarios.

    The datasets are not shipped with memeval (their licences differ); download
    them yourself and point these commands at the JSON file.
    """


@command.command("locomo", epilog=LOCOMO_EXAMPLES)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--granularity", type=click.Choice(["session", "observation"]),
              default="session", show_default=True,
              help="One memory per session (summary + observations) or per observation.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder (scenarios/ and memdirs/ are created inside).")
@click.option("--now", callback=_instant, default=None, metavar="ISO-8601",
              help="Clock of every scenario. Default: a day after its last session.")
@click.option("--force", is_flag=True, help="Replace earlier output of the same ids.")
def locomo(file: Path, granularity: str, out: Path, now: datetime | None, force: bool) -> None:
    """Import a LoCoMo JSON file: one scenario per conversation."""
    from memeval.scenarios.importers import import_locomo

    try:
        report = import_locomo(file, out, granularity=granularity,  # type: ignore[arg-type]
                               now=now, overwrite=force)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    _finish(report, out, "locomo")


@command.command("longmemeval", epilog=LONGMEMEVAL_EXAMPLES)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder (scenarios/ and memdirs/ are created inside).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Import only the first N records.")
@click.option("--force", is_flag=True, help="Replace earlier output of the same ids.")
def longmemeval(file: Path, out: Path, limit: int | None, force: bool) -> None:
    """Import a LongMemEval JSON file: one scenario per question record."""
    from memeval.scenarios.importers import import_longmemeval

    try:
        report = import_longmemeval(file, out, limit=limit, overwrite=force)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    _finish(report, out, "longmemeval")
