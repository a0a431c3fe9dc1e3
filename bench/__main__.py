"""`python -m bench`: the benchmarks of a repository checkout (no wheel carries them)."""

from __future__ import annotations

from pathlib import Path

import click

EXAMPLES = """
\b
Examples:
  python -m bench                    # every benchmark, default sizes (< 10 min, 2 cores)
  python -m bench --quick            # smaller sizes, about a minute
  python -m bench -b scan -b cost    # only these
  python -m bench --tmpdir /dev/shm  # sessions on a tmpfs: the disk out of the figures
"""


@click.command("bench", epilog=EXAMPLES)
@click.option("--quick", is_flag=True, help="Smaller sizes; figures are rougher.")
@click.option("--profile", type=click.Choice(["default", "quick", "tiny"]), default=None,
              help="Sizes by name (tiny is the smoke test's: timings meaningless).")
@click.option("-b", "--benchmark", "only", multiple=True, metavar="NAME",
              help="Run only this benchmark (repeatable): env, scan, overhead, "
                   "concurrency, cache, cost, memory, embed. Default: all.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the JSON goes. Default: bench/results.json.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep generated memdirs and runs here (default: a temp folder).")
@click.option("--tmpdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Temporary folder for the run's sessions (e.g. /dev/shm: a tmpfs "
                   "takes a slow disk out of the figures). Default: $TMPDIR.")
@click.option("--strict", is_flag=True, help="Exit 1 when a target is missed.")
def command(quick: bool, profile: str | None, only: tuple[str, ...], out: Path | None,
            workdir: Path | None, tmpdir: Path | None, strict: bool) -> None:
    """Measure speed, scale and cost of memeval against baselines, in one run.

    Prints a table (figure, value, target, result) and writes bench/results.json.
    Every figure is a ratio or a time taken next to its baseline in the same process.
    """
    import bench

    if quick and profile not in (None, "quick"):
        raise click.UsageError("--quick and --profile disagree; pass one of them")
    chosen = "quick" if quick else profile or "default"
    unknown = sorted(set(only) - set(bench.BENCHMARKS))
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(unknown)}; choose from "
                                 f"{', '.join(bench.BENCHMARKS)}", param_hint="--benchmark")
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    result = bench.run_all(profile=chosen, only=only, out=out or bench.RESULTS_PATH,
                           workdir=workdir, tmpdir=tmpdir,
                           log=lambda m: click.echo(m, err=True))
    click.echo(bench.table(result.figures))
    click.echo(f"\nwrote {result.path} ({chosen} sizes, {result.data['seconds']:.0f} s)")
    if result.errors:
        click.echo(f"benchmarks that crashed: {', '.join(result.errors)}", err=True)
    if result.failed:
        click.echo(f"targets missed: {', '.join(result.failed)}", err=True)
    if strict and (result.failed or result.errors):
        raise SystemExit(1)


if __name__ == "__main__":
    command(prog_name="python -m bench")
