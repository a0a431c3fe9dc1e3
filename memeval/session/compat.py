"""Compatibility switches: where the faithful reference does something odd, on purpose.

Claude Code's recall has a few behaviours that look like bugs but are what the system
does (SPEC §2.2, §2.6). memeval reproduces them by default so its numbers describe
the real system, and keeps each behind one named switch so the invariant suite can
name the quirk that breaks an invariant, and so a `hardened` preset can show what
the design would guarantee without them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal

CompactionMode = Literal["restore", "clear"]
COMPACTION_MODES: tuple[CompactionMode, ...] = ("restore", "clear")
"""`restore`: what Claude Code does (the read-file state is cleared, then its five
newest entries are read back in); `clear`: everything is forgotten, both presets'
default until the bundled compaction scenarios are relabelled for `restore`."""

# Switches that widen memeval beyond the system; off in both presets.
EXTENSIONS: tuple[str, ...] = ("extra_file_tools",)
_MODE_FIELDS = ("compaction",)


@dataclass(frozen=True)
class Compat:
    """Which faithful quirks are on. `True` means "behave like Claude Code".

    Args:
        duplicate_names_surface_twice: the selector's answer is not deduplicated, so a
            name it repeats surfaces that file twice in one turn (and counts twice in
            the session budget). Off: the first occurrence wins.
        quoted_agent_prefix_quirk: the first `agent-` is stripped from every mention,
            quoted ones too, so `@"my-agent-x (agent)"` looks up type `my-x` and
            misses, and the turn falls back to the project memdir. Off: a quoted
            mention names its type as written.
        agent_mentioned_twice_searched_twice: `@agent-x` and `@"x (agent)"` in one
            query are two distinct mentions of one agent, so its memdir is searched
            (and the selector called) twice and one file can surface twice. Off: each
            memdir is searched once, in first-mention order.
        exact_200_lines_marked_truncated: a file of exactly 200 newline-terminated
            lines counts 201 lines (the empty fragment after the last newline) and
            gets the "first 200 lines" note although nothing was cut. Off: such a
            file is surfaced whole, without a note.
        follow_symlinks_out_of_memdir: the scan follows symlinked folders and files
            wherever they point, so a link inside a memdir can make a file outside it
            a candidate, then surface it. Off: only entries whose real path stays
            inside the memdir's real path are listed, read or surfaced.
        extra_file_tools: an extension, not a quirk (off in both presets): successful
            `MultiEdit`, `read_file`, `write_file` and `edit_file` uses also put their
            file into the read-file state, for scenarios taken from other agents'
            logs. Claude Code counts only Read, Write, Edit and NotebookEdit.
        compaction: what `Session.compact()` does to the read-file state: `restore`
            (the system's behaviour) or `clear` (everything forgotten). Both presets
            still `clear` until the bundled compaction scenarios are relabelled and
            their judged cassettes re-recorded (they were written for a clean slate);
            `+compaction=restore` asks for the system's behaviour.
    """

    duplicate_names_surface_twice: bool = True
    quoted_agent_prefix_quirk: bool = True
    agent_mentioned_twice_searched_twice: bool = True
    exact_200_lines_marked_truncated: bool = True
    follow_symlinks_out_of_memdir: bool = True
    extra_file_tools: bool = False
    compaction: CompactionMode = "clear"

    @classmethod
    def faithful(cls) -> Compat:
        """Every quirk on: the behaviour of Claude Code v2.1.88."""
        return cls()

    @classmethod
    def hardened(cls) -> Compat:
        """Every quirk off: the preset under which every SPEC §3 invariant holds."""
        return cls(**{name: False for name in cls.quirk_names()})

    @classmethod
    def quirk_names(cls) -> tuple[str, ...]:
        """The quirks: on in `faithful`, off in `hardened`."""
        return tuple(f.name for f in fields(cls)
                     if f.name not in EXTENSIONS and f.name not in _MODE_FIELDS)

    @classmethod
    def switch_names(cls) -> tuple[str, ...]:
        """Every on/off switch a spec string may toggle: the quirks and the extensions."""
        return (*cls.quirk_names(), *EXTENSIONS)

    @classmethod
    def from_spec(cls, spec: str | Compat | None) -> Compat:
        """`"faithful"`, `"hardened"`, or a preset plus overrides:
        `"hardened+duplicate_names_surface_twice"` turns that one quirk back on,
        `"faithful-quoted_agent_prefix_quirk"` turns one off,
        `"faithful+extra_file_tools"` turns an extension on, and
        `"faithful+compaction=clear"` picks a compaction mode."""
        from memeval.errors import MemevalError

        if spec is None:
            return cls.faithful()
        if isinstance(spec, Compat):
            return spec
        text = spec.strip()
        head, ops = _split_ops(text)
        presets = {"faithful": cls.faithful, "hardened": cls.hardened}
        if head not in presets:
            raise MemevalError(
                f"compat spec {spec!r}: unknown preset {head!r}; use 'faithful' or 'hardened'"
            )
        result = presets[head]()
        known = set(cls.switch_names())
        for sign, name in ops:
            if "=" in name:
                key, _, value = (part.strip() for part in name.partition("="))
                if key != "compaction" or sign != "+" or value not in COMPACTION_MODES:
                    raise MemevalError(
                        f"compat spec {spec!r}: {sign}{name!r} is not a setting; the one "
                        f"setting is '+compaction=<mode>' with mode one of {COMPACTION_MODES}"
                    )
                result = replace(result, compaction=value)
                continue
            if name not in known:
                raise MemevalError(
                    f"compat spec {spec!r}: unknown quirk {name!r}; known: {sorted(known)}"
                )
            result = replace(result, **{name: sign == "+"})
        return result

    def with_quirks(self, **switches: Any) -> Compat:
        return replace(self, **switches)

    @property
    def quirks_on(self) -> tuple[str, ...]:
        return tuple(name for name in self.quirk_names() if getattr(self, name))

    @property
    def preset_name(self) -> str:
        """`faithful`, `hardened`, or the nearer preset with its differences spelled out
        (a spec string `from_spec` reads back)."""
        on = set(self.quirks_on)
        every = set(self.quirk_names())
        if len(on) <= len(every) / 2:
            base, ops = "hardened", [f"+{n}" for n in self.quirk_names() if n in on]
        else:
            base, ops = "faithful", [f"-{n}" for n in self.quirk_names() if n not in on]
        ops += [f"+{n}" for n in EXTENSIONS if getattr(self, n)]
        if self.compaction != "clear":
            ops.append(f"+compaction={self.compaction}")
        return base + "".join(ops)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _split_ops(text: str) -> tuple[str, list[tuple[str, str]]]:
    ops: list[tuple[str, str]] = []
    head = ""
    i = 0
    while i < len(text) and text[i] not in "+-":
        head += text[i]
        i += 1
    while i < len(text):
        sign = text[i]
        i += 1
        name = ""
        while i < len(text) and text[i] not in "+-":
            name += text[i]
            i += 1
        ops.append((sign, name.strip()))
    return head.strip(), ops
