"""Price table: USD per million tokens, kept in one data file so it can be updated or overridden.

Costs are computed, not reported by the API, so the table is the single source of
truth for `cost_usd` and for the `--max-cost` budget.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from memeval.llm.errors import PriceTableError

PRICES_ENV = "MEMEVAL_PRICES"  # path to a replacement price table
PER_TOKENS = 1_000_000  # prices are quoted per million tokens


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model family."""

    input: float
    output: float
    cache_write: float
    cache_read: float


@dataclass(frozen=True)
class PriceTable:
    """Model prices plus the batch discount.

    Args:
        models: model id or id prefix -> price; the longest matching prefix wins.
        batch_discount: factor applied to every price of a Message Batches call.
        source: where the table was read from, for error messages and config.json.
    """

    models: dict[str, ModelPrice]
    batch_discount: float = 0.5
    source: str = "<builtin>"

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of `model`, by exact id or longest prefix; None when unknown."""
        if model in self.models:
            return self.models[model]
        matches = [key for key in self.models if model.startswith(key)]
        return self.models[max(matches, key=len)] if matches else None

    def with_model(self, model: str, price: ModelPrice) -> PriceTable:
        """This table with `model` priced (a spec's `price_in`/`price_out`)."""
        if self.models.get(model) == price:
            return self
        return PriceTable(models={**self.models, model: price},
                          batch_discount=self.batch_discount,
                          source=f"{self.source} + spec prices")

    def cost(self, model: str, *, input_tokens: int = 0, output_tokens: int = 0,
             cache_read_input_tokens: int = 0, cache_creation_input_tokens: int = 0,
             batch: bool = False) -> float | None:
        """USD for one call; None when the model is not in the table."""
        price = self.price_for(model)
        if price is None:
            return None
        total = (input_tokens * price.input + output_tokens * price.output
                 + cache_read_input_tokens * price.cache_read
                 + cache_creation_input_tokens * price.cache_write) / PER_TOKENS
        return total * self.batch_discount if batch else total


def _parse(data: Any, source: str) -> PriceTable:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PriceTableError(f"{source}: expected an object with a 'models' mapping; "
                              "see memeval/data/prices.json for the format")
    models: dict[str, ModelPrice] = {}
    for key, entry in data["models"].items():
        try:
            fields = {f: float(entry[f]) for f in ("input", "output")}
            for f in ("cache_write", "cache_read"):  # servers without a prompt cache: as input
                fields[f] = float(entry.get(f, fields["input"]))
            models[key] = ModelPrice(**fields)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PriceTableError(
                f"{source}: models.{key}: needs numeric input and output (and optionally "
                f"cache_write, cache_read), USD per million tokens; problem: {exc!r}") from exc
    try:
        discount = float(data.get("batch_discount", 0.5))
    except (TypeError, ValueError) as exc:
        raise PriceTableError(f"{source}: batch_discount must be a number") from exc
    return PriceTable(models=models, batch_discount=discount, source=source)


BUNDLED = "memeval/data/prices.json"


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The bundled price table, extended by `path` (else `$MEMEVAL_PRICES`) when given.

    A user's file adds or overrides models (a local server's, say: `{"models":
    {"qwen3:8b": {"input": 0, "output": 0}}}` makes it free rather than unpriced);
    the bundled entries stay authoritative for everything it does not name.

    Args:
        path: a JSON file in the format of `memeval/data/prices.json`.
    """
    bundled = _parse(_json(resources.files("memeval").joinpath("data/prices.json")
                           .read_text("utf-8"), BUNDLED), BUNDLED)
    chosen = path or os.environ.get(PRICES_ENV)
    if not chosen:
        return bundled
    file = Path(chosen)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceTableError(f"{file}: cannot read price table ({exc.strerror}); "
                              "pass an existing JSON file") from exc
    data = _json(text, str(file))
    if isinstance(data, dict) and "batch_discount" not in data:
        data = {**data, "batch_discount": bundled.batch_discount}
    own = _parse(data, str(file))
    return PriceTable(models={**bundled.models, **own.models},
                      batch_discount=own.batch_discount, source=f"{BUNDLED} + {file}")


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceTableError(f"{source}: line {exc.lineno}: invalid JSON ({exc.msg})") from exc
