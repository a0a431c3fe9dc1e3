"""`memeval init [DIR]`: a starting point for gating your own selector in your repo."""

from __future__ import annotations

import json
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from typing import Any

import click

from memeval.cli._errors import InputError

FOLDER = "memory_eval"
LAYOUT = {  # template -> where it goes under FOLDER
    "my_selector.py": "my_selector.py",
    "test_memory_selection.py": "test_memory_selection.py",
    "example.yaml": "scenarios/example.yaml",
    "memeval.yml": "memeval.yml",
    "pytest.ini": "pytest.ini",
    "conftest.py": "conftest.py",
}
DISTRIBUTION = "memeval-harness"  # the name pip knows; `memeval` on PyPI is someone else's
SOURCE_MARK = "__MEMEVAL_SOURCE__"  # in the workflow template, replaced by `install_source`
UNKNOWN_SOURCE = f"{DISTRIBUTION} @ git+https://github.com/YOUR-ORG/memeval"


def install_source(direct_url: dict[str, Any] | None, version: str) -> tuple[str, bool]:
    """The pip requirement that installs this memeval again, and whether a CI machine
    can reach it.

    Read from the install's PEP 610 record (`direct_url.json`): a git checkout gives
    `memeval-harness @ git+URL@commit`, a wheel or archive its URL; an install from a
    package index has no record and gives `memeval-harness==VERSION`. A local folder
    or file only this machine holds is returned too, flagged unreachable.
    """
    if not direct_url or "url" not in direct_url:
        return f"{DISTRIBUTION}=={version}", True
    url = str(direct_url["url"])
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"{DISTRIBUTION} @ {vcs.get('vcs', 'git')}+{url}" + \
            (f"@{commit}" if commit else ""), not url.startswith("file:")
    return f"{DISTRIBUTION} @ {url}", not url.startswith("file:")


def installed_source() -> tuple[str, bool]:
    """`install_source` of the running memeval; an uninstalled checkout gives a
    placeholder to edit."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_SOURCE, False
    text = dist.read_text("direct_url.json")
    try:
        record = json.loads(text) if text else None
    except ValueError:
        record = None
    return install_source(record, dist.version)


@click.command("init")
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
def command(root: Path) -> None:
    """Write memory_eval/ into ROOT (default: here): your selector, a test file, a
    scenario, the pytest options with a recall gate, and a GitHub workflow to copy.
    Never overwrites: an existing memory_eval/ is refused.

    \b
    Then:
      pytest memory_eval            # 3 items and `memeval gate: PASS`
    """
    target = root / FOLDER
    if target.exists():
        raise InputError(f"{target} already exists; remove it or pick another ROOT")
    source = files("memeval.cli") / "_init_templates"
    requirement, reachable = installed_source()
    try:
        for template, place in LAYOUT.items():
            path = target / place
            path.parent.mkdir(parents=True, exist_ok=True)
            text = (source / template).read_text(encoding="utf-8")
            path.write_text(text.replace(SOURCE_MARK, requirement), encoding="utf-8")
    except OSError as exc:  # ROOT not creatable or not writable: a bad argument, not a bug
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"wrote {target}/: my_selector.py (your selector, `mine`), "
               "conftest.py (registers it), test_memory_selection.py, scenarios/example.yaml, "
               "pytest.ini (options and the gate), memeval.yml (a workflow to copy into "
               ".github/workflows/)\n"
               f"next:\n  pytest {target}")
    if not reachable:
        click.echo(f"note: memeval.yml installs memeval from {requirement!r}, which CI "
                   "cannot reach; set its MEMEVAL_SOURCE to a git URL or a wheel's URL "
                   f"(`{DISTRIBUTION} @ git+https://…/memeval@v0.1.0`)", err=True)
