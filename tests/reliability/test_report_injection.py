"""Security: memory text, queries and selector names are data in the HTML report,
never markup or script, whatever they contain."""

from __future__ import annotations

from pathlib import Path

from memeval.evaluate import evaluate
from memeval.results import REPORT_FILE
from memeval.run_config import RunConfig
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
             tmp_path / "run", progress=False)
    html = (tmp_path / "run" / REPORT_FILE).read_text(encoding="utf-8")
    assert "alert(1)" in html and "alert(2)" in html, "the payload must reach the report"
    for raw in ("<script>alert(1)", "<img src=x", "</script><script>"):
        assert raw not in html, f"unescaped {raw!r} in the report"
