"""Tool-search ranking benchmark on MetaTool: quality (Recall@1/5, NDCG@5) and latency per ranker.

    python benchmarks/tool_search.py                 # everything (about a minute with --no-fused)
    python benchmarks/tool_search.py --limit 2000    # quick: 2,000 queries per half
    python benchmarks/tool_search.py --tune          # grid-search BM25F weights on the tune half
    python benchmarks/tool_search.py --tune-fusion --backend minilm   # grid-search the fusion on the tune half
    python benchmarks/tool_search.py --half both     # tables for the tune half and the held-out half

Queries are split in two halves by a hash of their text; tuned settings were chosen on the tune half,
so the table reports the other (held-out) half. Rankers: the naive substring scorer, plain BM25
(lower-cased `\\w+` tokens, one field), the default ranker (BM25F, our tokeniser) and, if the `semantic`
extra is installed, the fused ranker.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data_metatool import DEFAULT_DIR, Query, load_queries, load_tools, split, synthetic_catalog

from toolmode.tools.base import Tool
from toolmode.tools.search import BM25FIndex, BM25Params, ToolIndex, top_k
from toolmode.tools.text_tokens import plain_tokenize, split_identifier

Searcher = Callable[[str, int], list[str]]


def substring_ranker(tools: Sequence[Tool]) -> Searcher:
    """Score = number of query words found as substrings of name + description."""
    texts = [f"{t.name} {t.description}".lower() for t in tools]

    def search(query: str, k: int) -> list[str]:
        words = set(re.findall(r"\w+", query.lower()))
        scored = [(sum(w in text for w in words), i) for i, text in enumerate(texts)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [tools[i].name for _, i in scored[:k]]

    return search


def plain_bm25_ranker(tools: Sequence[Tool]) -> Searcher:
    """Okapi BM25 over one field, name + description, lower-cased `\\w+` tokens, nothing else."""
    index = BM25FIndex([{"text": plain_tokenize(f"{t.name} {t.description}")} for t in tools])

    def search(query: str, k: int) -> list[str]:
        return [tools[i].name for i in top_k(index.scores(plain_tokenize(query)), k)]

    return search


def plain_bm25_split_ranker(tools: Sequence[Tool]) -> Searcher:
    """Plain BM25 plus snake/camel-case splitting of tool names (the README's 0.46 reference)."""
    docs = [{"text": split_identifier(t.name) + plain_tokenize(t.description)} for t in tools]
    index = BM25FIndex(docs)

    def search(query: str, k: int) -> list[str]:
        return [tools[i].name for i in top_k(index.scores(plain_tokenize(query)), k)]

    return search


def toolindex_ranker(
    ranker: str, params: BM25Params | None = None, embedder: str | None = None, **fusion: Any
) -> Callable[[Sequence[Tool]], Searcher]:
    """The project's ToolIndex with the given ranker; `fusion` overrides SemanticIndex settings."""

    def build(tools: Sequence[Tool]) -> Searcher:
        index = ToolIndex(tools, ranker, params=params, embedder=embedder)
        if fusion and index.semantic is not None:
            from toolmode.tools.semantic import SemanticIndex

            index.semantic = SemanticIndex(tools, index.semantic.embedder, **fusion)
        return lambda query, k: [t.name for t in index.search(query, k)]

    return build


def evaluate(search: Searcher, queries: Sequence[Query], k: int = 5) -> dict[str, float]:
    """Mean Recall@1, Recall@5, NDCG@5 (binary gains) and median latency in ms."""
    r1 = r5 = ndcg = 0.0
    times = []
    for q in queries:
        gold = set(q.gold)
        start = time.perf_counter()
        hits = search(q.text, k)
        times.append(time.perf_counter() - start)
        r1 += len(gold & set(hits[:1])) / len(gold)
        r5 += len(gold & set(hits[:k])) / len(gold)
        dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(hits[:k]) if name in gold)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), k)))
        ndcg += dcg / ideal
    n = max(len(queries), 1)
    return {"R@1": r1 / n, "R@5": r5 / n, "NDCG@5": ndcg / n, "ms": 1000 * statistics.median(times or [0])}


def subsample(queries: list[Query], limit: int | None) -> list[Query]:
    """Every m-th query, so a limited run still covers all tools."""
    if not limit or limit >= len(queries):
        return queries
    step = len(queries) / limit
    return [queries[int(i * step)] for i in range(limit)]


def print_table(title: str, rows: list[tuple[str, dict[str, float]]]) -> None:
    """A plain-text table of metric rows."""
    print(f"\n{title}")
    print(f"{'ranker':<38} {'R@1':>6} {'R@5':>6} {'NDCG@5':>7} {'median ms':>10}")
    for name, m in rows:
        print(f"{name:<38} {m['R@1']:6.3f} {m['R@5']:6.3f} {m['NDCG@5']:7.3f} {m['ms']:10.3f}")


def tune(tools: list[Tool], queries: list[Query]) -> None:
    """Grid-search name weight, k1 and b on the given (tune) queries; print the best settings."""
    results = []
    for name_w, k1, b in itertools.product([1.0, 1.5, 2.0, 3.0, 4.0], [0.9, 1.2, 1.5, 2.0], [0.5, 0.75, 0.9]):
        params = BM25Params(name=name_w, k1=k1, b=b)
        m = evaluate(toolindex_ranker("bm25", params)(tools), queries)
        results.append((m["R@5"], m["NDCG@5"], params))
    results.sort(key=lambda r: (-r[0], -r[1]))
    for r5, nd, p in results[:8]:
        print(f"R@5 {r5:.3f} NDCG@5 {nd:.3f}  name={p.name} k1={p.k1} b={p.b}")


def tune_fusion(tools: list[Tool], queries: list[Query], backend: str | None) -> None:
    """Grid-search the fusion settings on the given (tune) queries; print the best.

    Each query is embedded once and its vector reused across the grid (only for this search: the tables
    embed every query afresh, so their latency includes the model).
    """
    from toolmode.tools.semantic import SemanticIndex, get_embedder

    embedder = get_embedder(backend)
    index = ToolIndex(tools)
    start = time.perf_counter()
    vecs = {q.text: embedder.embed_queries([q.text])[0] for q in queries}
    print(f"embedded {len(vecs):,} tune queries with {embedder.key} in {time.perf_counter() - start:.0f} s")
    bm25 = {q.text: index.bm25.scores(index.query_tokenizer(q.text)) for q in queries}

    def searcher(sem: SemanticIndex) -> Searcher:
        def search(query: str, k: int) -> list[str]:
            scores = sem.fuse(query, bm25[query], vecs[query])
            return [tools[i].name for i in top_k(scores, k)]

        return search

    results = []
    for centre, name_w in itertools.product([False, True], [0.0, 0.15, 0.3, 0.5, 0.7]):
        for w in [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]:
            sem = SemanticIndex(tools, embedder, semantic_weight=w, name_weight=name_w, centre=centre)
            results.append((evaluate(searcher(sem), queries), f"score centre={centre} name={name_w} w={w}"))
        for rrf_k, rrf_w in itertools.product([5.0, 10.0, 20.0, 60.0], [1.0, 1.5, 2.0, 3.0]):
            sem = SemanticIndex(
                tools,
                embedder,
                fusion="rrf",
                rrf_k=rrf_k,
                rrf_weight=rrf_w,
                name_weight=name_w,
                centre=centre,
            )
            results.append(
                (evaluate(searcher(sem), queries), f"rrf centre={centre} name={name_w} k={rrf_k} w={rrf_w}")
            )
    results.sort(key=lambda r: (-r[0]["R@5"], -r[0]["NDCG@5"]))
    for m, label in results[:15]:
        print(f"R@5 {m['R@5']:.4f} R@1 {m['R@1']:.4f} NDCG@5 {m['NDCG@5']:.4f}  {label}")


def scale(tools: list[Tool], queries: list[Query], size: int) -> None:
    """Build time and median query latency of the default ranker on a synthetic catalog of `size` tools."""
    catalog = synthetic_catalog(tools, size)
    builds = []
    for _ in range(3):
        start = time.perf_counter()
        index = ToolIndex(catalog)
        builds.append(time.perf_counter() - start)
    times = []
    for q in queries:
        start = time.perf_counter()
        index.search(q.text, 5)
        times.append(time.perf_counter() - start)
    print(
        f"synthetic catalog of {size:,} tools: build {1000 * min(builds):.0f} ms (best of 3), "
        f"median query {1000 * statistics.median(times):.3f} ms, p95 "
        f"{1000 * sorted(times)[int(0.95 * len(times))]:.3f} ms over {len(queries):,} queries"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--limit", type=int, default=None, help="at most this many queries per half")
    ap.add_argument("--no-fused", action="store_true", help="skip the fused ranker even if installed")
    ap.add_argument("--backend", default=None, help="embedding backend for the fused ranker (minilm, e5)")
    ap.add_argument("--tune", action="store_true", help="grid-search BM25F settings on the tune half")
    ap.add_argument("--tune-fusion", action="store_true", help="grid-search fusion settings on the tune half")
    ap.add_argument("--rrf", action="store_true", help="also run the fused ranker with rank fusion (before)")
    ap.add_argument(
        "--half",
        choices=["held-out", "tune", "both"],
        default="held-out",
        help="which half the tables report",
    )
    ap.add_argument("--scale", type=int, default=10_000, help="size of the synthetic catalog (0 to skip)")
    args = ap.parse_args(argv)

    print("command:", "python benchmarks/tool_search.py", *(argv if argv is not None else sys.argv[1:]))
    tools = load_tools(args.data_dir)
    tune_q, test_q = (subsample(h, args.limit) for h in split(load_queries(args.data_dir)))
    multi = load_queries(args.data_dir, multi=True)
    print(
        f"MetaTool: {len(tools)} tools, {len(tune_q):,} tune / {len(test_q):,} held-out queries, "
        f"{len(multi)} two-tool queries"
    )
    if args.tune:
        tune(tools, tune_q)
        return 0
    if args.tune_fusion:
        tune_fusion(tools, tune_q, args.backend)
        return 0

    rankers: list[tuple[str, Callable[[Sequence[Tool]], Searcher]]] = [
        ("(i) substring", substring_ranker),
        ("(ii) plain BM25", plain_bm25_ranker),
        ("(ii') plain BM25 + name splitting", plain_bm25_split_ranker),
        ("(iii) default: bm25 (BM25F)", toolindex_ranker("bm25")),
    ]
    if not args.no_fused:
        try:
            from toolmode.tools.semantic import get_embedder

            key = get_embedder(args.backend).key
            rankers.append((f"(iv) fused: bm25 + {key}", toolindex_ranker("fused", embedder=args.backend)))
            if args.rrf:
                rrf = toolindex_ranker(
                    "fused", embedder=args.backend, fusion="rrf", name_weight=0.0, centre=False
                )
                rankers.append((f"(iv') before: RRF, {key}", rrf))
        except ImportError as exc:
            print(f"fused ranker skipped: {exc}")

    halves = {"tune": tune_q, "held-out": test_q}
    shown = list(halves) if args.half == "both" else [args.half]
    tables: dict[str, list[tuple[str, dict[str, float]]]] = {h: [] for h in [*shown, "multi"]}
    for name, build in rankers:
        start = time.perf_counter()
        search = build(tools)
        built = time.perf_counter() - start
        for half in shown:
            tables[half].append((name, evaluate(search, halves[half])))
        tables["multi"].append((name, evaluate(search, multi)))
        print(f"  built {name} in {1000 * built:.0f} ms", flush=True)
    for half in shown:
        n = len(halves[half])
        print_table(f"{half} half of queries.jsonl ({n:,} queries, 199 tools)", tables[half])
    print_table(
        f"queries_multi.jsonl ({len(multi)} queries, 2 gold tools each; recall = share of both)",
        tables["multi"],
    )
    if args.scale:
        print()
        scale(tools, test_q[:2000], args.scale)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
