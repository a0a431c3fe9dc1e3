"""Turn discovered files into the text the model receives (SPEC §4.4).

Structure (headers, descriptions, order, separators, the system-reminder wrapping)
is fixed here because it is a fact of the system; the three pieces of prose live in
`templates/*.j2`, in our words, and a user may point `templates=` at a folder with
the production wording.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import jinja2

from memeval.memdir.text import js_trim
from memeval.startup.env import INDEX_TYPES, MemoryFileType
from memeval.startup.pipeline import MemoryFile

Mode = Literal["index", "recall"]
"""`index`: mode flag off, the MEMORY.md index is in the context; `recall`: flag on."""

DESCRIPTIONS: dict[MemoryFileType, str] = {
    MemoryFileType.PROJECT: " (project instructions, checked into the codebase)",
    MemoryFileType.LOCAL: " (user's private project instructions, not checked in)",
    MemoryFileType.AUTO_MEM: " (user's auto-memory, persists across conversations)",
    MemoryFileType.TEAM_MEM: " (shared team memory, synced across the organization)",
    # Managed files share the user description: a quirk of the system, kept.
    MemoryFileType.USER: " (user's private global instructions for all projects)",
    MemoryFileType.MANAGED: " (user's private global instructions for all projects)",
}

SYSTEM_REMINDER_OPEN = "<system-reminder>\n"
SYSTEM_REMINDER_CLOSE = "\n</system-reminder>\n"
# The production template literal puts a blank line and the source's indentation
# before its closing note; reproduced so the message matches byte for byte.
CLOSING_SEPARATOR = "\n\n      "
TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=8)
def _environment(folder: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(TEMPLATES)]
    if folder is not None:
        loaders.insert(0, jinja2.FileSystemLoader(folder))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined, autoescape=False
    )


def prose(name: str, *, templates: Path | None = None) -> str:
    """The text of template `name` (e.g. `preamble`), from `templates` if it has one."""
    return _environment(templates).get_template(f"{name}.j2").render().strip()


def included_in_mode(file: MemoryFile, mode: Mode) -> bool:
    """Recall mode leaves the index files out: recall replaces them (SPEC §0)."""
    return not (mode == "recall" and file.type in INDEX_TYPES)


def render_block(file: MemoryFile) -> str:
    """`Contents of <path><description>:` then a blank line and the trimmed content."""
    return f"Contents of {file.path}{DESCRIPTIONS[file.type]}:\n\n{js_trim(file.content)}"


def render_claude_md(
    files: Iterable[MemoryFile], mode: Mode = "index", *, templates: Path | None = None
) -> str:
    """The `claudeMd` value: preamble and one block per file, or `""` when none.

    Args:
        files: discovered files in context order.
        mode: `index` keeps the MEMORY.md blocks, `recall` leaves them out.
        templates: a folder overriding the prose templates.
    """
    blocks = [render_block(f) for f in files if included_in_mode(f, mode) and f.content]
    if not blocks:
        return ""
    return "\n\n".join([prose("preamble", templates=templates), *blocks])


def render_user_context(claude_md: str, today: dt.date, *, templates: Path | None = None) -> str:
    """The meta user message carrying the startup context, exactly as sent.

    Sections are `# claudeMd` (only when there is one) then `# currentDate`, joined by
    a newline, inside one system reminder with an opening line and a closing note.

    Args:
        claude_md: `render_claude_md(...)`.
        today: the session's local date.
        templates: a folder overriding the prose templates.
    """
    context: dict[str, str] = {}
    if claude_md:
        context["claudeMd"] = claude_md
    context["currentDate"] = f"Today's date is {today.isoformat()}."
    sections = "\n".join(f"# {key}\n{value}" for key, value in context.items())
    return (
        SYSTEM_REMINDER_OPEN
        + prose("context_intro", templates=templates)
        + "\n"
        + sections
        + CLOSING_SEPARATOR
        + prose("context_closing", templates=templates)
        + SYSTEM_REMINDER_CLOSE
    )
