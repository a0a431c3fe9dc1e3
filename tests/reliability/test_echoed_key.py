"""A server that echoes the API key in its answers: no piece of it is stored anywhere."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.llm.cassette import MIN_SECRET_PIECE, scrub
from memeval.testing import FakeMessagesServer
from tests._doors import open_door
from tests.reliability._scenario import write_suite

KEY = "sk-ant-" + "echo-9f8e7d6c5b4a3210-secret-tail"  # built, so scanners see no key


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


ECHOES = {
    "whole": lambda: KEY,
    "partial": lambda: KEY[3:],
    "a piece": lambda: KEY[10:10 + MIN_SECRET_PIECE],
    "json-escaped": lambda: _escaped(KEY),
}


@pytest.mark.parametrize("how", list(ECHOES))
def test_an_echoed_key_reaches_no_artifact(how: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    echo = ECHOES[how]()

    def answer(body: dict) -> str:  # a valid answer that also carries the key
        return '{"selected_memories": ["testing.md"], "note": "your key is ' + echo + '"}'

    write_suite(tmp_path / "scenarios", 1)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    cache, tape, out = tmp_path / "c.sqlite", tmp_path / "tape.jsonl", tmp_path / "run"
    with FakeMessagesServer(answer) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        result = CliRunner().invoke(cli, [
            "run", "--quiet", "--scenarios", str(tmp_path / "scenarios" / "*.yaml"),
            "-s", "claude", "--cache", str(cache), "--record-cassette", str(tape),
            "--out", str(out)])
    assert result.exit_code in (0, 3), result.output
    pieces = {KEY[i:i + MIN_SECRET_PIECE] for i in range(len(KEY) - MIN_SECRET_PIECE + 1)}
    for path in [cache, tape, *out.iterdir()]:
        for text in _views(path.read_bytes().decode("utf-8", "replace")):
            assert not any(p in text for p in pieces), f"{how}: a key piece in {path.name}"
    assert "<redacted>" in (out / "results.jsonl").read_text()


def _views(raw: str) -> list[str]:
    """The text, and every string inside it that JSON (twice nested) decodes to."""
    out = [raw]

    def walk(value: object, depth: int) -> None:
        if isinstance(value, str):
            out.append(value)
            if depth < 2 and value.lstrip()[:1] in ("{", "["):
                with contextlib.suppress(ValueError):
                    walk(json.loads(value), depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v, depth)
        elif isinstance(value, list):
            for v in value:
                walk(v, depth)

    for line in raw.splitlines():
        try:
            walk(json.loads(line), 0)
        except ValueError:
            continue
    return out


def test_scrub_merges_overlapping_pieces() -> None:
    text = f"a {KEY} b {KEY[5:20]} c"
    scrubbed = scrub(text, (KEY,))
    assert KEY[5:13] not in scrubbed and scrubbed.startswith("a ") and scrubbed.endswith(" c")


@pytest.mark.parametrize(("usage", "fragment"), [
    ({"input_tokens": 10, "output_tokens": 1e308}, "output_tokens=1e+308"),
    ({"input_tokens": -400000, "output_tokens": 5}, "input_tokens=-400000"),
])
def test_hostile_usage_is_an_error_not_a_bill(usage: dict, fragment: str,
                                              tmp_path: Path) -> None:
    from memeval.llm import LLMRequest

    request = LLMRequest(model="claude-sonnet-4-6", max_tokens=50,
                         messages=({"role": "user", "content": "hi"},))
    with FakeMessagesServer(lambda body: {"usage": usage,
                                          "content": [{"type": "text", "text": "ok"}]}) as fake:
        door = open_door(fake.url, api_key="k", max_cost=0.012)
        answer = door.complete(request)
    assert not answer.ok and fragment in answer.error
    assert door.usage.cost_usd >= 0 and json.dumps(door.summary(), allow_nan=False)


def test_a_200_that_is_not_json_is_a_recorded_error(tmp_path: Path) -> None:
    from memeval.llm import LLMRequest
    from memeval.testing import Fault

    request = LLMRequest(model="claude-sonnet-4-6", max_tokens=50,
                         messages=({"role": "user", "content": "hi"},))
    with FakeMessagesServer() as fake:
        fake.inject(Fault("malformed"))
        door = open_door(fake.url, api_key="k", max_retries=0)
        answer = door.complete(request)
    assert not answer.ok and answer.record.error
    assert door.summary()["errors"] >= 1
