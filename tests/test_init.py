"""memeval init: the files it writes gate a user's selector in a repo outside memeval's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memeval.cli import cli


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pytest memory_eval` as the user types it, in their repository."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "memory_eval", *args],
                          cwd=folder, capture_output=True, text=True, timeout=300)


def test_init_writes_a_suite_that_passes_and_gates_outside_the_checkout(
        tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "memory_eval"
    assert {p.name for p in folder.rglob("*") if p.is_file()} == {
        "my_selector.py", "test_memory_selection.py", "example.yaml", "memeval.yml",
        "pytest.ini", "conftest.py"}
    run = pytest_in(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "memeval gate: PASS" in run.stdout
    summary = json.loads((tmp_path / "reports" / "memeval" / "summary.json").read_text())
    assert summary["selectors"] == ["mine"]
    gate = CliRunner().invoke(cli, ["gate", str(tmp_path / "reports" / "memeval"),
                                    "--min-recall", "0.5", "--no-write"])
    assert gate.exit_code == 0, gate.output
    parallel = pytest_in(tmp_path, "-n", "2")  # the xdist controller knows `mine` too
    assert parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert "memeval gate: PASS" in parallel.stdout

    again = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_a_selector_that_returns_nothing_fails_the_gate(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    mine = tmp_path / "memory_eval" / "my_selector.py"
    text = mine.read_text(encoding="utf-8")
    body = "        names = tuple(ranked[: self.k])\n"
    assert body in text
    mine.write_text(text.replace(body, "        names = ()\n"), encoding="utf-8")
    run = pytest_in(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "memeval gate: FAIL" in run.stdout
    assert "recall = 0.000 is below the minimum 0.500" in run.stdout
    gate = CliRunner().invoke(cli, ["gate", str(tmp_path / "reports" / "memeval"),
                                    "--min-recall", "0.5", "--no-write"])
    assert gate.exit_code == 1, gate.output


# -- what the workflow installs ---------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
# A pip line that would fetch the PyPI package named `memeval` (someone else's).
# Arguments up to a shell operator (`&&`, `|`, `;`) or comment are pip's; one of them
# naming `memeval` (with or without extras) fetches it from the index.
BARE = re.compile(r"pip install(?:[ \t]+[^\s&|;#]\S*)*?[ \t]+['\"]?memeval(\[[^\]]*\])?['\"]?"
                  r"(?=\s|$)")


def test_init_writes_the_source_memeval_came_from_into_the_workflow(tmp_path: Path) -> None:
    from memeval.cli.init import DISTRIBUTION, installed_source

    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    workflow = (tmp_path / "memory_eval" / "memeval.yml").read_text(encoding="utf-8")
    requirement, reachable = installed_source()
    assert requirement.startswith(DISTRIBUTION)
    assert f'MEMEVAL_SOURCE: "{requirement}"' in workflow
    assert 'pip install "$MEMEVAL_SOURCE"' in workflow and not BARE.search(workflow)
    assert ("which CI cannot reach" in result.output) is not reachable


def test_install_source_reads_the_pep_610_record() -> None:
    from memeval.cli.init import install_source

    git = {"url": "https://github.com/o/memeval", "vcs_info": {"vcs": "git",
                                                                "commit_id": "abc123"}}
    assert install_source(git, "0.1.0") == (
        "memeval-harness @ git+https://github.com/o/memeval@abc123", True)
    wheel = {"url": "https://example.org/memeval_harness-0.1.0-py3-none-any.whl",
             "archive_info": {}}
    assert install_source(wheel, "0.1.0") == (
        "memeval-harness @ https://example.org/memeval_harness-0.1.0-py3-none-any.whl", True)
    local = {"url": "file:///home/me/memeval", "dir_info": {"editable": True}}
    assert install_source(local, "0.1.0") == ("memeval-harness @ file:///home/me/memeval",
                                              False)
    assert install_source(None, "0.2.0") == ("memeval-harness==0.2.0", True)


def test_no_doc_example_or_template_installs_the_pypi_package_named_memeval() -> None:
    texts = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
             *sorted((REPO / "docs").glob("*.yml")),
             *sorted((REPO / "memeval" / "cli" / "_init_templates").iterdir()),
             *sorted(REPO.glob("examples/**/*"))]
    offenders = [f"{path.relative_to(REPO)}: {match.group(0)}" for path in texts
                 if path.is_file()
                 for match in BARE.finditer(path.read_text(encoding="utf-8"))]
    assert offenders == []
    assert BARE.search("pip install memeval pytest-xdist")  # the pattern does catch it
    assert BARE.search("pip install 'memeval[embed]'")
    assert not BARE.search('pip install -e ".[dev]" && memeval run')
    assert not BARE.search('pip install "memeval-harness @ git+https://x/memeval"')


def test_the_package_does_not_depend_on_what_it_never_imports() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "memeval-harness"
    assert project["scripts"]["memeval"] == "memeval.cli:main"
    runtime = {re.split(r"[<>=\[; ]", d, maxsplit=1)[0].lower()
               for d in project["dependencies"]}
    imported = subprocess.run(["grep", "-rlE", r"^\s*(import|from) hypothesis",
                               str(REPO / "memeval")], capture_output=True, text=True).stdout
    assert "hypothesis" not in runtime and imported == ""
    assert any(d.startswith("hypothesis") for d in project["optional-dependencies"]["dev"])
