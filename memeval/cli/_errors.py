"""Exit codes shared by the commands."""

from __future__ import annotations

import click

EXIT_USAGE = 2  # click's code for usage errors; memeval uses it for every bad input


class InputError(click.ClickException):
    """Bad command input (a spec, a scenario file, a folder, a missing key): one
    `Error:` line and exit code 2, like click's usage errors, without the usage text."""

    exit_code = EXIT_USAGE
