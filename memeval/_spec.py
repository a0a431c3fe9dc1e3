"""Spec strings and the name registries behind them.

Selectors and judges are chosen by one string in the CLI, the pytest options and
config files alike (`bm25?k=3&threshold=0.5`, `claude:claude-sonnet-4-6?prompt=x`).
The grammar is `name[:arg][?key=value&...]`; the registry turns it into a call of a
registered factory, converting each value to the type the factory's signature
declares, so a typo fails loudly at start-up instead of silently using a default.

Factories come from three places: the `@selector(...)`/`@judge(...)` decorators,
lazy loaders (a module imported only when its name is first resolved, so optional
dependencies stay optional) and the entry-point groups `memeval.selectors` and
`memeval.judges` of installed third-party packages.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import parse_qsl, quote

from memeval.errors import MemevalError

T = TypeVar("T")

# Spellings accepted for a boolean parameter; `stateful=1` must mean what it says.
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Spec:
    """A parsed spec string.

    Args:
        name: the registered name (`bm25`, `claude`).
        arg: the part after `:` (for `claude` the model id), or None.
        params: query parameters as raw strings, in the order written.
    """

    name: str
    arg: str | None = None
    params: tuple[tuple[str, str], ...] = ()


def parse_spec(spec: str, *, kind: str = "component") -> Spec:
    """Split `name[:arg][?k=v&...]` into its parts; raise on malformed strings.

    Args:
        spec: the string a user wrote.
        kind: `selector` or `judge`, for the error message.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise MemevalError(f"empty {kind} spec {spec!r}: write a name such as 'bm25'")
    text = spec.strip()
    head, sep, query = text.partition("?")
    name, colon, arg = head.partition(":")
    name = name.strip()
    if not name:
        raise MemevalError(f"{kind} spec {spec!r} has no name before ':' or '?'")
    if colon and not arg:
        raise MemevalError(f"{kind} spec {spec!r} has an empty value after ':'")
    params: list[tuple[str, str]] = []
    if sep and query:
        try:
            params = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise MemevalError(
                f"{kind} spec {spec!r}: malformed parameters {query!r}; "
                "write them as key=value joined by '&'"
            ) from exc
    seen: set[str] = set()
    for key, _ in params:
        if key in seen:
            raise MemevalError(f"{kind} spec {spec!r} sets {key!r} twice; keep one")
        seen.add(key)
    return Spec(name=name, arg=arg if colon else None, params=tuple(params))


# The registry owns `.name` (the canonical spec); a spec may not set it.
_RESERVED = frozenset({"name"})
_SCALARS = (str, int, float, bool)


def _expressible(annotation: Any) -> bool:
    """Whether a spec string can carry a value of this type."""
    if annotation in (*_SCALARS, Any, inspect.Parameter.empty):
        return True
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return True
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return any(_expressible(a) for a in members)
    return False


def _describe(annotation: Any) -> str:
    if typing.get_origin(annotation) is Literal:
        return " | ".join(repr(v) for v in typing.get_args(annotation))
    return getattr(annotation, "__name__", str(annotation))


def _convert(raw: str, annotation: Any) -> Any:
    """Turn one raw value into `annotation`'s type; ValueError says what was expected."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if raw.lower() in ("", "none", "null") and len(members) < len(
            typing.get_args(annotation)
        ):
            return None
        errors = []
        for member in members:
            try:
                return _convert(raw, member)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(" or ".join(errors))
    if origin is Literal:
        choices = typing.get_args(annotation)
        for choice in choices:
            if raw == str(choice):
                return choice
        raise ValueError(f"one of {', '.join(repr(c) for c in choices)}")
    if annotation is bool:
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError("a boolean (1/0, true/false)")
    if annotation is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError("an integer") from None
    if annotation is float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError("a number") from None
        if not math.isfinite(value):
            raise ValueError("a finite number")
        return value
    if annotation in (str, Any, inspect.Parameter.empty):
        return raw
    raise ValueError(f"a value of a type specs cannot express ({_describe(annotation)})")


def _render(value: Any) -> str:
    """Canonical text of a parameter value, so equal configs get equal names."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


@dataclass(frozen=True)
class ParamInfo:
    """One parameter a factory accepts from a spec."""

    name: str
    annotation: Any
    default: Any

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    def describe(self) -> str:
        kind = _describe(self.annotation)
        if self.required:
            return f"{self.name} ({kind}, required)"
        default = str(self.default).lower() if isinstance(self.default, bool) \
            else _render(self.default)
        return f"{self.name} ({kind}, default {default})"


_PARAMS: dict[Any, tuple[ParamInfo, ...]] = {}


def _factory_params(target: Callable[..., Any]) -> tuple[ParamInfo, ...]:
    """A factory's spec parameters, read from its signature once (a selector is built
    for every unit of a run, and reading type hints costs more than building it).
    Kept per factory and constructor, so a patched `__init__` is read afresh; not
    kept while its type hints do not resolve yet (a name defined later), nor for a
    factory that cannot be a key."""
    init = target.__init__ if isinstance(target, type) else target
    try:
        return _PARAMS[target, init]
    except KeyError:
        pass
    except TypeError:  # unhashable
        return _read_params(target, init)[0]
    params, resolved = _read_params(target, init)
    if resolved:
        _PARAMS[target, init] = params
    return params


def _read_params(target: Callable[..., Any],
                 init: Callable[..., Any]) -> tuple[tuple[ParamInfo, ...], bool]:
    """(the spec parameters, whether the type hints resolved)."""
    signature = inspect.signature(target)
    try:
        hints, resolved = typing.get_type_hints(init), True
    except Exception:  # unresolvable annotations: treat values as strings
        hints, resolved = {}, False
    out = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name.startswith("_"):
            continue
        if p.name in _RESERVED:
            continue
        annotation = hints.get(p.name, p.annotation)
        if not _expressible(annotation):
            continue  # e.g. an injected client object: code may pass it, specs cannot
        out.append(ParamInfo(p.name, annotation, p.default))
    return tuple(out), resolved


@dataclass
class _Entry:
    """A registered name: a factory now, or a loader that yields one when first used."""

    name: str
    factory: Callable[..., Any] | None = None
    loader: Callable[[], Callable[..., Any]] | None = None
    arg: str | None = None  # the factory parameter that receives `name:<arg>`
    summary: str = ""
    origin: str = "builtin"


@dataclass
class Registry(Generic[T]):
    """Names → factories for one kind of component (selectors or judges).

    Args:
        kind: `selector` or `judge`, used in messages.
        group: the entry-point group third-party packages register under.
        protocol: a runtime-checkable Protocol every built object must satisfy.
    """

    kind: str
    group: str
    protocol: type | None = None
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _entry_points_loaded: bool = False

    # -- registration -------------------------------------------------------------
    def register(self, name: str, factory: Callable[..., Any] | None = None, *,
                 arg: str | None = None, loader: Callable[[], Callable[..., Any]] | None = None,
                 summary: str = "", origin: str = "builtin") -> None:
        """Register `factory` (or a lazy `loader` of it) under `name`.

        Args:
            name: the spec name; letters, digits, `-` and `_`.
            factory: a class or function; its keyword parameters are the spec's params.
            arg: which factory parameter receives the text after `name:`.
            loader: called once on first use; returns the factory. For optional or
                heavy modules, so importing memeval never imports them.
            summary: one line for `available()` listings (default: docstring's first line).
            origin: where the name came from (`builtin`, `lazy`, or the entry point).
        """
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise MemevalError(f"{self.kind} name {name!r} must be letters, digits, '-' or '_'")
        existing = self._entries.get(name)
        if existing is not None and existing.factory is not None and factory is not None \
                and existing.factory is not factory:
            raise MemevalError(
                f"{self.kind} {name!r} is registered twice ({existing.origin} and {origin}); "
                "rename one"
            )
        if not summary and factory is not None:
            summary = _first_line(factory)
        self._entries[name] = _Entry(name=name, factory=factory, loader=loader, arg=arg,
                                     summary=summary, origin=origin)

    def decorator(self, name: str, *, arg: str | None = None) -> Callable[[T], T]:
        """`@selector("bm25")`: register the decorated class or function under `name`."""

        def wrap(factory: T) -> T:
            self.register(name, factory, arg=arg)  # type: ignore[arg-type]
            return factory

        return wrap

    # -- lookup ---------------------------------------------------------------------
    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in importlib.metadata.entry_points(group=self.group):
            if ep.name in self._entries:
                continue  # a builtin wins; a plugin cannot silently replace it

            def load(ep: importlib.metadata.EntryPoint = ep) -> Callable[..., Any]:
                try:
                    return ep.load()  # type: ignore[no-any-return]
                except Exception as exc:  # a broken plugin must name itself, not crash
                    raise MemevalError(
                        f"{self.kind} {ep.name!r} from entry point {ep.value!r} (group "
                        f"{self.group!r}) failed to load: {type(exc).__name__}: {exc}; "
                        "fix or uninstall the package that provides it"
                    ) from exc

            self._entries[ep.name] = _Entry(name=ep.name, loader=load,
                                            origin=f"entry point {ep.value}")

    def _entry(self, name: str, spec: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            self._load_entry_points()
            entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise MemevalError(
                f"unknown {self.kind} {name!r} in spec {spec!r}; available: {known} "
                f"(third-party ones register under the entry-point group {self.group!r})"
            )
        if entry.factory is None:
            assert entry.loader is not None
            loaded = entry.loader()
            # A lazily imported module may have registered itself with the decorator.
            current = self._entries.get(name)
            if current is not None and current.factory is not None:
                current.arg = current.arg or entry.arg
                entry = current
            else:
                entry.factory = loaded
                entry.summary = entry.summary or _first_line(loaded)
        return entry

    def params(self, name: str) -> tuple[ParamInfo, ...]:
        """The spec parameters `name` accepts (its factory's keyword parameters)."""
        entry = self._entry(name, name)
        return self._params_of(entry)

    @staticmethod
    def _params_of(entry: _Entry) -> tuple[ParamInfo, ...]:
        assert entry.factory is not None
        return _factory_params(entry.factory)

    def canonical(self, name: str, arg: str | None = None, **params: Any) -> str:
        """The canonical spec string of `name` built with `params`.

        Parameters equal to their default are left out and the rest sorted, so
        `bm25`, `bm25?k=5` and `bm25?k=5.0` all name the same selector the same way.
        """
        entry = self._entry(name, name)
        defaults = {p.name: p.default for p in self._params_of(entry)}
        parts = []
        for key in sorted(params):
            value = params[key]
            if key == entry.arg:
                continue
            if key in defaults and defaults[key] is not inspect.Parameter.empty \
                    and value == defaults[key] \
                    and isinstance(value, bool) == isinstance(defaults[key], bool):
                continue
            parts.append(f"{quote(key, safe='')}={quote(_render(value), safe='.-_:/')}")
        text = name if arg is None else f"{name}:{arg}"
        return text + ("?" + "&".join(parts) if parts else "")

    def resolve(self, spec: str) -> T:
        """Build the component a spec names; its `.name` becomes the canonical spec.

        Raises MemevalError naming the spec and the valid parameters when a name is
        unknown, a parameter does not exist, or a value has the wrong type.
        """
        parsed = parse_spec(spec, kind=self.kind)
        entry = self._entry(parsed.name, spec)
        infos = {p.name: p for p in self._params_of(entry)}
        valid = ", ".join(p.describe() for n, p in infos.items() if n != entry.arg) or "none"
        kwargs: dict[str, Any] = {}
        if parsed.arg is not None:
            if entry.arg is None:
                raise MemevalError(
                    f"{self.kind} spec {spec!r}: {parsed.name!r} takes no ':' value; "
                    f"parameters: {valid}"
                )
            kwargs[entry.arg] = _convert(parsed.arg, infos[entry.arg].annotation) \
                if entry.arg in infos else parsed.arg
        for key, raw in parsed.params:
            info = infos.get(key)
            if info is None and key != entry.arg and _accepts_var_keyword(entry.factory):
                kwargs[key] = raw  # a **kwargs factory checks its own values
                continue
            if info is None or key == entry.arg:
                raise MemevalError(
                    f"{self.kind} spec {spec!r}: unknown parameter {key!r}; "
                    f"valid parameters of {parsed.name!r}: {valid}"
                )
            try:
                kwargs[key] = _convert(raw, info.annotation)
            except ValueError as exc:
                raise MemevalError(
                    f"{self.kind} spec {spec!r}: {key}={raw!r} is not valid, expected {exc}"
                ) from None
        missing = [p.name for p in infos.values()
                   if p.required and p.name not in kwargs]
        if missing:
            raise MemevalError(
                f"{self.kind} spec {spec!r} is missing {', '.join(missing)}; "
                f"parameters: {valid}"
            )
        assert entry.factory is not None
        try:
            built = entry.factory(**kwargs)
        except MemevalError:
            raise
        except (TypeError, ValueError) as exc:
            raise MemevalError(f"{self.kind} spec {spec!r}: {exc}") from exc
        if self.protocol is not None and not isinstance(built, self.protocol):
            raise MemevalError(
                f"{self.kind} {parsed.name!r} ({entry.origin}) built a "
                f"{type(built).__name__}, which is not a {self.protocol.__name__}"
            )
        # `claude` without `:model` still names the model it picked, so results say it.
        arg = parsed.arg
        if arg is None and entry.arg is not None:
            chosen = getattr(built, entry.arg, None)
            arg = chosen if isinstance(chosen, str) and chosen else None
        name = self.canonical(parsed.name, arg, **{
            k: v for k, v in kwargs.items() if k != entry.arg
        })
        _set_name(built, name)
        return built

    def available(self) -> dict[str, str]:
        """Every resolvable name → a one-line summary (lazy ones are not imported)."""
        self._load_entry_points()
        return {name: (e.summary or e.origin) for name, e in sorted(self._entries.items())}


def lazy_factory(registry: Registry[Any], name: str, module_name: str,
                 attribute: str) -> Callable[[], Callable[..., Any]]:
    """A loader that imports `module_name` only when `name` is first resolved.

    The module may register itself with the decorator, or just define `attribute`
    (the factory); if neither, or if it cannot be imported, the error says
    "<kind> <name> not available" and why, instead of an ImportError mid-run.
    """

    def load() -> Callable[..., Any]:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise MemevalError(
                f"{name} {registry.kind} not available: {module_name} cannot be imported "
                f"({exc}); use another {registry.kind} or install memeval fully"
            ) from exc
        entry = registry._entries.get(name)
        if entry is not None and entry.factory is not None:
            return entry.factory  # the module registered itself with the decorator
        factory = getattr(module, attribute, None)
        if factory is None:
            raise MemevalError(
                f"{name} {registry.kind} not available: {module_name} defines no "
                f"{attribute} and registers no {name!r} {registry.kind}"
            )
        return factory  # type: ignore[no-any-return]

    return load


def _accepts_var_keyword(factory: Any) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD for p in parameters)


def _first_line(obj: Any) -> str:
    lines = (inspect.getdoc(obj) or "").strip().splitlines()
    return lines[0] if lines else ""


def _set_name(obj: Any, name: str) -> None:
    """Stamp the canonical spec on a built component, frozen dataclasses included."""
    if getattr(obj, "name", None) == name:
        return
    try:
        obj.name = name
    except (AttributeError, TypeError):
        object.__setattr__(obj, "name", name)
