"""The `--max-cost` budget: no new call is sent once the run's spend would pass it.

Before a call its worst case (input estimated from characters, output at
`max_tokens`) is reserved; after it the reservation is replaced by the real cost.
Concurrent calls therefore cannot jointly overshoot the limit. With a `SpendLedger`
(a run folder's `spend.jsonl`) the budget starts from what earlier attempts of the
folder spent, and records each reservation and cost there, so a resumed run shares
the limit with the attempts before it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from memeval.llm.spend import SpendLedger

CHARS_PER_TOKEN = 3.0  # conservative: real prompts average nearer 4 chars per token


@dataclass(frozen=True)
class BudgetState:
    max_cost: float | None
    spent: float
    refused: int  # calls not sent because of the budget
    earlier: float = 0.0  # of `spent`, what earlier attempts of the run folder spent

    @property
    def exhausted(self) -> bool:
        return self.refused > 0


class Budget:
    """Thread-safe spend tracker (async callers use it too: no await inside the lock)."""

    def __init__(self, max_cost: float | None = None,
                 ledger: SpendLedger | None = None) -> None:
        self.max_cost = max_cost
        self.ledger = ledger
        self.earlier = ledger.earlier if ledger is not None else 0.0
        self._spent = self.earlier
        self._reserved = 0.0
        self._refused = 0
        self._lock = threading.Lock()

    def reserve(self, estimate: float) -> bool:
        """Claim `estimate` USD for a call about to be sent; False (and counted) if it won't fit."""
        with self._lock:
            committed = self._spent + self._reserved + estimate
            if self.max_cost is not None and committed > self.max_cost:
                self._refused += 1
                return False
            self._reserved += estimate
            if self.ledger is not None:  # inside the lock: the file never lags the tally
                self.ledger.reserve(estimate)
            return True

    def settle(self, estimate: float, actual: float) -> None:
        """Replace a reservation by what the call really cost (0 if it failed unbilled)."""
        with self._lock:
            self._reserved = max(0.0, self._reserved - estimate)
            self._spent += actual
            if self.ledger is not None:
                self.ledger.settle(estimate, actual)

    def state(self) -> BudgetState:
        with self._lock:
            return BudgetState(self.max_cost, self._spent, self._refused, self.earlier)
