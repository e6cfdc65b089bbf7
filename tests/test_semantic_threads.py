"""The fused ranker chooses thread counts for its work: a query's embedding runs on 1 thread, an index build
on a bounded few, and the process's own settings are back as they were once the embedding is done.

An embedder that reads the thread pools' live settings (threadpoolctl) while it is called shows what the
embedding actually runs with; numpy's BLAS is loaded in every process, so there is always a pool to read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from toolmode.tools.base import Tool  # noqa: E402
from toolmode.tools.semantic import MAX_INDEX_THREADS, SemanticIndex, index_threads  # noqa: E402


def pools() -> dict[str, int]:
    """Each loaded BLAS / OpenMP library's thread count right now."""
    return {info["filepath"]: info["num_threads"] for info in threadpoolctl.threadpool_info()}


class RecordingEmbedder:
    """Deterministic vectors; records the thread counts in force at each call."""

    key = "recording-embedder"
    semantic_weight = 0.5
    name_weight = 0.0

    def __init__(self) -> None:
        self.at_query: list[dict[str, int]] = []
        self.at_build: list[dict[str, int]] = []

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        rows = [np.frombuffer((t * 8)[:8].encode().ljust(8, b"."), dtype=np.uint8).astype(np.float32) for t in texts]
        matrix = np.stack(rows) + 1.0
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.at_query.append(pools())
        return self._vectors(texts)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.at_build.append(pools())
        return self._vectors(texts)


def test_a_query_embeds_on_one_thread_and_an_index_on_a_bounded_few() -> None:
    before = pools()
    assert before, "no BLAS or OpenMP library is loaded: nothing to measure"
    tools = [Tool(f"tool_{i}", f"does thing number {i}", {"type": "object", "properties": {}}, fn=print)
             for i in range(5)]
    embedder = RecordingEmbedder()
    index = SemanticIndex(tools, embedder)
    index.similarities("find thing number 3")
    assert embedder.at_query and all(set(p.values()) == {1} for p in embedder.at_query)
    bound = index_threads()
    assert 1 <= bound <= MAX_INDEX_THREADS
    assert embedder.at_build and all(set(p.values()) == {bound} for p in embedder.at_build)
    assert pools() == before  # the user's own code runs with the settings it had
