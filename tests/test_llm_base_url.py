"""A key in any part of a base URL is refused, alike for a spec's `base_url=` and both
providers' variables, before anything is written or printed (issue 37, item 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.errors import MemevalError
from memeval.llm.endpoint import Endpoint
from memeval.run.config import bundled_fixtures_dir

SECRET = "sk-" + "proj-Zx81Qa9Lm2Wv7Bn4Kc3Rt6Yp"  # built, so scanners see no key
SCENARIO = str(bundled_fixtures_dir() / "scenarios" / "a-dbt-warehouse.yaml")
HOST = "http://127.0.0.1:9"
URLS = {"userinfo": f"http://user:{SECRET}@127.0.0.1:9/v1",
        "path": f"{HOST}/v1/{SECRET}", "path, no prefix": f"{HOST}/v1/{SECRET[8:] * 2}",
        "query": f"{HOST}/v1?key={SECRET}", "fragment": f"{HOST}/v1#{SECRET}"}
WHERE = {"spec": None, "ANTHROPIC_BASE_URL": "claude", "OPENAI_BASE_URL": "openai:qwen3"}


@pytest.mark.parametrize("where", list(WHERE))
@pytest.mark.parametrize("shape", list(URLS))
def test_a_key_in_a_base_url_is_refused_and_never_shown(tmp_path: Path, monkeypatch,
                                                        where: str, shape: str) -> None:
    url = URLS[shape]
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a" * 20)
    monkeypatch.setenv("OPENAI_API_KEY", "b" * 20)
    if where == "spec":
        spec = f"openai:qwen3?base_url={url}"
    else:
        monkeypatch.setenv(where, url)
        spec = WHERE[where]
    out = tmp_path / "r"
    result = CliRunner().invoke(cli, ["run", "--quiet", "--no-cache", "--out", str(out),
                                      "--scenarios", SCENARIO, "-s", spec])
    assert result.exit_code == 2, result.output
    assert "127.0.0.1…" in result.output
    if where != "spec":
        assert f"${where} http://127.0.0.1…" in result.output  # names the variable
    for piece in (SECRET, SECRET[8:]):
        assert piece not in result.output
    written = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert not any(SECRET[8:] in p.read_text(errors="replace") for p in written)


def test_a_key_from_the_environment_is_refused_in_any_url_shape(monkeypatch) -> None:
    key = "Q" * 10 + "q" * 10 + "7" * 4  # no key prefix, and short of the long-token rule
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with pytest.raises(MemevalError, match="looks like a key"):
        Endpoint("openai", f"{HOST}/gateway/{key}/v1")


@pytest.mark.parametrize("url", [
    "https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/gw/openai",
    "https://example.openai.azure.com/openai/deployments/gpt-4o-2024-08-06",
    "http://localhost:11434/v1", "https://openrouter.ai/api/v1"])
def test_ordinary_gateway_paths_still_pass(url: str) -> None:
    assert Endpoint("openai", url).base_url == url
