"""Embed: the embedding selector's model, loaded and run, and what its extra installs.

The selector encodes each distinct description once (the vector cache), so a run's
cost is one model load plus one encode of every distinct text. This times both on
generated short descriptions, shows that a second pass through the cache encodes
nothing, and adds up the files that `memeval[embed]` installs on top of the core
(every distribution the extra needs that the core does not), against the 500 MB
the extra is held to. Without the extra, each figure is n/a and says how to get it.
"""

from __future__ import annotations

import math
import random
import time
from importlib import metadata

from packaging.requirements import Requirement  # pytest's dependency, so always here
from packaging.utils import canonicalize_name

from bench._core import Context, Figure
from memeval.selectors import embedding
from memeval.selectors.vectors import VectorCache

TARGET_INSTALLED_MB = 500.0
TARGET_ENCODE_MS = 1_000.0  # the DEFAULT size, cold: every text new to the cache
WORDS = ("run", "the", "test", "suite", "against", "postgres", "prefer", "short", "functions",
         "deploy", "needs", "a", "staging", "approval", "user", "likes", "terse", "answers",
         "rotate", "api", "token", "monthly", "lint", "with", "ruff", "before", "pushing",
         "cache", "invalidation", "on", "schema", "change", "flaky", "integration", "ci",
         "dashboard", "is", "built", "react", "and", "vite")


def descriptions(count: int, seed: int = 7) -> list[str]:
    """`count` distinct memory descriptions of 6-16 words, like a memdir's."""
    rng = random.Random(seed)
    return [f"{' '.join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))} (#{i})"
            for i in range(count)]


def _needed(requirement: str, extra: str = "") -> str | None:
    """The distribution `requirement` names, if it applies here (markers evaluated)."""
    parsed = Requirement(requirement)
    if parsed.marker is not None and not parsed.marker.evaluate({"extra": extra}):
        return None
    return canonicalize_name(parsed.name)


def _closure(roots: list[str]) -> set[str]:
    """Installed distributions reachable from `roots` through the requirements that apply."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo += [n for r in requires if (n := _needed(r)) is not None]
    return seen


DISTRIBUTION = "memeval-harness"  # pip's name for memeval (`memeval` on PyPI is another)


def extra_installed_mb(extra: str = "embed") -> tuple[float, list[str]]:
    """Megabytes of the distributions `memeval-harness[extra]` adds to the core install."""
    requires = metadata.requires(DISTRIBUTION) or []
    core = {n for r in requires if (n := _needed(r)) is not None}
    wanted = {n for r in requires if (n := _needed(r, extra)) is not None} - core
    added = sorted(_closure(list(wanted)) - _closure(list(core)) - {DISTRIBUTION})
    total = 0
    for name in added:
        for file in metadata.distribution(name).files or []:
            path = file.locate()
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6, added


def run(ctx: Context) -> list[Figure]:
    count = ctx.sizes.embed_texts
    if not embedding.embedding_available():
        why = f"memeval[embed] is not installed: {embedding.INSTALL_HINT}"
        return [Figure(name, math.nan, unit, target, note=why) for name, unit, target in (
            ("embed.installed_mb", "MB", TARGET_INSTALLED_MB),
            ("embed.load.seconds", "s", None),
            (f"embed.encode.{count}.ms", "ms", TARGET_ENCODE_MS),
            ("embed.rerun.encoded", "", 0.0))]

    mb, added = extra_installed_mb()
    embedding._load_encoder.cache_clear()  # time a real load, not the process's copy
    started = time.perf_counter()
    encoder = embedding.load_encoder()
    load_s = time.perf_counter() - started

    texts = descriptions(count)
    cache = VectorCache(embedding.model_name())  # in memory: the user's file is not touched
    started = time.perf_counter()
    cache.vectors(texts, encoder.encode)
    encode_ms = (time.perf_counter() - started) * 1e3
    first = cache.encoded
    cache.vectors(texts, encoder.encode)
    ctx.log(f"embed: {count} texts in {encode_ms:.0f} ms; extra adds {', '.join(added)}")
    return [
        Figure("embed.installed_mb", mb, "MB", TARGET_INSTALLED_MB,
               note=f"files of the {len(added)} distributions memeval[embed] adds to the core"),
        Figure("embed.load.seconds", load_s, "s",
               note="read the bundled token table and tokenizer, no network"),
        Figure(f"embed.encode.{count}.ms", encode_ms, "ms", TARGET_ENCODE_MS,
               note=f"{count} new short descriptions through the vector cache, one process"),
        Figure("embed.rerun.encoded", cache.encoded - first, "", 0.0, "==",
               note=f"the same {count} texts again: all from the cache"),
    ]
