"""`memeval doctor`: what this machine gives memeval, in one screen.

A newcomer's questions before the first run: which versions, is a key set (never
its value), where the response cache lives and how big it is, is there a Chromium
for the report's browser tests, is the embedding selector's model installed, where
the bundled fixtures are.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from importlib import metadata
from pathlib import Path

import click

CHROMIUM_ENV = "MEMEVAL_CHROMIUM"
CHROMIUM_INSTALL = ("install Chromium with `sudo apt-get install -y chromium` (Debian/Ubuntu), "
                    f"or set {CHROMIUM_ENV}=/path/to/chromium")
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
PACKAGES = ("memeval", "anthropic", "openai", "playwright")
DISTRIBUTIONS = {"memeval": "memeval-harness"}  # pip's name; `memeval` on PyPI is another

EXAMPLES = """
\b
Examples:
  memeval doctor                 # paste its output into a bug report: it holds no secret
"""


def find_chromium() -> Path | None:
    """The Chromium the browser tests drive: `$MEMEVAL_CHROMIUM`, else `chromium` on PATH,
    else /usr/bin/chromium; only a regular executable file counts."""
    named = os.environ.get(CHROMIUM_ENV)
    candidates = [named] if named else [shutil.which("chromium"), "/usr/bin/chromium"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _size(path: Path) -> str:
    size = path.stat().st_size
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KB" if size < 1024**2 else f"{size / 1024**2:.1f} MB"


def _cache_line() -> str:
    from memeval.llm.config import CACHE_ENV, configured_cache_path

    raw = os.environ.get(CACHE_ENV)
    path = configured_cache_path()
    if path is None:
        return f"off (${CACHE_ENV}={raw!r})"
    where = f"{path}" + (f" (from ${CACHE_ENV})" if raw else "")
    return f"{where}, {_size(path)}" if path.is_file() else f"{where}, not created yet"


def _fixtures_line() -> str:
    from memeval.run.config import bundled_fixtures_dir

    root = bundled_fixtures_dir()
    count = len(list((root / "scenarios").glob("*.yaml")))
    return f"{root} ({count} scenarios)" if count else f"{root} (missing: reinstall memeval)"


def _embedding_line() -> str:
    from memeval.errors import MemevalError
    from memeval.selectors import embedding

    if not embedding.embedding_available():
        return f"not installed (the embedding selector fails): {embedding.INSTALL_HINT}"
    try:
        weights, _ = embedding.model_files()
    except MemevalError as exc:
        return str(exc)
    return f"{embedding.model_name()}, bundled in {weights.parent.parent}"


def report_lines() -> list[tuple[str, str]]:
    """(label, value) pairs of the report; no value ever holds a secret."""
    lines = [(name, _version(DISTRIBUTIONS.get(name, name))) for name in PACKAGES]
    lines.insert(1, ("python", f"{platform.python_version()} ({sys.executable})"))
    lines += [(key, "set" if os.environ.get(key) else "not set") for key in KEYS]
    lines.append(("response cache", _cache_line()))
    chromium = find_chromium()
    lines.append(("chromium", str(chromium) if chromium
                  else f"not found (browser tests skip): {CHROMIUM_INSTALL}"))
    lines.append(("embedding model", _embedding_line()))
    lines.append(("bundled fixtures", _fixtures_line()))
    return lines


@click.command("doctor", epilog=EXAMPLES)
def command() -> None:
    """Print versions, whether API keys are set, the cache, Chromium, the embedding model
    and the fixtures."""
    lines = report_lines()
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        click.echo(f"{label:<{width}}  {value}")
