"""Import LongMemEval (chat histories with one question each) as scenarios.

Each record becomes one scenario with one turn: its haystack sessions become one
memory each (dated by `haystack_dates`), and the gold memories are the sessions in
`answer_session_ids`. Files are named by position only (`session-007.md`): the
dataset's session ids can spell out which ones hold the answer (`answer_...`), and
the filename is shown to the selector. The dataset is not shipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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

REQUIRED = ("question_id", "question_type", "question", "question_date",
            "haystack_session_ids", "haystack_dates", "haystack_sessions",
            "answer_session_ids")
_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([A-Za-z]+\))?"
                   r"(?:\s+(\d{1,2}):(\d{2}))?\s*$")


def parse_longmemeval_date(text: str) -> datetime | None:
    """`2023/05/30 (Tue) 23:40` as UTC; `None` if it is not in that shape."""
    match = _DATE.match(str(text or ""))
    if not match:
        return None
    year, month, day, hour, minute = match.groups()
    try:
        return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                        tzinfo=UTC)
    except ValueError:
        return None


def _session_memory(index: int, session: Any, when: datetime, raw_date: str) -> MemorySpec:
    messages = [m for m in session if isinstance(m, Mapping)] if isinstance(session, list) \
        else []
    user_text = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    description = one_line(user_text or "an empty chat session", DESCRIPTION_CHARS)
    title = f"chat session {index + 1} ({raw_date})"
    body = [f"# {title}", ""]
    for message in messages:  # has_answer flags are gold; they stay out of the memory
        body += [f"**{message.get('role', '?')}:** {str(message.get('content', '')).strip()}", ""]
    return MemorySpec(f"session-{index + 1:03d}.md",
                      memory_text(title, description, "user", "\n".join(body)), when, title,
                      description)


def import_longmemeval(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                       limit: int | None = None, overwrite: bool = False) -> ImportReport:
    """Write one scenario per LongMemEval record.

    Args:
        path: a LongMemEval JSON file (a list of records).
        out: output folder; gets `scenarios/` and `memdirs/`.
        limit: import only the first N records.
        overwrite: replace earlier output of the same ids.

    Raises:
        MemevalError: the file is not LongMemEval JSON, or output exists without
            `overwrite`.
    """
    data = read_json(path, "LongMemEval")
    if not isinstance(data, list):
        raise MemevalError(f"{path}: a LongMemEval file is a JSON list of records, got "
                           f"{type(data).__name__}")
    out = Path(out)
    dropped: list[str] = []
    written: list[Path] = []
    memories = turns = 0
    for index, record in enumerate(data[:limit] if limit is not None else data):
        where = f"record {index}"
        if not isinstance(record, Mapping):
            dropped.append(f"{where}: not an object; skipped")
            continue
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            dropped.append(f"{where} ({record.get('question_id', '?')}): missing "
                           f"{', '.join(missing)}; skipped")
            continue
        qid = str(record["question_id"])
        where = f"{qid}"
        ids = list(record["haystack_session_ids"] or [])
        dates = list(record["haystack_dates"] or [])
        sessions = list(record["haystack_sessions"] or [])
        if not (len(ids) == len(dates) == len(sessions)) or not ids:
            dropped.append(f"{where}: haystack_session_ids, haystack_dates and "
                           f"haystack_sessions differ in length ({len(ids)}, {len(dates)}, "
                           f"{len(sessions)}) or are empty; skipped")
            continue
        now = parse_longmemeval_date(record["question_date"])
        parsed = [parse_longmemeval_date(d) for d in dates]
        if now is None:
            known = [p for p in parsed if p is not None]
            now = (max(known) + timedelta(days=1)) if known else datetime(2023, 6, 1, tzinfo=UTC)
            dropped.append(f"{where}: question_date {record['question_date']!r} is not "
                           f"'yyyy/mm/dd (Day) hh:mm'; used {now:%Y-%m-%d}")
        built: list[MemorySpec] = []
        files_for_id: dict[str, list[str]] = {}
        for position, (sid, raw, when, session) in enumerate(zip(ids, dates, parsed, sessions,
                                                                 strict=True)):
            if when is None:
                when = now - timedelta(days=len(ids) - position)
                dropped.append(f"{where}: haystack date {raw!r} unreadable; used "
                               f"{when:%Y-%m-%d}")
            memory = _session_memory(position, session, when, str(raw))
            built.append(memory)
            files_for_id.setdefault(str(sid), []).append(memory.filename)
        relevant: list[str] = []
        for sid in record["answer_session_ids"] or []:
            holders = files_for_id.get(str(sid))
            if not holders:
                dropped.append(f"{where}: answer session {sid} is not in the haystack; "
                               "evidence dropped")
                continue
            relevant.extend(f for f in holders if f not in relevant)
        if not relevant:
            dropped.append(f"{where}: no answer session in the haystack; skipped")
            continue
        qtype = str(record["question_type"])
        tags = ["longmemeval"] + (["abstention"] if qid.endswith("_abs") else [])
        answer = record.get("answer")
        turn = TurnSpec(id="q1", query=str(record["question"]).strip(),
                        category=f"longmemeval-{qtype}",
                        why=f"answer sessions {', '.join(map(str, record['answer_session_ids']))}"
                            f" are {', '.join(relevant)}",
                        relevant=relevant, answer=None if answer is None else str(answer),
                        tags=tags)
        written.append(write_scenario(
            out, safe_id(f"longmemeval-{qid}"), description=f"LongMemEval {qid} ({qtype}): "
            f"{len(built)} chat sessions", now=now, memories=built, turns=[turn],
            source=f"LongMemEval ({Path(path).name})", overwrite=overwrite))
        memories += len(built)
        turns += 1
    return ImportReport(tuple(written), memories, turns, tuple(dropped))
