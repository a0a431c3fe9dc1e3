"""Where the judged suite's model answers come from: a cassette, a key, or nowhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

from memeval.plugin._options import KEY_ENV, Settings

if TYPE_CHECKING:
    from memeval.llm import ModelAccess


@dataclass(frozen=True)
class ModelSource:
    """Where an `llm` item's model answers come from, or why there are none.

    `kind`: `replay`/`record` (the --memeval-* options), `live` (a key in the
    environment), `cassette` (the marker's own committed cassette), `none`.
    """

    kind: Literal["replay", "record", "live", "cassette", "none"]
    cassette: Path | None = None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.kind != "none"


def model_source(settings: Settings, marker_cassette: Path | None) -> ModelSource:
    if settings.replay is not None:
        return ModelSource("replay", settings.replay)
    if settings.record is not None:
        if not os.environ.get(KEY_ENV):
            return ModelSource("none", settings.record,
                               f"--memeval-record needs {KEY_ENV} to call the model")
        return ModelSource("record", settings.record)
    if os.environ.get(KEY_ENV):
        return ModelSource("live")
    if marker_cassette is not None and marker_cassette.is_file():
        return ModelSource("cassette", marker_cassette)
    missing = f" and {marker_cassette} does not exist" if marker_cassette is not None else ""
    return ModelSource("none", None, f"needs a model: no {KEY_ENV}{missing}; pass "
                                     "--memeval-replay CASSETTE or set the key")


def marker_cassette(item: pytest.Item) -> Path | None:
    marker = item.get_closest_marker("llm")
    if marker is None:
        return None
    value = marker.kwargs.get("cassette", marker.args[0] if marker.args else None)
    if value is None:
        return None
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else item.path.parent / path


def cassette_models(path: Path) -> ModelAccess:
    """Model access that answers from the cassette at `path` only (the marker's)."""
    from memeval.llm import ModelAccess, door_config

    return ModelAccess(door_config(replay=path, cache=False))


def option_models(settings: Settings) -> ModelAccess | None:
    """The access the --memeval-replay / --memeval-record options ask for; None when
    neither is given (a component then builds its own from the environment)."""
    if settings.replay is None and settings.record is None:
        return None
    from memeval.llm import ModelAccess, door_config

    return ModelAccess(door_config(replay=settings.replay, record=settings.record,
                                   cache=False))
