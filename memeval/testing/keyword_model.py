"""A deterministic stand-in for Claude: answers by word overlap, so offline runs mean something.

It understands the two structured-output schemas memeval sends. For the selector
schema it picks manifest lines sharing words with the query, only those near the
best line (most shared first, at most five); for the judge schema it grades each
memory by the words it shares with the query. The same request always gets the same answer.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from memeval.memdir import MAX_SURFACED_PER_TURN

MAX_PICKS = MAX_SURFACED_PER_TURN  # the selector contract
KEEP_FRACTION = 0.6  # keep lines sharing at least this share of the best line's words
RELEVANT_OVERLAP = 2  # shared words for the judge's `relevant`; one gives `acceptable`

_STOPWORDS_TEXT = """
a an and are as at be before but by can do does for from has have how i if in into is it
its me my of on or our should so than that the their them then there these this to use
used using was we what when where which who why will with you your after about all any
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

MANIFEST_LINE = re.compile(
    r"^- (?:\[[^\]]+\] )?(?P<filename>.+?) \(\d{4}-\d\d-\d\dT[^)]*\)(?:: (?P<desc>.*))?$")
MEMORY_BLOCK = re.compile(r'<memory key="(?P<key>[^"]+)">\n?(?P<body>.*?)</memory>', re.S)
CANDIDATE_BLOCK = re.compile(r'<candidate key="(?P<key>[^"]+)">(?P<body>.*?)</candidate>', re.S)
QUERY_LINE = re.compile(r"(?:^|\n)Query: (?P<query>.*?)(?:\n\n|$)", re.S)
QUERY_TAG = re.compile(r"<query>\n?(?P<query>.*?)\n?</query>", re.S)


def words(text: str) -> set[str]:
    """Content words, lowercased, with a plural `s` dropped so `tests` meets `test`."""
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) < 3 or word in STOPWORDS:
            continue
        out.add(word[:-1] if len(word) > 4 and word.endswith("s") else word)
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [_text_of(m.get("content")) for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "user"]


SCHEMA_IN_PROMPT = "JSON schema:\n"  # how `structured=prompt` introduces the shape


def schema_source(body: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Where the request asks for its JSON shape, and the shape: the API's structured
    output (`output_config`), a forced tool (`tool`), the system prompt (`prompt`)."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        return "output_config", fmt.get("schema") or {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("input_schema"), dict):
            return "tool", tool["input_schema"]
    system = _text_of(body.get("system"))
    at = system.rfind(SCHEMA_IN_PROMPT)
    if at != -1:
        try:
            found, _ = json.JSONDecoder().raw_decode(system[at + len(SCHEMA_IN_PROMPT):])
        except json.JSONDecodeError:
            found = None
        if isinstance(found, dict):
            return "prompt", found
    return None, {}


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    return schema_source(body)[1]


def select_memories(body: dict[str, Any]) -> list[str]:
    """Filenames from the manifest(s) in the conversation that share words with the last query."""
    texts = _user_texts(body)
    match = QUERY_LINE.search(texts[-1]) if texts else None
    query = words(match.group("query")) if match else set()
    manifest: dict[str, str] = {}
    for text in texts:  # later manifests (a changed memdir) replace earlier ones
        lines = [MANIFEST_LINE.match(line) for line in text.splitlines()]
        found = {m.group("filename"): m.group("desc") or "" for m in lines if m}
        if found:
            manifest = found
    overlaps = [(len(query & (words(filename) | words(desc))), order, filename)
                for order, (filename, desc) in enumerate(manifest.items())]
    best = max((o for o, _, _ in overlaps), default=0)
    # like a cautious model: only the best-matching lines, never one shared word among many
    floor = max(1, math.ceil(best * KEEP_FRACTION))
    scored = sorted((-o, order, name) for o, order, name in overlaps if o >= floor)
    return [filename for _, _, filename in scored[:MAX_PICKS]]


def _grade(query: set[str], key: str, text: str) -> dict[str, str]:
    shared = sorted(query & (words(text) | words(key)))
    if len(shared) >= RELEVANT_OVERLAP:
        verdict = "relevant"
    elif shared:
        verdict = "acceptable"
    else:
        verdict = "irrelevant"
    reason = (f"It shares {', '.join(shared)} with the query." if shared
              else "It shares no content words with the query.")
    return {"key": key, "verdict": verdict, "reason": reason}


def judge_memories(body: dict[str, Any]) -> dict[str, Any]:
    """Verdicts for every `<memory>` (and `<candidate>`) block in the last user message."""
    texts = _user_texts(body)
    text = texts[-1] if texts else ""
    match = QUERY_TAG.search(text)
    query = words(match.group("query")) if match else set()
    out: dict[str, Any] = {"verdicts": [_grade(query, m.group("key"), m.group("body"))
                                        for m in MEMORY_BLOCK.finditer(text)]}
    if "candidates" in (schema_of(body).get("properties") or {}):
        out["candidates"] = [_grade(query, m.group("key"), m.group("body"))
                             for m in CANDIDATE_BLOCK.finditer(text)]
    return out


def keyword_model(body: dict[str, Any]) -> str:
    """The default FakeMessagesServer behaviour: request body -> answer text."""
    properties = schema_of(body).get("properties") or {}
    if "selected_memories" in properties:
        return json.dumps({"selected_memories": select_memories(body)})
    if "verdicts" in properties:
        return json.dumps(judge_memories(body))
    return "This is the keyword model of memeval's fake server."
