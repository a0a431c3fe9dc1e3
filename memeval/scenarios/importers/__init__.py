"""Importers of public memory benchmarks into memeval scenarios (data not shipped)."""

from memeval.scenarios.importers._common import ImportReport
from memeval.scenarios.importers.locomo import GRANULARITIES, import_locomo
from memeval.scenarios.importers.longmemeval import import_longmemeval

__all__ = ["GRANULARITIES", "ImportReport", "import_locomo", "import_longmemeval"]
