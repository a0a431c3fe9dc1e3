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
    GATE_FILE,
    INCOMPLETE_MARKER,
    PAYLOADS_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    TurnKey,
    UnitKey,
    turn_key,
    unit_key,
)
from memeval.log._files import lines as stored_lines
from memeval.log._payloads import (
    PayloadStore,
    Resolver,
    dangling_refs,
    payload_hash,
    relative_header,
)
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
    RunFolderForeign,
    RunFolderLinked,
    atomic_write_bytes,
    atomic_write_text,
    is_run_folder,
    refuse_foreign,
    refuse_links,
    write_json,
)

__all__ = [
    "CONFIG_FILE", "GATE_FILE", "INCOMPLETE_MARKER", "PAYLOADS_FILE", "REPORT_FILE",
    "RESULTS_FILE", "SCHEMA_VERSION", "SUMMARY_FILE", "GivenAnswer", "PayloadFile", "PayloadStore",
    "RecordedTurn", "Resolver", "ResultsWriter", "RowSink", "RunFolderBusy", "RunFolderError",
    "RunFolderForeign", "RunFolderLinked", "SchemaMismatch", "SearchedDir", "StoredMemory",
    "TurnKey", "TurnResult", "UnitKey", "UnitReader", "atomic_write_bytes", "atomic_write_text",
    "count_rows", "dangling_refs", "is_run_folder", "iter_results", "payload_hash",
    "read_config", "read_per_turn", "read_results", "read_summary", "refuse_foreign",
    "refuse_links", "relative_header", "stored_lines", "turn_key", "unit_key", "write_json",
]
