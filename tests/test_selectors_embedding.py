"""The optional embedding selector: guarded import, ranking logic, the real model.

The `dev` extra installs `embed`, so the real-model tests run wherever the suite is
installed as the README says; on a bare install they skip, naming the fix.
"""

from __future__ import annotations

import logging
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from memeval.errors import MemevalError
from memeval.selectors import EmbeddingSelector, SelectionRequest, resolve_selector
from memeval.selectors import embedding as embedding_module
from memeval.selectors.vectors import VectorCache


@dataclass(frozen=True)
class Header:
    filename: str
    description: str | None
    mtime_ms: float


MEMDIR = (
    Header("testing.md", "run the test suite against a real postgres database", 3),
    Header("style.md", "prefer black formatting and short functions", 2),
    Header("pets.md", "the user's dog is called Biscuit", 1),
)


def request(query: str) -> SelectionRequest:
    return SelectionRequest(query=query, manifest="", candidates=MEMDIR,  # type: ignore[arg-type]
                            memory_dir=Path("/mem"))


def test_core_imports_without_the_model_package() -> None:
    # A fresh interpreter where the model package cannot be found still imports memeval
    # and resolves offline selectors; only `embedding` complains, naming the extra.
    code = (
        "import sys; sys.modules['wordllama'] = None\n"
        "import importlib.util as u; real = u.find_spec\n"
        "u.find_spec = lambda n, *a: None if n == 'wordllama' else real(n, *a)\n"
        "from memeval.selectors import resolve_selector\n"
        "resolve_selector('bm25')\n"
        "try:\n    resolve_selector('embedding')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
        "print(*(sys.modules.get(m) is not None for m in ('torch', 'wordllama', 'tokenizers')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "MemevalError" in out and embedding_module.INSTALL_HINT in out
    assert out.strip().endswith("False False False")


def test_missing_extra_fails_at_build_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_module, "embedding_available", lambda: False)
    with pytest.raises(MemevalError, match=re.escape(embedding_module.INSTALL_HINT)):
        resolve_selector("embedding?k=3")


class FakeEncoder:
    """Bag-of-letters vectors: deterministic, instant, and similarity still means overlap."""

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        vectors = np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"]
                            for t in texts], dtype=float)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> VectorCache:
    monkeypatch.setattr(embedding_module, "embedding_available", lambda: True)
    monkeypatch.setattr(embedding_module, "load_encoder", lambda device="cpu": FakeEncoder())
    cache = VectorCache("fake-letters")  # in memory: tests never touch the user's cache
    monkeypatch.setattr(embedding_module, "vector_cache", lambda: cache)
    return cache


@pytest.mark.usefixtures("fake_encoder")
def test_ranking_threshold_and_k_with_a_stub_encoder() -> None:
    query = "the user's dog is called Biscuit"
    every = EmbeddingSelector(k=5, threshold=-1.0).select(request(query))
    assert every.names[0] == "pets.md" and len(every.names) == 3
    assert EmbeddingSelector(k=1, threshold=-1.0).select(request(query)).names == ("pets.md",)
    assert EmbeddingSelector(threshold=1.0).select(request("zzz")).names == ()
    assert "pets.md=" in (every.raw_output or "")


def test_bad_params_are_rejected(fake_encoder: None) -> None:
    with pytest.raises(MemevalError, match=r"must lie in \[-1, 1\]"):
        resolve_selector("embedding?threshold=2")
    with pytest.raises(MemevalError, match="one of 'cpu'"):
        resolve_selector("embedding?device=tpu")
    assert resolve_selector("embedding?k=3").name == "embedding?k=3"


def needs_the_extra() -> None:
    if not embedding_module.embedding_available():
        pytest.skip(f"optional extra memeval[embed] is not installed: "
                    f"{embedding_module.INSTALL_HINT}")


@pytest.fixture
def real_model(monkeypatch: pytest.MonkeyPatch) -> VectorCache:
    """The installed model with an in-memory vector cache (never the user's file)."""
    needs_the_extra()
    cache = VectorCache(embedding_module.model_name())
    monkeypatch.setattr(embedding_module, "vector_cache", lambda: cache)
    return cache


@pytest.mark.usefixtures("real_model")
def test_real_model_loads_offline_and_matches_paraphrases() -> None:
    selector = resolve_selector("embedding")
    # A paraphrase: "execute", "unit tests", "db" vs "run", "test suite", "database".
    result = selector.select(request("how do I execute my unit tests with the db?"))
    assert result.ok
    assert result.names[:1] == ("testing.md",)
    assert "pets.md" not in result.names


def test_each_text_is_encoded_once_across_turns(fake_encoder: VectorCache) -> None:
    selector = EmbeddingSelector(k=5, threshold=-1.0)
    selector.select(request("the user's dog"))
    first = fake_encoder.encoded
    selector.select(request("the user's dog"))  # the same turn again: nothing new
    selector.select(request("where is the dashboard"))  # only the new query is encoded
    assert fake_encoder.encoded == first + 1


def test_the_disk_cache_serves_a_rerun_and_changed_text_is_encoded_again(
        tmp_path: Path) -> None:
    encoder = FakeEncoder()
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return encoder.encode(texts)

    path = tmp_path / "vectors.sqlite"
    first = VectorCache("m", path).vectors(["alpha", "beta"], encode)
    again = VectorCache("m", path).vectors(["alpha", "beta", "gamma"], encode)  # a new run
    assert calls == [["alpha", "beta"], ["gamma"]]
    assert np.allclose(first, again[:2])
    VectorCache("other-model", path).vectors(["alpha"], encode)  # the model is in the key
    assert calls[-1] == ["alpha"]


def test_a_corrupt_vector_cache_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    with pytest.raises(MemevalError, match=r"embedding cache is unusable.*delete it"):
        VectorCache("m", path)


def test_the_model_loads_and_encodes_with_the_network_cut_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    needs_the_extra()
    # The hub is told to stay offline, and every socket connect raises and is recorded,
    # so a load that reached for the network fails here rather than waiting on it.
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError(f"network is off in this test (tried {address!r})")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    embedding_module._load_encoder.cache_clear()  # load now, under the block
    try:
        encoder = embedding_module.load_encoder()
        vectors = encoder.encode(["run the test suite", "execute unit tests", ""])
    finally:
        embedding_module._load_encoder.cache_clear()  # the next user loads it normally
    assert attempts == []
    assert vectors.shape == (3, embedding_module.MODEL_DIM)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # an empty text is a zero vector, not NaN
    assert float(vectors[0] @ vectors[1]) > 0.3


def test_loading_leaves_logging_and_the_package_alone() -> None:
    # wordllama's __init__ calls logging.basicConfig(INFO); memeval reads its files
    # without importing it, so a run's log setup is the user's.
    needs_the_extra()
    code = (
        "import logging, sys\n"
        "from memeval.selectors.embedding import load_encoder\n"
        "load_encoder().encode(['x'])\n"
        "print(len(logging.getLogger().handlers), 'wordllama' in sys.modules,"
        " 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["0", "False", "False"]


def test_the_encoder_matches_wordllamas_own_embed() -> None:
    # Reading the files directly must not change the model: same vectors as the
    # package's own inference (imported here only, with its logging side effect undone).
    needs_the_extra()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
    finally:
        root.handlers[:], root.level = handlers, level
    weights, tokenizer = embedding_module.model_files()
    with safe_open(str(weights), framework="np") as f:
        reference = WordLlamaInference(f.get_tensor("embedding.weight"),
                                       Tokenizer.from_file(str(tokenizer)))
    texts = ["the user's dog is called Biscuit", "db",
             "a longer description, so the batch is padded: " * 4]
    ours = embedding_module.load_encoder().encode(texts)
    assert np.allclose(ours, reference.embed(texts, norm=True), atol=1e-6)


def test_a_package_without_its_files_names_the_fix(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    installed = SimpleNamespace(submodule_search_locations=[str(tmp_path)])  # no files in it
    monkeypatch.setattr(embedding_module.importlib.util, "find_spec", lambda name: installed)
    with pytest.raises(MemevalError, match=r"missing from the installed 'wordllama'.*"
                                           + re.escape(embedding_module.INSTALL_HINT)):
        embedding_module.model_files()
