"""The `memeval` command line.

Each subcommand lives in its own module of this package and exposes a click command
named `command`; the group collects them, so adding a command touches one new file.
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from memeval import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memeval")
def cli() -> None:
    """memeval: measure how well an agent's long-term memory reaches its context.

    \b
    Quick start:
      memeval run                 evaluate the bundled fixtures with offline selectors
      memeval inspect SCENARIO    show what a selector sees and picks for one turn
      memeval <command> --help    details and examples for each command
    """


def _register_commands() -> None:
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        command = getattr(module, "command", None)
        if isinstance(command, click.Command):
            cli.add_command(command)


_register_commands()


def main() -> None:
    """Console-script entry point."""
    cli()
