"""Checks of a memdir's index that users can run on their own memory.

The index is the only part of the memory the model sees in index mode, so a broken
link hides a memory, and an overlong entry spends the 25 000-unit budget that
decides which later entries survive truncation.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memeval.memdir.frontmatter import HANDLER
from memeval.memdir.text import utf16_len
from memeval.memdir.yaml12 import YamlError, parse_yaml
from memeval.startup import markdown
from memeval.startup._deps import ENTRYPOINT_NAME, parse_frontmatter, truncate_entrypoint_content

MAX_ENTRY_CHARS = 200
"""Upper end of the ~150–200 characters an index line should stay under."""


CODES = {
    "no-index": "the memdir has no readable MEMORY.md",
    "frontmatter": "the index has frontmatter (stripped at startup, never seen)",
    "over-limits": "the index exceeds 200 lines or 25 000 units and is truncated",
    "no-link": "a line that is not a heading links to no memory file",
    "bad-link": "a link leaves the memdir, targets an index, or names no file",
    "long-entry": "a line is over the recommended length",
    "orphan": "a memory file no index line links to",
    "bad-frontmatter": "a memory file's frontmatter cannot be read, or gives no description",
}
"""Problem codes, for `--ignore` and for suites that check a subset."""


@dataclass(frozen=True)
class LintProblem:
    """One problem, printable as `path:line: code: message` (no line: the whole file)."""

    path: Path
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.code}: {self.message}"


def _is_external(href: str) -> bool:
    return "://" in href or href.startswith(("mailto:", "#"))


def _check_target(memdir: Path, index: Path, number: int, href: str) -> LintProblem | None:
    target = unquote(href.split("#", 1)[0])
    relative = posixpath.normpath(target) if target else ""
    if not relative or relative.startswith("../") or relative == ".." or target.startswith("/"):
        return LintProblem(
            index,
            number,
            "bad-link",
            f"link {href!r} points outside the memdir; link a file inside it",
        )
    if posixpath.basename(relative) == ENTRYPOINT_NAME:
        return LintProblem(
            index,
            number,
            "bad-link",
            f"link {href!r} points to an index; link the topic file instead",
        )
    if not (memdir / relative).is_file():
        return LintProblem(
            index,
            number,
            "bad-link",
            f"link {href!r}: no such file in the memdir; fix the path or the file",
        )
    return None


def lint_memdir(memdir: Path, *, max_entry_chars: int = MAX_ENTRY_CHARS) -> list[LintProblem]:
    """Every problem of `memdir`'s index, in file order.

    Args:
        memdir: the memory directory (holding `MEMORY.md`).
        max_entry_chars: longest acceptable index line, in UTF-16 units as the
            system measures the index.
    """
    index = memdir / ENTRYPOINT_NAME
    if not index.is_file():
        return [LintProblem(index, 0, "no-index", "no index; add one line per memory file")]
    try:
        raw = index.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [
            LintProblem(index, 0, "no-index", f"cannot read the index ({error}); save it as UTF-8")
        ]
    problems: list[LintProblem] = []
    _, content = parse_frontmatter(raw)
    if content != raw:
        problems.append(
            LintProblem(
                index,
                1,
                "frontmatter",
                "frontmatter in the index is stripped at startup; remove it",
            )
        )
    truncation = truncate_entrypoint_content(content)
    if truncation.was_line_truncated or truncation.was_byte_truncated:
        reason = truncation.content.rsplit(f"{ENTRYPOINT_NAME} is ", 1)[-1].split(". ", 1)[0]
        problems.append(
            LintProblem(
                index,
                0,
                "over-limits",
                f"index is {reason}; the model sees only the first part — shorten it",
            )
        )
    offset = raw[: len(raw) - len(content)].count("\n")
    linked: set[str] = set()
    in_fence = False
    for number, line in enumerate(content.split("\n"), start=1 + offset):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or stripped.startswith(("#", "<!--")):
            continue
        hrefs = [h for h in markdown.link_hrefs(stripped) if not _is_external(h)]
        if not hrefs:
            problems.append(
                LintProblem(
                    index,
                    number,
                    "no-link",
                    "entry has no link to a memory file; add [title](file.md)",
                )
            )
        for href in hrefs:
            problem = _check_target(memdir, index, number, href)
            if problem is not None:
                problems.append(problem)
            linked.add(posixpath.normpath(unquote(href.split("#", 1)[0])))
        length = utf16_len(line.rstrip())
        if length > max_entry_chars:
            problems.append(
                LintProblem(
                    index,
                    number,
                    "long-entry",
                    f"entry is {length} characters, over {max_entry_chars}; "
                    "keep the hook short and move detail into the topic file",
                )
            )
    return problems + _memory_file_problems(memdir, linked)


def _memory_file_problems(memdir: Path, linked: set[str]) -> list[LintProblem]:
    """Memory files no index line reaches, and files whose frontmatter says nothing."""
    problems = []
    for path in sorted(memdir.rglob("*.md")):
        relative = path.relative_to(memdir).as_posix()
        if relative == ENTRYPOINT_NAME or any(p.startswith(".") for p in relative.split("/")):
            continue
        if not path.is_file():  # a FIFO or device named x.md would block the read
            continue
        if relative not in linked:
            problems.append(LintProblem(path, 0, "orphan", "no index line links to this memory; "
                                        "add one, or it is invisible in index mode"))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(LintProblem(path, 0, "bad-frontmatter", f"unreadable ({error})"))
            continue
        data, content = parse_frontmatter(text)
        if text.startswith("---") and content == text:
            problems.append(LintProblem(path, 1, "bad-frontmatter", "the frontmatter block is "
                                        "not closed with ---; the file has no description"))
        elif text.startswith("---") and not data:
            line, reason = _frontmatter_error(text)
            problems.append(LintProblem(path, line, "bad-frontmatter", f"the frontmatter is "
                                        f"not valid YAML ({reason}); the manifest shows no "
                                        "description"))
        elif not data.get("description"):
            problems.append(LintProblem(path, 1, "bad-frontmatter", "no description: the "
                                        "selector sees only the file name"))
    return problems


def _frontmatter_error(text: str) -> tuple[int, str]:
    """The file line where a frontmatter block stops being YAML, and why.

    The parser's marks count from the block's first line, which is the file's second
    (after the opening `---`); the context mark (where the open bracket or quote
    began) is preferred over where the parser gave up, often the end of the block.
    """
    try:
        block, _ = HANDLER.split(text)
        parse_yaml(block)
    except YamlError as error:
        cause = error.__cause__
        mark = getattr(cause, "context_mark", None) or getattr(cause, "problem_mark", None)
        reason = str(getattr(cause, "problem", None) or error).splitlines()[0]
        return (2 + mark.line if mark is not None else 2), reason
    except ValueError:
        pass
    return 2, "not a mapping of keys to values"


def lint_paths(
    paths: list[Path],
    *,
    max_entry_chars: int = MAX_ENTRY_CHARS,
    ignore: frozenset[str] = frozenset(),
) -> list[LintProblem]:
    """`lint_memdir` over several memdirs, problems concatenated, `ignore`d codes dropped."""
    return [
        problem
        for path in paths
        for problem in lint_memdir(Path(os.fspath(path)), max_entry_chars=max_entry_chars)
        if problem.code not in ignore
    ]
