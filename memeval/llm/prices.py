"""Price table: USD per million tokens, kept in one data file so it can be updated or overridden.

Costs are computed, not reported by the API, so the table is the single source of
truth for `cost_usd` and for the `--max-cost` budget. Behind the bundled Claude
table (and a user's `--prices` file, which win) stands `genai-prices`' table of
other providers' models, read offline from the installed package: an `openai:`
run on a known model (`gpt-4o-mini`) has a cost; a model no table knows (a local
`qwen3:8b`) stays unpriced.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
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
        market: fall back on `genai-prices` for a model the table does not name.
    """

    models: dict[str, ModelPrice]
    batch_discount: float = 0.5
    source: str = "<builtin>"
    market: bool = False

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of `model`, by exact id or longest prefix, else (with `market`)
        genai-prices'; None when unknown."""
        if model in self.models:
            return self.models[model]
        matches = [key for key in self.models if model.startswith(key)]
        if matches:
            return self.models[max(matches, key=len)]
        return market_price(model) if self.market else None

    def with_model(self, model: str, price: ModelPrice) -> PriceTable:
        """This table with `model` priced (a spec's `price_in`/`price_out`)."""
        if self.models.get(model) == price:
            return self
        return PriceTable(models={**self.models, model: price},
                          batch_discount=self.batch_discount,
                          source=f"{self.source} + spec prices", market=self.market)

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
MARKET = "genai-prices"  # the fallback table's name in `source`
_MILLION = 1_000_000


@lru_cache(maxsize=256)
def market_price(model: str) -> ModelPrice | None:
    """`model`'s price in genai-prices' bundled data (offline; no update is fetched),
    USD per million tokens; None when it knows no such model."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # an install without it prices Claude alone
        return None

    def per_million(**tokens: int) -> float:
        return float(calc_price(Usage(**tokens), model_ref=model).total_price)

    try:
        return ModelPrice(input=per_million(input_tokens=_MILLION),
                          output=per_million(output_tokens=_MILLION),
                          cache_write=per_million(input_tokens=_MILLION,
                                                  cache_write_tokens=_MILLION),
                          cache_read=per_million(input_tokens=_MILLION,
                                                 cache_read_tokens=_MILLION))
    except (LookupError, ValueError):  # no provider or model matches
        return None


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
    bundled = PriceTable(models=bundled.models, batch_discount=bundled.batch_discount,
                         source=f"{BUNDLED} + {MARKET}", market=True)
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
                      batch_discount=own.batch_discount,
                      source=f"{BUNDLED} + {file} + {MARKET}", market=True)


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceTableError(f"{source}: line {exc.lineno}: invalid JSON ({exc.msg})") from exc
