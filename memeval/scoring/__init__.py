"""Scoring, in one home: per-turn metrics, aggregates, statistics, compare, calibration, gate."""
