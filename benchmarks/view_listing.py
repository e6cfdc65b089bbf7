"""How fast `toolmode view` lists a folder of 1,000 runs.

    python benchmarks/view_listing.py                      # builds 1,000 real traces in a temporary folder
    python benchmarks/view_listing.py --dir /tmp/runs1000  # builds them there once, reuses them next time
    python benchmarks/view_listing.py --browser            # also times the page in headless Chromium

The traces are real: a react Agent on the scripted model server (toolmode.testing.runs.record_runs), 0 to 6
tool calls each with 1,500-character results. Figures (each the median and minimum of --repeat runs):
- first listing: a new RunList reads every trace's first lines and last two (the OS cache is warm: the
  files were just written or read);
- next listing: the same RunList again (every summary comes from its cache, one stat per file);
- GET /api/runs, first and next: the same through the HTTP server, JSON included;
- with --browser: from opening the page to the list drawn (all 1,000 runs filtered and sorted in the page, the
  first 200 rows drawn; the rest come with "show more"), first and next.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from toolmode.testing.runs import record_runs
from toolmode.view.folder import Folder, RunList
from toolmode.view.server import ViewServer


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Seconds of each of `repeat` calls of fn."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def show(label: str, seconds: list[float]) -> None:
    print(f"{label:<34} median {statistics.median(seconds) * 1000:8.1f} ms   min {min(seconds) * 1000:8.1f} ms"
          f"   (n={len(seconds)})")


def main() -> int:
    """Build (or reuse) the folder and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--dir", help="folder for the traces (kept; built only if it holds none)")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--browser", action="store_true", help="also time the page in headless Chromium")
    args = p.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="toolmode-view-bench-"))
    have = len(list(folder.glob("*.jsonl")))
    if have < args.runs:
        start = time.perf_counter()
        record_runs(folder, args.runs - have)
        print(f"built {args.runs - have:,} traces in {time.perf_counter() - start:.1f} s")
    files = sorted(folder.glob("*.jsonl"))
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files):,} traces, {size / 1e6:.1f} MB, in {folder}")

    root = Folder(folder)
    first = timed(lambda: RunList(root).listing(), args.repeat)
    warm = RunList(root)
    count = len(warm.listing()["runs"])
    assert count == len(files), (count, len(files))
    show("first listing (reads the ends)", first)
    show("next listing (cached)", timed(warm.listing, args.repeat))

    def serve() -> ViewServer:
        server = ViewServer(root)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return server

    def fetch(server: ViewServer) -> bytes:
        with urllib.request.urlopen(server.url + "api/runs", timeout=60) as response:
            return response.read()

    cold = []
    for _ in range(args.repeat):
        server = serve()
        cold += timed(lambda s=server: fetch(s), 1)
        server.shutdown()
        server.server_close()
    show("GET /api/runs, first", cold)
    server = serve()
    fetch(server)
    show("GET /api/runs, next", timed(lambda: fetch(server), args.repeat))
    if args.browser:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.browser import Browser

        browser = Browser(1280, 900)
        try:
            def page(fresh: bool) -> None:
                if fresh:
                    server.runs = RunList(root)  # the server's cache emptied: the ends are read again
                browser.open(server.url + "#/?t=" + str(time.perf_counter()), "list")
                drawn = browser.js("return document.querySelectorAll('table.runs tbody tr[data-path]').length")
                assert drawn == min(count, 200), drawn  # the first page; the rest on "show more"

            show("page drawn in Chromium, first", timed(lambda: page(True), args.repeat))
            show("page drawn in Chromium, next", timed(lambda: page(False), args.repeat))
        finally:
            browser.close()
    server.shutdown()
    server.server_close()
    root.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
