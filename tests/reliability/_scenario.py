"""A small scenario suite for run-level reliability tests: real YAML, real loader."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

SCENARIO = textwrap.dedent("""\
    id: {id}
    description: a small shop with five memories
    now: 2026-11-30T12:00:00Z
    mode: recall
    project_root: /home/dev/{id}
    default_age_days: 3
    memdirs:
      project:
        files:
          testing.md:
            content: |
              ---
              description: run the test suite against a real postgres database, never sqlite
              type: feedback
              ---
              Integration tests need the docker postgres service.
          deploy.md:
            age_days: 20
            content: |
              ---
              description: production deploys go through the release train on thursdays
              type: project
              ---
              Ask in #release before merging.
          grafana.md:
            content: |
              ---
              description: checkout latency dashboard lives in grafana under shop/checkout
              type: reference
              ---
              https://grafana.example/d/checkout
          style.md:
            content: |
              ---
              description: variable names are full words, no abbreviations in this codebase
              type: feedback
              ---
              Prefer customer_id over cid.
          oncall.md:
            content: |
              ---
              description: the oncall rotation and pager escalation policy for the shop team
              type: reference
              ---
              Page the secondary after 15 minutes.
    turns:
      - id: t1
        query: ({id}) how do I run the test suite against the database?
        category: direct
        why: testing.md states the database rule
        relevant: [testing.md]
      - id: t2
        query: ({id}) when can I ship this change to production?
        category: direct
        why: deploy.md holds the release rule
        relevant: [deploy.md]
      - id: t3
        query: ({id}) where is the checkout latency dashboard?
        category: direct
        why: grafana.md points at it
        relevant: [grafana.md]
      - id: t4
        query: ({id}) please rename this variable to something clearer
        category: direct
        why: style.md says full words
        relevant: [style.md]
      - id: t5
        query: ({id}) who do I page when checkout is down at night?
        category: direct
        why: oncall.md has the rotation
        relevant: [oncall.md]
""")


def write_suite(folder: Path, count: int = 2) -> list[Path]:
    """`count` scenario files (ids s0, s1, ...) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"s{i}.yaml"
        path.write_text(SCENARIO.format(id=f"s{i}"))
        paths.append(path)
    return paths


# Fields that legitimately differ between two runs of the same config: spend and time
# (a cached answer costs nothing), and the temporary folders scenarios are written to.
VOLATILE = ("selector_usage", "judge_usage", "usage")
_TMP = re.compile(r"/tmp/memeval-[A-Za-z0-9_]+")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        return _TMP.sub("<tmp>", value)
    return value


def comparable_rows(results: Path) -> list[str]:
    """A run's rows minus volatile fields, as sorted canonical JSON lines."""
    lines = [line for line in results.read_text(encoding="utf-8").splitlines() if line]
    return sorted(json.dumps(_strip(json.loads(line)), sort_keys=True) for line in lines)
