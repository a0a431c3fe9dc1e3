"""The per-file pipeline of SPEC §4.2: read, strip, expand includes, dedupe.

One `Loader` is one discovery pass: it owns the set of paths already processed, so
a file reached twice (by two includes, a symlink, a rules folder) loads once.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memeval.memdir.text import js_trim
from memeval.startup import markdown
from memeval.startup._deps import parse_frontmatter, truncate_entrypoint_content
from memeval.startup.env import INDEX_TYPES, MemoryFileType, StartupEnv
from memeval.startup.excludes import is_excluded

MAX_INCLUDE_DEPTH = 5
"""Depth at which includes stop: the root file plus at most 4 nested levels."""

_TEXT_EXTENSIONS = """
    .md .txt .text .json .yaml .yml .toml .xml .csv .html .htm .css .scss .sass .less
    .js .ts .tsx .jsx .mjs .cjs .mts .cts .py .pyi .pyw .rb .erb .rake .go .rs
    .java .kt .kts .scala .c .cpp .cc .cxx .h .hpp .hxx .cs .swift
    .sh .bash .zsh .fish .ps1 .bat .cmd .env .ini .cfg .conf .config .properties
    .sql .graphql .gql .proto .vue .svelte .astro .ejs .hbs .pug .jade
    .php .pl .pm .lua .r .R .dart .ex .exs .erl .hrl .clj .cljs .cljc .edn .hs .lhs
    .elm .ml .mli .f .f90 .f95 .for .cmake .make .makefile .gradle .sbt
    .rst .adoc .asciidoc .org .tex .latex .lock .log .diff .patch
"""
TEXT_FILE_EXTENSIONS = frozenset(_TEXT_EXTENSIONS.split())
"""The 107 extensions Claude Code 2.1.88 reads an instruction, rule or included file
with; anything else (images, PDFs, `.mdx`, `.svg`, `.tf`...) is skipped. A file
without an extension counts as text. The file's extension is lower-cased before the
lookup, so `.R` is listed but only ever reached as `.r`."""


@dataclass(frozen=True)
class MemoryFile:
    """One instruction or index file as it enters the startup context.

    Args:
        path: the path it was loaded by (a rules file: its symlink-resolved path).
        type: where it came from; includes inherit their includer's type.
        content: text after the pipeline (frontmatter and block comments stripped;
            for an index, truncated with its warning).
        parent: the including file, for files loaded through `@include`.
        globs: `paths:` patterns of a conditional rule; `None` when unconditional.
        content_differs_from_disk: the pipeline changed the text.
        raw_content: the text on disk, kept only when it differs.
        line_count: an index's line count before truncation (`None` otherwise).
        byte_count: an index's size in UTF-16 units before truncation.
        was_line_truncated: an index was cut to its line limit.
        was_byte_truncated: an index was over its size limit.
    """

    path: Path
    type: MemoryFileType
    content: str
    parent: Path | None = None
    globs: tuple[str, ...] | None = None
    content_differs_from_disk: bool = False
    raw_content: str | None = None
    line_count: int | None = None
    byte_count: int | None = None
    was_line_truncated: bool = False
    was_byte_truncated: bool = False

    @property
    def is_index(self) -> bool:
        return self.type in INDEX_TYPES


def normalize_for_comparison(path: Path | str) -> str:
    """Lexical normalization, as `path.normalize` does; no symlinks resolved."""
    return os.path.normpath(os.fspath(path))


def path_within(path: Path | str, folder: Path | str) -> bool:
    """`path` is `folder` or below it, judged lexically."""
    rel = os.path.relpath(normalize_for_comparison(path), normalize_for_comparison(folder))
    return rel == "." or not (rel == ".." or rel.startswith("../") or os.path.isabs(rel))


def resolve(path: Path, *, nfc: bool = False) -> tuple[Path, bool]:
    """(real path, whether it differs); a path that cannot be resolved stays as is.

    `nfc`: NFC-normalize the real path, as Claude Code's filesystem layer does; an
    NFD-named file then "resolves" to a name that may not exist on disk.
    """
    try:
        real_s = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in an include path
        return path, False
    real = Path(unicodedata.normalize("NFC", real_s) if nfc else real_s)
    return real, str(real) != str(path)


def _read_text(path: Path) -> str | None:
    # Only regular files: a FIFO or device named CLAUDE.md must not hang the run.
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    # Node decodes invalid UTF-8 to U+FFFD and keeps a BOM as a character.
    return data.decode("utf-8", errors="replace")


def _is_text_file(path: Path) -> bool:
    ext = os.path.splitext(path.name)[1].lower()
    return not ext or ext in TEXT_FILE_EXTENSIONS


def split_path_patterns(value: Any) -> list[str]:
    """`paths:` frontmatter as glob patterns: commas split outside braces, braces expand."""
    if isinstance(value, list):
        return [p for item in value for p in split_path_patterns(item)]
    if not isinstance(value, str):
        return []
    parts: list[str] = []
    current, depth = "", 0
    for char in value:
        if char == "," and depth == 0:
            if js_trim(current):
                parts.append(js_trim(current))
            current = ""
            continue
        depth += (char == "{") - (char == "}")
        current += char
    if js_trim(current):
        parts.append(js_trim(current))
    return [expanded for part in parts for expanded in _expand_braces(part)]


_BRACES = re.compile(r"^([^{]*)\{([^}]+)\}(.*)$", re.DOTALL)


def _expand_braces(pattern: str) -> list[str]:
    match = _BRACES.match(pattern)
    if match is None:
        return [pattern]
    prefix, alternatives, suffix = match.groups()
    return [
        expanded
        for alternative in alternatives.split(",")
        for expanded in _expand_braces(prefix + js_trim(alternative) + suffix)
    ]


def _globs(frontmatter: dict[str, Any]) -> tuple[str, ...] | None:
    if not frontmatter.get("paths"):
        return None
    raw_patterns = split_path_patterns(frontmatter["paths"])
    patterns = [p.removesuffix("/**") for p in raw_patterns]
    patterns = [p for p in patterns if p]
    # A rule that matches everything is simply unconditional.
    if not patterns or all(p == "**" for p in patterns):
        return None
    return tuple(patterns)


@dataclass(frozen=True)
class ParsedFile:
    """A file after the text pipeline, before recursion into its includes."""

    file: MemoryFile
    includes: tuple[Path, ...]


def parse_memory_file(
    raw: str, path: Path, file_type: MemoryFileType, *, include_base: Path | None, home: Path
) -> ParsedFile | None:
    """Run the text pipeline on one file's content; `None` for a non-text file.

    Args:
        raw: the file as read.
        path: the path it was loaded by (reported as `MemoryFile.path`).
        file_type: its type.
        include_base: the real path whose folder relative includes start from;
            `None` disables includes (index files get none).
        home: what `~/` means in includes.
    """
    if not _is_text_file(path):
        return None
    frontmatter, content = parse_frontmatter(raw)
    has_comment = "<!--" in content
    tokens = None
    lexed = content
    if has_comment or include_base is not None:
        # The parser sees LF endings; the content keeps its own unless it is rebuilt
        # from the parse, which happens only when it holds a comment opener.
        lexed = markdown.normalize_newlines(content)
        tokens = markdown.lex(lexed)
    if has_comment:
        content = markdown.strip_html_comments(lexed, tokens)
    includes: list[Path] = []
    if tokens is not None and include_base is not None:
        includes = markdown.include_paths(tokens, include_base.parent, home)
    extra: dict[str, Any] = {}
    if file_type in INDEX_TYPES:
        truncation = truncate_entrypoint_content(content)
        content = truncation.content
        extra = {
            "line_count": truncation.line_count,
            "byte_count": truncation.byte_count,
            "was_line_truncated": truncation.was_line_truncated,
            "was_byte_truncated": truncation.was_byte_truncated,
        }
    differs = content != raw
    memory_file = MemoryFile(
        path=path,
        type=file_type,
        content=content,
        globs=_globs(frontmatter),
        content_differs_from_disk=differs,
        raw_content=raw if differs else None,
        **extra,
    )
    return ParsedFile(memory_file, tuple(includes))


@dataclass
class Loader:
    """One discovery pass: processed-path set, env, and the conditional rules set aside."""

    env: StartupEnv
    processed: set[str] = field(default_factory=set)
    conditional: list[MemoryFile] = field(default_factory=list)

    def _seen(self, path: Path) -> bool:
        if normalize_for_comparison(path) in self.processed:
            return True
        if self.env.quirk_symlink_reload:
            return False
        real, _ = resolve(path)
        return normalize_for_comparison(real) in self.processed

    def load(
        self,
        path: Path,
        file_type: MemoryFileType,
        *,
        include_external: bool,
        depth: int = 0,
        parent: Path | None = None,
    ) -> list[MemoryFile]:
        """`path` followed by its includes, depth first, each file once per pass.

        Args:
            path: the file to load.
            file_type: its type, inherited by its includes.
            include_external: whether includes outside `cwd` may load.
            depth: include nesting of `path` (0 for a file found by discovery).
            parent: the file that included `path`.
        """
        if depth >= MAX_INCLUDE_DEPTH or self._seen(path):
            return []
        if is_excluded(path, file_type, self.env.claude_md_excludes):
            return []
        real, is_link = resolve(path, nfc=self.env.quirk_nfd_rules_folder_skipped)
        # Marked processed before reading, so a missing or empty file is not retried.
        self.processed.add(normalize_for_comparison(path))
        if is_link:
            self.processed.add(normalize_for_comparison(real))
        raw = _read_text(path)
        if raw is None:
            return []
        try:
            parsed = parse_memory_file(raw, path, file_type, include_base=real,
                                       home=self.env.home)
        except ValueError:
            # An include path with a NUL byte makes the system's path expansion throw
            # while the file is parsed, and the whole file is given up.
            return []
        if parsed is None or not js_trim(parsed.file.content):
            return []
        head = parsed.file
        if parent is not None:
            head = replace(head, parent=parent)
        result = [head]
        for target in parsed.includes:
            if not include_external and not path_within(target, self.env.cwd):
                continue
            result += self.load(
                target,
                file_type,
                include_external=include_external,
                depth=depth + 1,
                parent=path,
            )
        return result

    def load_index(self, path: Path, file_type: MemoryFileType) -> list[MemoryFile]:
        """An index file: no includes, truncated. An empty or whitespace-only index is
        still listed (with empty content, so it renders no block), as the system lists
        it."""
        key = normalize_for_comparison(path)
        if key in self.processed:
            return []
        raw = _read_text(path)
        if raw is None:
            return []
        parsed = parse_memory_file(raw, path, file_type, include_base=None, home=self.env.home)
        if parsed is None:
            return []
        self.processed.add(key)
        return [parsed.file]

    def load_rules(
        self,
        rules_dir: Path,
        file_type: MemoryFileType,
        *,
        include_external: bool,
        visited: set[str] | None = None,
    ) -> list[MemoryFile]:
        """Every `*.md` under `rules_dir`, recursively, in byte order of names.

        Symlinked folders are followed; a folder met again (by any path) is not
        re-entered. Rules with `paths:` frontmatter go to `self.conditional`.

        With `quirk_nfd_rules_folder_skipped` (faithful), paths resolve to their NFC
        form as in the system, so an entry whose name is not NFC looks like a symlink
        to a file that does not exist; its stat fails, and that failure drops the
        whole folder's rules (files already read stay marked as processed).
        """
        visited = set() if visited is None else visited
        if str(rules_dir) in visited:
            return []
        nfc = self.env.quirk_nfd_rules_folder_skipped
        real_dir, is_link = resolve(rules_dir, nfc=nfc)
        visited.add(str(rules_dir))
        if is_link:
            visited.add(str(real_dir))
        try:
            names = sorted(os.listdir(real_dir), key=os.fsencode)
        except OSError:
            return []
        result: list[MemoryFile] = []
        conditional_before = len(self.conditional)
        for name in names:
            entry = rules_dir / name
            real_entry, entry_is_link = resolve(entry, nfc=nfc)
            try:
                mode = os.stat(real_entry).st_mode if entry_is_link else os.lstat(entry).st_mode
            except OSError:
                if nfc:
                    del self.conditional[conditional_before:]
                    return []
                continue
            if stat.S_ISDIR(mode):
                result += self.load_rules(
                    real_entry, file_type, include_external=include_external, visited=visited
                )
            elif stat.S_ISREG(mode) and name.endswith(".md"):
                loaded = self.load(real_entry, file_type, include_external=include_external)
                result += [f for f in loaded if f.globs is None]
                self.conditional += [f for f in loaded if f.globs is not None]
        return result


def unique_paths(files: Iterable[MemoryFile]) -> list[str]:
    """Real paths of `files`, for checks that no file loaded twice."""
    return [str(resolve(f.path)[0]) for f in files]
