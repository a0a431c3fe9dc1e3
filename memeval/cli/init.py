"""`memeval init [DIR]`: a starting point for gating your own selector in your repo."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

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
    try:
        for template, place in LAYOUT.items():
            path = target / place
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text((source / template).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:  # ROOT not creatable or not writable: a bad argument, not a bug
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"wrote {target}/: my_selector.py (your selector, `mine`), "
               "conftest.py (registers it), test_memory_selection.py, scenarios/example.yaml, "
               "pytest.ini (options and the gate), memeval.yml (a workflow to copy into "
               ".github/workflows/)\n"
               f"next:\n  pytest {target}")
