"""`memeval inspect`: what one turn looks like from the inside."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import click

from memeval.cli._compat import compat_option
from memeval.errors import MemevalError

EXAMPLES = """
\b
Examples:
  memeval inspect a-dbt-warehouse                 # a bundled scenario by id; every turn, bm25
  memeval inspect my/scenarios/shop.yaml --turn t3 --selector 'recency?k=3'
  memeval inspect SCENARIO --startup                                # the startup context
"""

MARKS = {"relevant": "★", "acceptable": "~", "irrelevant": " "}
# Control characters but newline and tab: scenario text could otherwise move the
# cursor, clear the screen or write the clipboard (OSC 52) of whoever inspects it.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """`text` safe for a terminal: each control character as its `\\xNN` escape."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def resolve_scenario(value: str) -> Path:
    """A scenario file, or the id of a bundled scenario (works from a wheel install too)."""
    from memeval.run.config import bundled_fixtures_dir

    path = Path(value).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        raise click.BadParameter(f"{value} is a folder; pass one scenario file or a bundled "
                                 "scenario id", param_hint="SCENARIO")
    bundled = sorted((bundled_fixtures_dir() / "scenarios").glob("*.yaml"))
    ids = {p.stem: p for p in bundled}
    if value in ids:
        return ids[value]
    close = difflib.get_close_matches(value, ids, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise click.BadParameter(f"no file {value!r} and no bundled scenario of that id{hint}; "
                             f"bundled: {', '.join(ids)}", param_hint="SCENARIO")


def _render_turn(turn, record, labels) -> list[str]:  # type: ignore[no-untyped-def]
    from memeval.labels import memory_key

    out = [f"── turn {turn.id} [{labels.category}] ──", f"query: {turn.query}"]
    if labels.why:
        out.append(f"why:   {labels.why}")
    out.append(f"gold:  relevant={sorted(labels.relevant) or '∅'} "
               f"acceptable={sorted(labels.acceptable) or '∅'}")
    if record.recent_tools:
        out.append(f"recent tools: {', '.join(record.recent_tools)}")
    if record.skipped:
        out.append(f"recall skipped: {record.skipped}")
    for search in record.dirs:
        out.append(f"manifest of {search.scope} ({len(search.candidates)} candidates; "
                   "★ relevant, ~ acceptable):")
        for header, line in zip(search.candidates, search.manifest.splitlines(), strict=False):
            mark = MARKS[labels.verdict_for(memory_key(search.scope, header.filename))]
            out.append(f"  {mark} {line}")
        out.append(f"selector answered: {list(search.raw_names)}"
                   + (f"  ERROR: {search.error}" if search.error else ""))
    for dropped in record.dropped:
        out.append(f"dropped {dropped.name!r}: {dropped.reason}")
    out.append(f"surfaced: {[s.key for s in record.surfaced] or 'nothing'}")
    for error in record.errors:
        out.append(f"error: {error}")
    return out


@click.command("inspect", epilog=EXAMPLES)
@click.argument("scenario", metavar="SCENARIO")
@click.option("--turn", "turn_id", metavar="ID", help="Show only this turn (earlier turns "
              "still run, so the session state is right).")
@click.option("-s", "--selector", "selector_spec", default="bm25", show_default=True,
              metavar="SPEC", help="The selector to ask.")
@click.option("--startup", is_flag=True,
              help="Print the startup context (phase 1) the session begins with, then stop.")
@click.option("--reminders", is_flag=True,
              help="Also print the system reminders exactly as the main model receives them.")
@compat_option
def command(scenario: str, turn_id: str | None, selector_spec: str, startup: bool,
            reminders: bool, compat: str) -> None:
    """Show a scenario turn by turn: manifest with gold labels, the pick, what surfaced.

    SCENARIO is a scenario YAML file or the id of a bundled scenario (a-dbt-warehouse).
    """
    from memeval.run.play import open_session, play_turn
    from memeval.scenarios import load
    from memeval.selectors import resolve_selector

    path = resolve_scenario(scenario)
    try:
        loaded = load(path)
    except MemevalError as exc:
        raise click.BadParameter(str(exc), param_hint="SCENARIO") from None
    try:
        selector = resolve_selector(selector_spec)
    except MemevalError as exc:
        raise click.BadParameter(str(exc), param_hint="--selector") from None
    if turn_id is not None and turn_id not in {t.id for t in loaded.turns}:
        known = ", ".join(t.id for t in loaded.turns)
        raise click.BadParameter(f"no turn {turn_id!r} in {path}; turns: {known}",
                                 param_hint="--turn")
    with open_session(loaded, selector, compat) as opened:  # type: ignore[arg-type]
        if startup:
            click.echo(shown(opened.contexts[loaded.mode].text))
            return
        for turn in loaded.turns:
            record = play_turn(opened.session, loaded, turn)
            if turn_id is None or turn.id == turn_id:
                click.echo(shown("\n".join(_render_turn(turn, record, turn.labels))))
                if reminders:
                    click.echo(shown("\n".join(record.system_reminders)))
                click.echo()
            if turn.id == turn_id:
                break
