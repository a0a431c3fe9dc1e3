"""Prompt templates shared by the Claude selector and judge: bundled by name or a user file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from memeval.errors import MemevalError

TEMPLATE_SUFFIX = ".j2"


class PromptTemplateError(MemevalError):
    """A prompt name or template file cannot be used."""


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template.

    Args:
        name: the bundled name (`conservative`) or the user file's path.
        source: the template text, for hashing and reports.
    """

    name: str
    source: str

    def render(self, **values: Any) -> str:
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                                 autoescape=False)
        try:
            return env.from_string(self.source).render(**values).strip()
        except jinja2.TemplateError as exc:
            raise PromptTemplateError(
                f"prompt {self.name}: {type(exc).__name__}: {exc}; available values: "
                f"{', '.join(sorted(values))}") from exc


def bundled_names(folder: Path) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in folder.glob(f"*{TEMPLATE_SUFFIX}")))


def load_prompt(name_or_path: str | Path, folder: Path) -> PromptTemplate:
    """A bundled template by name (`folder/<name>.j2`), else a template file path.

    Args:
        name_or_path: a bundled prompt name, or a path to the user's own template.
        folder: where the bundled templates live.
    """
    bundled = folder / f"{name_or_path}{TEMPLATE_SUFFIX}"
    if isinstance(name_or_path, str) and "/" not in name_or_path and bundled.is_file():
        return PromptTemplate(str(name_or_path), bundled.read_text(encoding="utf-8"))
    path = Path(name_or_path).expanduser()
    if path.is_file():
        try:
            return PromptTemplate(str(path), path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise PromptTemplateError(f"{path}: cannot read prompt template ({exc})") from exc
    raise PromptTemplateError(
        f"prompt {str(name_or_path)!r}: neither a bundled prompt "
        f"({', '.join(bundled_names(folder))}) nor an existing template file")


def text_hash(text: str) -> str:
    """Short stable hash of a rendered prompt, for config.json and reports."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
