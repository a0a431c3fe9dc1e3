"""The selector registry: spec strings, typed params, lazy and third-party selectors."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path
from typing import Literal

import pytest

from memeval._spec import Registry, _Entry, parse_spec
from memeval.errors import MemevalError
from memeval.selectors import (
    SELECTORS,
    BM25Selector,
    RandomSelector,
    RecencySelector,
    SelectionRequest,
    SelectionResult,
    Selector,
    SyncSelector,
    available_selectors,
    resolve_selector,
)
from memeval.selectors._registry import _load_claude


def test_parse_spec_splits_name_arg_and_params() -> None:
    spec = parse_spec("claude:claude-sonnet-4-6?prompt=conservative&stateful=1")
    assert spec.name == "claude"
    assert spec.arg == "claude-sonnet-4-6"
    assert spec.params == (("prompt", "conservative"), ("stateful", "1"))


@pytest.mark.parametrize("spec", ["", "  ", "?k=1", ":x", "bm25:", "bm25?k", "bm25?k=1&k=2"])
def test_malformed_specs_are_rejected(spec: str) -> None:
    with pytest.raises(MemevalError):
        parse_spec(spec)


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("bm25", "bm25"),
        ("bm25?k=5", "bm25"),  # defaults drop out: one config, one name
        ("bm25?k=5&threshold=0.5", "bm25?threshold=0.5"),
        ("bm25?threshold=0.50&k=3", "bm25?k=3&threshold=0.5"),  # sorted, normalised
        ("recency?k=3", "recency?k=3"),
        ("random?seed=7", "random?seed=7"),
        ("none", "none"),
        ("all", "all"),
        ("oracle", "oracle"),
    ],
)
def test_resolved_selector_is_named_by_its_canonical_spec(spec: str, canonical: str) -> None:
    built = resolve_selector(spec)
    assert isinstance(built, Selector)
    assert built.name == canonical
    # The canonical name resolves back to an equal configuration.
    assert resolve_selector(built.name).name == canonical


def test_params_are_converted_to_the_declared_types() -> None:
    built = resolve_selector("bm25?k=3&threshold=0.25")
    assert isinstance(built, BM25Selector)
    assert built.k == 3 and isinstance(built.k, int)
    assert built.threshold == 0.25
    rand = resolve_selector("random?seed=7&k=2")
    assert isinstance(rand, RandomSelector) and (rand.seed, rand.k) == (7, 2)


def test_directly_built_selector_has_the_same_name_as_the_resolved_one() -> None:
    assert RecencySelector(k=3).name == resolve_selector("recency?k=3").name
    assert BM25Selector(threshold=2).name == "bm25"


def test_unknown_param_names_spec_and_valid_params() -> None:
    with pytest.raises(MemevalError) as info:
        resolve_selector("bm25?kk=3")
    message = str(info.value)
    assert "'bm25?kk=3'" in message and "'kk'" in message
    assert "k (int, default 5)" in message and "threshold (float" in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("bm25?k=three", "an integer"), ("bm25?threshold=high", "a number"),
     ("bm25?threshold=nan", "a finite number"), ("recency?k=-1", "must be 0 or more")],
)
def test_bad_values_fail_with_what_was_expected(spec: str, expected: str) -> None:
    with pytest.raises(MemevalError, match=expected) as info:
        resolve_selector(spec)
    assert spec.split("?")[0] in str(info.value)


def test_unknown_selector_lists_the_available_ones() -> None:
    with pytest.raises(MemevalError, match=r"available: .*bm25") as info:
        resolve_selector("bm26")
    assert "memeval.selectors" in str(info.value)


def test_a_colon_value_is_refused_by_selectors_without_one() -> None:
    with pytest.raises(MemevalError, match="takes no ':' value"):
        resolve_selector("bm25:fast")


def test_available_selectors_lists_builtins_without_importing_claude() -> None:
    names = available_selectors()
    assert {"bm25", "recency", "random", "none", "all", "oracle", "embedding", "claude"} <= set(
        names)
    assert all(isinstance(v, str) and v for v in names.values())


# -- typed params on a private registry ---------------------------------------------

def _fresh() -> Registry[Selector]:
    return Registry(kind="selector", group="memeval.test-selectors", protocol=Selector)


class _Probe(SyncSelector):
    """A selector whose params cover every supported type."""

    def __init__(self, model: str = "m0", *, flag: bool = False,
                 mode: Literal["a", "b"] = "a", limit: int | None = None,
                 ratio: float = 0.5) -> None:
        self.model, self.flag, self.mode, self.limit, self.ratio = model, flag, mode, limit, ratio

    def select(self, request: SelectionRequest) -> SelectionResult:
        return SelectionResult()


def test_bool_literal_and_optional_params() -> None:
    reg = _fresh()
    reg.register("probe", _Probe, arg="model")
    built = reg.resolve("probe:m1?flag=1&mode=b&limit=none&ratio=2")
    assert (built.model, built.flag, built.mode, built.limit, built.ratio) == (
        "m1", True, "b", None, 2.0)
    assert built.name == "probe:m1?flag=1&mode=b&ratio=2"
    assert reg.resolve("probe?flag=off&limit=3").limit == 3
    with pytest.raises(MemevalError, match="one of 'a', 'b'"):
        reg.resolve("probe?mode=c")
    with pytest.raises(MemevalError, match="a boolean"):
        reg.resolve("probe?flag=maybe")


def test_registering_two_factories_under_one_name_fails() -> None:
    reg = _fresh()
    reg.register("probe", _Probe)
    with pytest.raises(MemevalError, match="registered twice"):
        reg.register("probe", BM25Selector)


def test_a_factory_that_builds_no_selector_is_reported() -> None:
    reg = _fresh()
    reg.register("broken", lambda: object())
    with pytest.raises(MemevalError, match="not a Selector"):
        reg.resolve("broken")


# -- lazy claude ----------------------------------------------------------------------

def test_claude_missing_module_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "memeval.selectors.claude", None)  # import fails
    monkeypatch.setitem(SELECTORS._entries, "claude",
                        _Entry(name="claude", loader=_load_claude, arg="model"))
    with pytest.raises(MemevalError, match="claude selector not available"):
        resolve_selector("claude:claude-sonnet-4-6")


def test_claude_spec_passes_model_and_params_as_keywords(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, object]] = []

    class FakeClaude(SyncSelector):
        def __init__(self, model: str | None = None, *, prompt: str = "conservative",
                     stateful: bool = False) -> None:
            calls.append({"model": model, "prompt": prompt, "stateful": stateful})
            self.model = model or "default-model"

    module = types.ModuleType("memeval.selectors.claude")
    module.ClaudeSelector = FakeClaude  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memeval.selectors.claude", module)
    monkeypatch.setitem(SELECTORS._entries, "claude",
                        _Entry(name="claude", loader=_load_claude, arg="model"))
    built = resolve_selector("claude:claude-sonnet-4-6?prompt=recall&stateful=1")
    assert calls == [{"model": "claude-sonnet-4-6", "prompt": "recall", "stateful": True}]
    assert built.name == "claude:claude-sonnet-4-6?prompt=recall&stateful=1"
    # Without `:model` the name still records the model the selector chose.
    assert resolve_selector("claude").name == "claude:default-model"


# -- third-party entry points ---------------------------------------------------------

def test_third_party_selector_from_an_entry_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "acme_selectors.py").write_text(textwrap.dedent("""
        from memeval.selectors import SelectionResult, SyncSelector

        class Longest(SyncSelector):
            '''Picks the memory with the longest description.'''
            def __init__(self, k: int = 1):
                self.k = k
            def select(self, request):
                ranked = sorted(request.candidates, key=lambda h: -len(h.description or ""))
                return SelectionResult(names=tuple(h.filename for h in ranked[: self.k]))
    """))
    dist = tmp_path / "acme_selectors-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-selectors\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[memeval.test-selectors]\nlongest = acme_selectors:Longest\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = _fresh()
    assert "longest" in reg.available()
    built = reg.resolve("longest?k=2")
    assert built.name == "longest?k=2" and built.k == 2
    with pytest.raises(MemevalError, match=r"valid parameters of 'longest': k \(int"):
        reg.resolve("longest?n=2")


def test_a_broken_plugin_names_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "broken_sel-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-sel\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[memeval.test-selectors]\nbroken = no_such_module_xyz:Thing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = _fresh()
    assert "broken" in reg.available()  # listing does not import plugins
    with pytest.raises(MemevalError, match=r"'no_such_module_xyz:Thing'.*failed to load"):
        reg.resolve("broken")


class _UnhashableFactory:
    """A factory object that cannot be a cache key: its parameters are read each time."""

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, k: int = 1) -> _Probe:
        probe = _Probe()
        probe.limit = k
        return probe


_UnhashableFactory.__call__.__annotations__ = {"k": int}  # this module's are postponed


def test_factory_objects_that_cannot_be_hashed_still_resolve() -> None:
    reg = _fresh()
    reg.register("unhashable", _UnhashableFactory())
    assert reg.resolve("unhashable?k=3").limit == 3
    assert [p.name for p in reg.params("unhashable")] == ["k"]
    with pytest.raises(MemevalError, match="unknown parameter 'j'"):
        reg.resolve("unhashable?j=3")


def test_parameters_are_read_again_once_their_hints_resolve() -> None:
    reg = _fresh()
    namespace: dict = {}
    exec("def make(k: 'Count' = 1):\n    return k", namespace)  # a hint defined later
    reg.register("later", namespace["make"])
    assert reg.params("later") == ()  # unresolvable for now: the value stays text
    namespace["Count"] = int
    assert [(p.name, p.annotation) for p in reg.params("later")] == [("k", int)]


def test_a_patched_constructor_is_read_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = _fresh()
    reg.register("probe", _Probe, arg="model")
    assert "depth" not in [p.name for p in reg.params("probe")]

    def patched(self: _Probe, model: str = "m0", *, depth: int = 1) -> None:
        self.model, self.depth = model, depth

    patched.__annotations__ = {"model": str, "depth": int}  # this module's are postponed
    monkeypatch.setattr(_Probe, "__init__", patched)
    assert reg.resolve("probe?depth=3").depth == 3
