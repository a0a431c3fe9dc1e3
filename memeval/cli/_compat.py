"""The `--compat` option, one definition for every command that plays sessions."""

from __future__ import annotations

import click

from memeval.errors import MemevalError

HELP = ("A preset, faithful (Claude Code's quirks) or hardened (every invariant holds), "
        "optionally with switches: faithful+compaction=restore, faithful+extra_file_tools, "
        "hardened+duplicate_names_surface_twice.")


def _checked(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from memeval.session.compat import Compat

    try:
        return Compat.from_spec(value).preset_name
    except MemevalError as exc:
        raise click.BadParameter(str(exc)) from None


compat_option = click.option("--compat", default="faithful", show_default=True,
                             callback=_checked, metavar="SPEC", help=HELP)
