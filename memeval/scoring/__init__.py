"""Scoring, in one home: metric declarations, per-turn metrics, aggregates, statistics,
paired compare, calibration, gate, agreement and audit.

The public surface is below; each name loads its module on first use, so reading a
row (which imports `memeval.scoring.answers`) does not pull in pandas and scipy.

- `catalog`: every metric declared once (`CATALOG`, `metric`, `Metric`).
- `metrics`: per-turn scores and aggregates (`score_results`, `per_turn_frame`,
  `aggregate`, `paired_compare`, `pass_hat_k`, `flip_rate`).
- `stats`: intervals and tests (`non_inferiority`, `calibrate_margin`, ...).
- `compare`, `calibrate`, `gate`: `compare_runs`, `calibrate_run`, `gate_run`.
"""

from __future__ import annotations

from memeval._lazy import lazy_exports

_WHERE: dict[str, str] = {
    "CATALOG": "catalog", "Metric": "catalog", "metric": "catalog",
    "score_results": "metrics", "per_turn_frame": "metrics", "aggregate": "metrics",
    "paired_compare": "metrics", "pass_hat_k": "metrics", "flip_rate": "metrics",
    "Interval": "stats", "non_inferiority": "stats", "calibrate_margin": "stats",
    "compare_runs": "compare", "Calibration": "calibrate", "calibrate_run": "calibrate",
    "GateResult": "gate", "gate_run": "gate", "run_gate": "gate",
    "cohens_kappa": "agreement", "audit_runs": "audit",
}

__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
