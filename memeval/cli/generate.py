"""`memeval generate`: write a seeded synthetic scenario with gold labels."""

from __future__ import annotations

from pathlib import Path

import click

from memeval.cli._errors import InputError
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval generate --seed 1 --files 300 --turns 100 --out synthetic/
  memeval generate --seed 2 --files 50 --turns 40 --agents 2 --out synthetic/
  memeval run --scenarios 'synthetic/scenarios/*.yaml'
\b
Writes <out>/scenarios/<id>.yaml and <out>/memdirs/<id>/ (the fixtures/ layout).
The same seed and sizes give byte-identical output.
"""


@click.command("generate", epilog=EXAMPLES)
@click.option("--seed", type=int, default=0, show_default=True,
              help="Random seed; the same seed gives the same files.")
@click.option("--files", type=click.IntRange(1, 100_000), default=50, show_default=True,
              help="Memory files in the memdir (MEMORY.md not counted).")
@click.option("--turns", type=click.IntRange(1), default=30, show_default=True,
              help="Turns in the scenario.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder (scenarios/ and memdirs/ are created inside).")
@click.option("--agents", type=click.IntRange(0, 20), default=0, show_default=True,
              help="Agents with their own memdirs, for agent-scope turns.")
@click.option("--id", "scenario_id", default=None, metavar="ID",
              help="Scenario id. Default: synthetic-s<seed>-f<files>-t<turns>.")
@click.option("--force", is_flag=True, help="Replace an earlier output of the same id.")
def command(seed: int, files: int, turns: int, out: Path, agents: int,
            scenario_id: str | None, force: bool) -> None:
    """Generate a synthetic memdir and scenario whose labels hold by construction."""
    from memeval.scenarios import generate, load

    try:
        path = generate(seed, files, turns, out, scenario_id=scenario_id, agents=agents,
                        overwrite=force)
        scenario = load(path)  # proves the output is a valid scenario
    except MemevalError as exc:
        raise InputError(str(exc)) from None
    click.echo(f"wrote {path} ({len(scenario.project.candidates())} memories, "
               f"{len(scenario.turns)} turns)")
