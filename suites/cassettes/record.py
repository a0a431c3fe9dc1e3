"""Re-record `judged.jsonl`, the judged suite's cassette, against the fake Messages API.

The answers come from `memeval.testing.FakeMessagesServer`'s deterministic keyword
model, so recording needs no key and no network, and the same fixtures and prompts
always give the same bytes: exchanges are sorted by request key, and the two fields
that depend on call order (the message id, and the fake prompt cache's split of
input tokens) are made functions of the request alone.

    python suites/cassettes/record.py                       # the bundled fixtures
    python suites/cassettes/record.py --out x.jsonl -- --memeval-scenarios my/*.yaml

Arguments after `--` go to pytest. A cassette recorded against the real API (with
`--memeval-record` and a key) can be normalized the same way with `--normalize FILE`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent / "test_selection_judged.py"
DEFAULT_OUT = HERE / "judged.jsonl"
FAKE_KEY = "memeval-fake-recording-key"  # never a real key; scrubbed from the text anyway


def normalize_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The exchange with its order-dependent fields fixed by the request key.

    The server it was recorded from is dropped on purpose: the fake's answers become a
    stand-in that replays for any server, which is what a test suite's cassette is.
    """
    response = dict(entry["response"])
    response["id"] = f"msg_cassette_{entry['key'][:24]}"
    usage = dict(response.get("usage") or {})
    total = sum(int(usage.get(k) or 0) for k in
                ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    usage.update(input_tokens=total, cache_read_input_tokens=0, cache_creation_input_tokens=0)
    response["usage"] = usage
    return {"key": entry["key"], "request": entry["request"], "response": response}


def normalize(source: Path, target: Path) -> int:
    """Write `source`'s exchanges to `target` sorted by key; returns how many."""
    entries: dict[str, dict[str, Any]] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            entries.setdefault(entry["key"], normalize_entry(entry))
    text = "".join(json.dumps(entries[k], ensure_ascii=False, sort_keys=True) + "\n"
                   for k in sorted(entries))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return len(entries)


def record(out: Path, pytest_args: list[str]) -> int:
    """Run the judged suite against the fake server with recording on, then normalize."""
    import pytest

    from memeval.testing import FakeMessagesServer

    with tempfile.TemporaryDirectory(prefix="memeval-cassette-") as tmp:
        raw = Path(tmp) / "raw.jsonl"
        saved = {k: os.environ.get(k) for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
        with FakeMessagesServer() as server:
            os.environ.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=FAKE_KEY)
            try:
                code = pytest.main([str(SUITE), "-q", "-p", "no:cacheprovider",
                                    "--memeval-record", str(raw),
                                    "--memeval-report", str(Path(tmp) / "run"), *pytest_args])
            finally:
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
        if code != 0 or not raw.exists():
            print(f"recording failed (pytest exit code {code}); {out} left unchanged",
                  file=sys.stderr)
            return int(code) or 1
        count = normalize(raw, out)
    print(f"{out}: {count} exchanges")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="cassette to write")
    parser.add_argument("--normalize", type=Path, default=None,
                        help="only normalize this recorded cassette into --out")
    args, rest = parser.parse_known_args(argv)
    rest = [a for a in rest if a != "--"]
    if args.normalize is not None:
        print(f"{args.out}: {normalize(args.normalize, args.out)} exchanges")
        return 0
    return record(args.out, rest)


if __name__ == "__main__":
    sys.exit(main())
