"""Tool search: rank tools for a free-text query.

`ToolIndex(tools).search("download web page", k=5)` returns the best tools. The default ranker is
BM25F (Okapi BM25 with per-field weights and length normalisation) over each tool's name, description and
parameters, tokenised by `text_tokens.tokenize` (identifier splitting, stop words, light stemming, CJK
characters and bigrams; a query's Chinese tool words also give their English words, `lexicon.py`).
A query that names a tool exactly puts that tool first. `ranker="fused"` adds
embedding similarity (the optional `semantic` extra): a weighted sum of the normalised BM25 and embedding
scores (see `toolmode.tools.semantic`).

The index is our own small one rather than a BM25 package: we need several weighted fields and our own
tokens, and every per-(term, tool) BM25 weight is query-independent, so the index stores them precomputed
and a query is a few numpy scatter-adds.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolmode.tools.base import Tool
from toolmode.tools.text_tokens import tokenize, tokenize_query

RANKERS = ("bm25", "fused")


@dataclass(frozen=True)
class BM25Params:
    """Field weights and Okapi constants.

    `name` and `b` were chosen by grid search on the tune half of the MetaTool queries (the benchmark
    reports the other half); the landscape is flat (R@5 within 0.01 over name 1-4, k1 0.9-2, b 0.5-0.9).
    MetaTool tools have no parameters, so the `parameters` weight is a prior, not a measurement.
    """

    name: float = 3.0
    description: float = 1.0
    parameters: float = 0.5
    k1: float = 1.2
    b: float = 0.5


FIELDS = ("name", "description", "parameters")


def tool_fields(tool: Tool) -> dict[str, str]:
    """The searchable text of a tool, by field: name, description, parameter names and descriptions."""
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    parts: list[str] = []
    for pname, pschema in props.items():
        parts.append(str(pname))
        if isinstance(pschema, dict):
            parts.append(str(pschema.get("description", "")))
            parts.extend(str(v) for v in pschema.get("enum", []) if isinstance(v, str))
    return {"name": tool.name, "description": tool.description or "", "parameters": " ".join(parts)}


class BM25FIndex:
    """Sparse inverted index of BM25F weights: term -> (doc ids, precomputed weights)."""

    def __init__(
        self,
        docs: Sequence[dict[str, list[str]]],
        params: BM25Params = BM25Params(),
    ) -> None:
        """Index documents given as {field: tokens}."""
        self.size = len(docs)
        self.params = params
        fields = sorted({f for d in docs for f in d})
        avg = {f: (sum(len(d.get(f, ())) for d in docs) / max(self.size, 1)) or 1.0 for f in fields}
        weight = {f: getattr(params, f, 1.0) for f in fields}
        ids: defaultdict[str, list[int]] = defaultdict(list)
        tfs: defaultdict[str, list[float]] = defaultdict(list)
        for doc_id, doc in enumerate(docs):
            combined: defaultdict[str, float] = defaultdict(float)
            for f, tokens in doc.items():
                if not tokens or not weight[f]:
                    continue
                norm = weight[f] / (1.0 - params.b + params.b * len(tokens) / avg[f])
                for term in tokens:
                    combined[term] += norm
            for term, tf in combined.items():
                ids[term].append(doc_id)
                tfs[term].append(tf)
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        k1 = params.k1
        for term, doc_ids in ids.items():
            freq = np.asarray(tfs[term], dtype=np.float64)
            idf = math.log(1.0 + (self.size - len(doc_ids) + 0.5) / (len(doc_ids) + 0.5))
            self.postings[term] = (np.asarray(doc_ids, dtype=np.int64), idf * freq * (k1 + 1.0) / (k1 + freq))

    def scores(self, terms: Iterable[str]) -> np.ndarray:
        """BM25F score of every document for the (deduplicated) query terms."""
        out = np.zeros(self.size, dtype=np.float64)
        for term in dict.fromkeys(terms):
            hit = self.postings.get(term)
            if hit is not None:
                out[hit[0]] += hit[1]
        return out


def top_k(scores: np.ndarray, k: int, *, minimum: float = 0.0) -> list[int]:
    """Indices of the k best scores above `minimum`, best first; ties keep catalog order."""
    candidates = np.flatnonzero(scores > minimum)
    if len(candidates) > 4 * k + 64:
        # Keep everything tied with the k-th score so the tie-break below stays exact.
        kth = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
        candidates = candidates[scores[candidates] >= kth]
    order = np.lexsort((candidates, -scores[candidates]))
    return [int(i) for i in candidates[order[:k]]]


_IDENTIFIER = re.compile(r"[\w.\-]+")


def _looks_like_identifier(word: str) -> bool:
    return bool(re.search(r"[_.\-\d]|[a-z][A-Z]", word))


class ToolIndex:
    """Search a catalog of tools by free-text query (see the module docstring).

    `ranker="bm25"` (default) needs nothing beyond numpy; `ranker="fused"` needs the `semantic` extra and
    embeds every tool once, when the index is built. `embedder` picks a specific embedding backend for
    "fused" (an `Embedder` or a backend name from `toolmode.tools.semantic`).
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        ranker: str = "bm25",
        *,
        params: BM25Params | None = None,
        embedder: Any = None,
        tokenizer: Callable[[str], list[str]] = tokenize,
    ) -> None:
        """Build the index; fast for the BM25 ranker (10,000 tools in well under a second)."""
        if ranker not in RANKERS:
            raise ValueError(f"unknown ranker {ranker!r}; expected one of {', '.join(RANKERS)}")
        self.tools = list(tools)
        self.ranker = ranker
        self.tokenizer = tokenizer
        # The default tokeniser's queries also get English words for Chinese tool vocabulary (lexicon.py).
        self.query_tokenizer = tokenize_query if tokenizer is tokenize else tokenizer
        docs = [{f: tokenizer(text) for f, text in tool_fields(t).items()} for t in self.tools]
        self.bm25 = BM25FIndex(docs, params or BM25Params())
        self._names: defaultdict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(self.tools):
            self._names[t.name.lower()].append(i)
        self.semantic = None
        if ranker == "fused":
            from toolmode.tools.semantic import SemanticIndex

            self.semantic = SemanticIndex(self.tools, embedder)

    def ranked(self, query: str, k: int = 5) -> list[tuple[Tool, float]]:
        """The k best tools with their scores, best first; [] for an empty or unmatched query."""
        if k <= 0 or not query.strip():
            return []
        scores = self.bm25.scores(self.query_tokenizer(query))
        if self.semantic is not None:
            scores = self.semantic.fuse(query, scores)
        named = self._named_in(query)
        if named:
            # Above every other tool; among themselves still ordered by their own score.
            bonus = float(scores.max(initial=0.0)) + 1.0
            for i in named:
                scores[i] += bonus
        return [(self.tools[i], float(scores[i])) for i in top_k(scores, k)]

    def search(self, query: str, k: int = 5) -> list[Tool]:
        """The k best tools for the query, best first; [] for an empty or unmatched query."""
        return [t for t, _ in self.ranked(query, k)]

    def _named_in(self, query: str) -> list[int]:
        """Tools named by the query: the whole query, or an identifier-like word in it (`fetch_url`)."""
        whole = query.strip().strip("`'\"").removesuffix("()").lower()
        hits = list(self._names.get(whole, ()))
        for word in _IDENTIFIER.findall(query):
            word = word.strip(".-")
            if _looks_like_identifier(word):
                hits.extend(self._names.get(word.lower(), ()))
        return list(dict.fromkeys(hits))
