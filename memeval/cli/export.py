"""`memeval export RUN --format trec`: a run's rankings for ranx, ir_measures, trec_eval."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval export reports/latest --format trec --out trec/
  trec_eval -c -m ndcg_cut.5 trec/qrels.txt trec/run.bm25.trec
  python -c "from ranx import Qrels, Run, evaluate; print(evaluate(
      Qrels.from_file('trec/qrels.txt', kind='trec'),
      Run.from_file('trec/run.bm25.trec', kind='trec'), 'ndcg@5', make_comparable=True))"
"""


@click.command("export", epilog=EXAMPLES)
@click.argument("run", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "format_", type=click.Choice(["trec"]), default="trec",
              show_default=True, help="trec: a qrels file from the gold labels and a run "
                                      "file per selector (docs/research.md).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write into. Default: RUN/trec/.")
def command(run: Path, format_: str, out: Path | None) -> None:
    """Write RUN's rankings in a format other tools read: every retrieval figure of
    summary.json (recall_any@k, recall_all@k, nDCG@k, MRR) can be recomputed from
    the files."""
    if not run.is_dir():
        raise click.BadParameter(f"{run} is not a folder; pass a run folder written by "
                                 "`memeval run --out DIR`", param_hint="RUN")
    from memeval.scoring.trec import export_trec

    try:
        written = export_trec(run, out or run / format_)
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    for path in written:
        click.echo(str(path))
