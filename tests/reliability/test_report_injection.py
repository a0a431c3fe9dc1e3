"""Security: memory text, queries and selector names are data in the HTML report,
never markup or script, whatever they contain."""

from __future__ import annotations

import re
from pathlib import Path

from memeval.log import REPORT_FILE
from memeval.report import RunPage
from memeval.report._html import unpack_json
from memeval.run.config import RunConfig
from memeval.run.evaluate import evaluate
from tests.reliability._scenario import SCENARIO

PAYLOAD = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"


def test_hostile_text_is_escaped_in_the_report(tmp_path: Path) -> None:
    text = SCENARIO.format(id="xss").replace(
        "description: checkout latency dashboard lives in grafana under shop/checkout",
        f"description: \"checkout dashboard {PAYLOAD}\"").replace(
        "query: (xss) where is the checkout latency dashboard?",
        f"query: \"(xss) where is the checkout dashboard {PAYLOAD}\"")
    (tmp_path / "s.yaml").write_text(text)
    evaluate(RunConfig(scenarios=(str(tmp_path / "s.yaml"),), selectors=("bm25", "recency")),
             tmp_path / "run", progress=False, page=RunPage())
    html = (tmp_path / "run" / REPORT_FILE).read_text(encoding="utf-8")
    # The turn table's data travels packed (gzip + base64); unpacked, it holds the text.
    block = re.search(r'<script type="application/json" id="turn-data">(.*?)</script>', html,
                      re.S)
    assert block, "the turn data block is missing"
    strings = "\n".join(unpack_json(block.group(1))["strings"])
    assert "alert(1)" in strings and "alert(2)" in strings, "the payload must reach the report"
    for raw in ("<script>alert(1)", "<img src=x", "</script><script>"):
        assert raw not in html, f"unescaped {raw!r} in the report"
