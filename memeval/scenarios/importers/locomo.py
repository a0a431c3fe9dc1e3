"""Import LoCoMo (long two-person conversations with QA) as memdirs and scenarios.

One scenario per conversation sample. Its memdir holds one memory per session
(summary and observations) or one per observation; a question's gold memories are
the files holding its evidence turns (`D<session>:<turn>`). Evidence that points at
no turn, or at a turn no memory holds, is reported and dropped; a question left
with no evidence is reported and dropped. Evidence ids are normalised (`D30:05` ->
`D30:5`, `D:11:26` -> `D11:26`); an item that is no id at all is listed.

Categories are named by `CATEGORY_NAMES` (the dataset's integers, as the data and
most evaluations read them: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial). Projects disagree here: the paper lists the types in another
order, and some tools number them in that order. The raw number is kept as the tag
`locomo-<n>`, so a different mapping is one filter away. Category 5 questions have
no answer in the conversation (the right move is to abstain); they are tagged
`adversarial`, and `--exclude-tag adversarial` leaves them out.
The dataset is not shipped: users bring their own copy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from memeval.errors import MemevalError
from memeval.scenarios.importers._common import (
    DESCRIPTION_CHARS,
    ImportReport,
    MemorySpec,
    TurnSpec,
    memory_text,
    one_line,
    read_json,
    safe_id,
    write_scenario,
)

Granularity = Literal["session", "observation"]
GRANULARITIES: tuple[str, ...] = ("session", "observation")

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D:?(\d+):(\d+)")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                  5: "adversarial"}
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"), 1)}
_DATE_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_DATE_ONLY = re.compile(r"^\s*(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)


def parse_locomo_datetime(text: str) -> datetime | None:
    """`1:56 pm on 8 May, 2023` (or `8 May, 2023`) as UTC; `None` if it is neither."""
    match = _DATE_TIME.match(text or "")
    if match:
        hour, minute, half, day, month, year = match.groups()
        month_no = _MONTHS.get(month.lower()) or _MONTHS.get(_full_month(month))
        if month_no is None:
            return None
        h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
        try:
            return datetime(int(year), month_no, int(day), h, int(minute), tzinfo=UTC)
        except ValueError:
            return None
    match = _DATE_ONLY.match(text or "")
    if match:
        day, month, year = match.groups()
        month_no = _MONTHS.get(month.lower()) or _MONTHS.get(_full_month(month))
        if month_no is None:
            return None
        try:
            return datetime(int(year), month_no, int(day), tzinfo=UTC)
        except ValueError:
            return None
    return None


def _full_month(abbreviation: str) -> str:
    prefix = abbreviation.lower()[:3]
    return next((m for m in _MONTHS if m.startswith(prefix)), "")


def _observations(sample: Mapping[str, Any], session: int) -> list[tuple[str, str, list[str]]]:
    """`(speaker, fact, source dia ids)` for one session, in file order."""
    block = (sample.get("observation") or {}).get(f"session_{session}_observation") or {}
    out: list[tuple[str, str, list[str]]] = []
    if not isinstance(block, Mapping):
        return out
    for speaker, facts in block.items():
        for fact in facts or []:
            if isinstance(fact, list | tuple) and fact:
                text = str(fact[0])
                sources = fact[1] if len(fact) > 1 else []
                ids = sources if isinstance(sources, list) else [sources]
                dia = [d for s in ids for d in _split_ids(str(s))]
            else:
                text, dia = str(fact), []
            out.append((str(speaker), text, dia))
    return out


def _split_ids(text: str) -> list[str]:
    """Every `D<session>:<turn>` id in `text`, leading zeros and stray colons removed."""
    return [f"D{int(s)}:{int(t)}" for s, t in _DIA.findall(text)]


def _normal_id(dia: str) -> str:
    ids = _split_ids(dia)
    return ids[0] if ids else dia.strip()


class _Sample:
    """One conversation turned into memories, with a map from dia id to files."""

    def __init__(self, sample: Mapping[str, Any], index: int, granularity: Granularity,
                 dropped: list[str]) -> None:
        self.sample_id = str(sample.get("sample_id") or f"sample-{index}")
        where = f"sample {index} ({self.sample_id})"
        conversation = sample.get("conversation")
        if not isinstance(conversation, Mapping):
            raise MemevalError(f"{where}: no `conversation` mapping")
        self.speakers = (str(conversation.get("speaker_a", "A")),
                         str(conversation.get("speaker_b", "B")))
        sessions = sorted(int(m.group(1)) for key in conversation
                          if (m := _SESSION_KEY.match(key)))
        if not sessions:
            raise MemevalError(f"{where}: the conversation has no session_<n>")
        self.turn_ids: set[str] = set()
        self.files_for_dia: dict[str, list[str]] = {}
        self.memories: list[MemorySpec] = []
        summaries = sample.get("session_summary") or {}
        previous: datetime | None = None
        for number in sessions:
            turns = conversation.get(f"session_{number}") or []
            raw_date = str(conversation.get(f"session_{number}_date_time", ""))
            when = parse_locomo_datetime(raw_date)
            if when is None:
                when = (previous + timedelta(days=1)) if previous else \
                    datetime(2000, 1, 1, tzinfo=UTC)
                dropped.append(f"{self.sample_id}: session {number} date {raw_date!r} is not "
                               f"'h:mm am on d Month, yyyy'; used {when:%Y-%m-%d}")
            previous = when
            turn_text = {}
            for turn in turns:
                if isinstance(turn, Mapping) and turn.get("dia_id"):
                    dia = _normal_id(str(turn["dia_id"]))
                    self.turn_ids.add(dia)
                    turn_text[dia] = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
            summary = str(summaries.get(f"session_{number}_summary") or "").strip()
            observations = _observations(sample, number)
            if granularity == "session":
                self._session_memory(number, raw_date, when, summary, observations, turn_text)
            else:
                self._observation_memories(number, raw_date, when, observations, turn_text)
        self.last = previous or datetime(2000, 1, 1, tzinfo=UTC)

    def _add(self, memory: MemorySpec, dia_ids: list[str]) -> None:
        self.memories.append(memory)
        for dia in dia_ids:
            bucket = self.files_for_dia.setdefault(dia, [])
            if memory.filename not in bucket:
                bucket.append(memory.filename)

    def _session_memory(self, number: int, raw_date: str, when: datetime, summary: str,
                        observations: list[tuple[str, str, list[str]]],
                        turn_text: Mapping[str, str]) -> None:
        a, b = self.speakers
        title = f"{a} and {b}, session {number}"
        if summary:
            description = one_line(summary, DESCRIPTION_CHARS)
        else:  # no summary: the opening lines are the best hint there is
            description = one_line(" ".join(list(turn_text.values())[:3]), DESCRIPTION_CHARS)
        body = [f"# {title} ({raw_date})", ""]
        if summary:
            body += [summary, ""]
        if observations:
            body += ["## Observations", ""]
            body += [f"- {speaker}: {fact}" + (f" ({', '.join(dia)})" if dia else "")
                     for speaker, fact, dia in observations]
        filename = f"session-{number:02d}.md"
        self._add(MemorySpec(filename, memory_text(title, description, "user", "\n".join(body)),
                             when, title, description),
                  list(turn_text))  # every turn of the session lives in this memory

    def _observation_memories(self, number: int, raw_date: str, when: datetime,
                              observations: list[tuple[str, str, list[str]]],
                              turn_text: Mapping[str, str]) -> None:
        for k, (speaker, fact, dia) in enumerate(observations, 1):
            title = f"{speaker}, session {number}, fact {k}"
            description = one_line(fact, DESCRIPTION_CHARS)
            body = [fact, "", f"Said in session {number} ({raw_date})."]
            body += [f"> {dia_id} {turn_text[dia_id]}" for dia_id in dia if dia_id in turn_text]
            filename = f"session-{number:02d}/fact-{k:03d}.md"
            self._add(MemorySpec(filename, memory_text(title, description, "user",
                                                       "\n".join(body)), when, title,
                                 description), dia)


def import_locomo(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                  granularity: Granularity = "session", now: datetime | None = None,
                  overwrite: bool = False) -> ImportReport:
    """Write one scenario per LoCoMo conversation.

    Args:
        path: the LoCoMo JSON file (a list of samples).
        out: output folder; gets `scenarios/` and `memdirs/`.
        granularity: `session` (one memory per session: summary and observations) or
            `observation` (one memory per observed fact).
        now: the clock of every scenario; default one day after its last session.
        overwrite: replace earlier output of the same ids.

    Raises:
        MemevalError: the file is not LoCoMo JSON, or output exists without `overwrite`.
    """
    if granularity not in GRANULARITIES:
        raise MemevalError(f"granularity must be session or observation, got {granularity!r}")
    data = read_json(path, "LoCoMo")
    if not isinstance(data, list):
        raise MemevalError(f"{path}: a LoCoMo file is a JSON list of samples, got "
                           f"{type(data).__name__}")
    out = Path(out)
    dropped: list[str] = []
    written: list[Path] = []
    memories = turns_kept = 0
    for index, sample in enumerate(data):
        if not isinstance(sample, Mapping):
            dropped.append(f"sample {index}: not an object; skipped")
            continue
        try:
            built = _Sample(sample, index, granularity, dropped)
        except MemevalError as exc:
            dropped.append(f"{exc}; skipped")
            continue
        turns = _questions(sample, built, granularity, dropped)
        if not turns:
            dropped.append(f"{built.sample_id}: no question with usable evidence; skipped")
            continue
        scenario_id = safe_id(f"locomo-{built.sample_id}")
        clock = now or (built.last + timedelta(days=1))
        written.append(write_scenario(
            out, scenario_id, description=f"LoCoMo {built.sample_id}: {built.speakers[0]} and "
            f"{built.speakers[1]}, one memory per {granularity}", now=clock,
            memories=built.memories, turns=turns, source=f"LoCoMo ({Path(path).name})",
            overwrite=overwrite))
        memories += len(built.memories)
        turns_kept += len(turns)
    return ImportReport(tuple(written), memories, turns_kept, tuple(dropped))


def _questions(sample: Mapping[str, Any], built: _Sample, granularity: Granularity,
               dropped: list[str]) -> list[TurnSpec]:
    turns: list[TurnSpec] = []
    for number, qa in enumerate(sample.get("qa") or [], 1):
        where = f"{built.sample_id} q{number}"
        if not isinstance(qa, Mapping) or not str(qa.get("question") or "").strip():
            dropped.append(f"{where}: no question text; dropped")
            continue
        evidence = []
        for item in qa.get("evidence") or []:
            ids = _split_ids(str(item))
            if not ids:
                dropped.append(f"{where}: evidence {item!r} is not a D<session>:<turn> id; "
                               "evidence dropped")
            evidence += ids
        if not evidence:
            dropped.append(f"{where}: empty evidence; dropped")
            continue
        files: list[str] = []
        kept: list[str] = []
        for dia in dict.fromkeys(evidence):
            if dia not in built.turn_ids:
                dropped.append(f"{where}: evidence {dia} is not a turn of the conversation; "
                               "evidence dropped")
                continue
            holders = built.files_for_dia.get(dia, [])
            if not holders:
                dropped.append(f"{where}: evidence {dia} is in no {granularity} memory; "
                               "evidence dropped")
                continue
            kept.append(dia)
            files.extend(f for f in holders if f not in files)
        if not files:
            dropped.append(f"{where}: none of its evidence could be placed; dropped")
            continue
        number_tag, name = _category(qa.get("category"))
        answer = qa.get("answer")  # category 5 has none; its adversarial_answer is a trap
        turns.append(TurnSpec(
            id=f"q{number}", query=str(qa["question"]).strip(), category=f"locomo-{name}",
            why=f"evidence {', '.join(kept)} is in {', '.join(files)}", relevant=files,
            answer=None if answer is None else str(answer),
            tags=["locomo", number_tag, *(["adversarial"] if name == "adversarial" else [])]))
    return turns


def _category(raw: Any) -> tuple[str, str]:
    """(`locomo-<n>` tag, category name) of a QA item's integer category."""
    try:
        number = int(raw)
    except (TypeError, ValueError):
        return "locomo-unknown", "uncategorized"
    return f"locomo-{number}", CATEGORY_NAMES.get(number, f"category-{number}")
