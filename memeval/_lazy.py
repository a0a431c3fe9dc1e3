"""Package faces that name what a package offers without importing it all at once.

The command line must start without pandas, scipy or the SDKs; a package's
`__init__` lists its public names and loads each one's module on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that finds `name` in `package.<where[name]>`."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    return __getattr__
