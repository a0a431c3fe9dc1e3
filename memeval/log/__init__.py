"""The run folder's one door: the typed row, the payload store, the writer, the readers.

A run folder holds `results.jsonl` (one typed row per turn × selector × repeat, its
large values stored once in `payloads.jsonl`), `summary.json` (the scores, a function
of the rows), `config.json` (what reproduces the run) and `index.html` (the page).
Everything that reads a folder reads it through this package: rows with
`iter_results` (or `UnitReader`, a unit at a time), the summary with `read_summary`
or `read_per_turn`, the config with `read_config`. `ResultsWriter` is the only
thing that appends rows.
"""

from memeval.log._answer import GivenAnswer
from memeval.log._files import (
    CONFIG_FILE,
    INCOMPLETE_MARKER,
    PAYLOADS_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    TurnKey,
    UnitKey,
)
from memeval.log._payloads import PayloadStore, Resolver, payload_hash, relative_header
from memeval.log._reader import (
    PayloadFile,
    RowSink,
    RunFolderError,
    UnitReader,
    count_rows,
    iter_results,
    read_config,
    read_per_turn,
    read_results,
    read_summary,
)
from memeval.log._row import SCHEMA_VERSION, SchemaMismatch, TurnResult
from memeval.log._turn import RecordedTurn, SearchedDir, StoredMemory
from memeval.log._writer import (
    ResultsWriter,
    RunFolderBusy,
    atomic_write_bytes,
    atomic_write_text,
    write_json,
)

__all__ = [
    "CONFIG_FILE",
    "INCOMPLETE_MARKER",
    "PAYLOADS_FILE",
    "REPORT_FILE",
    "RESULTS_FILE",
    "SCHEMA_VERSION",
    "SUMMARY_FILE",
    "GivenAnswer",
    "PayloadFile",
    "PayloadStore",
    "RecordedTurn",
    "Resolver",
    "ResultsWriter",
    "RowSink",
    "RunFolderBusy",
    "RunFolderError",
    "SchemaMismatch",
    "SearchedDir",
    "StoredMemory",
    "TurnKey",
    "TurnResult",
    "UnitKey",
    "UnitReader",
    "atomic_write_bytes",
    "atomic_write_text",
    "count_rows",
    "iter_results",
    "payload_hash",
    "read_config",
    "read_per_turn",
    "read_results",
    "read_summary",
    "relative_header",
    "write_json",
]
