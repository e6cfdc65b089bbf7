"""Screenshots of `toolmode view` in headless Chromium, to look at (and for the README).

    python benchmarks/view_screenshots.py --out /tmp/view-shots          # every page at 800x600 and 1920x1080
    python benchmarks/view_screenshots.py --out /tmp/view-shots --docs   # also docs/images/view-*.png

Folders, all real traces (an Agent on the scripted server): one run (code mode, with run_code), 50 runs
(a scripted bench of 12 tasks x react, code x 2 runs, plus two runs outside it) and a run of 100 steps.
Needs Debian's chromium and chromium-driver (and a CJK font, e.g. fonts-wqy-microhei, for the Chinese task).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import Browser  # noqa: E402

from toolmode.testing import ScriptedModelServer, call, reply  # noqa: E402
from toolmode.testing.runs import record_runs  # noqa: E402
from toolmode.view.folder import Folder  # noqa: E402
from toolmode.view.server import ViewServer  # noqa: E402

TASKS = "log_stats,csv_sales,config_scan,orders_cn,write_report,log_diagnosis,time_and_title,site_browse," \
        "currency_total,tariffs,api_multihop,team_payroll"
SIZES = ((800, 600), (1920, 1080))
CODE = """import json
stats = {}
for entry in list_dir("logs"):
    lines = read_file("logs/" + entry["name"]).splitlines()
    errors = sum(1 for line in lines if line.split()[1:2] == ["ERROR"])
    stats[entry["name"]] = {"lines": len(lines), "errors": errors}
print(json.dumps(stats, indent=1))
"""


def one_run(folder: Path) -> None:
    """A code-mode run whose program reads files in the workspace and prints a summary."""
    from toolmode import Agent

    workspace = folder.parent / "workspace"
    (workspace / "logs").mkdir(parents=True)
    for name, errors in (("api.log", 3), ("auth.log", 1), ("billing.log", 7)):
        (workspace / "logs" / name).write_text("".join(
            f"2026-12-01T10:{i:02d}:00 {'ERROR' if i < errors else 'INFO'} request {i}\n" for i in range(20)))
    script = [call("run_code", code=CODE), reply("api.log: 20 lines, 3 ERROR\nauth.log: 20 lines, 1 ERROR\n"
                                                 "billing.log: 20 lines, 7 ERROR\nmost errors: billing.log")]
    from toolmode.tools.builtin import builtin_tools

    with ScriptedModelServer(script) as server, Agent(tools=builtin_tools(workspace), mode="code", runs_dir=folder,
                                                      model="deepseek-v4-flash", base_url=server.base_url,
                                                      workspace=workspace) as agent:
        agent.run("The directory logs/ holds 3 log files. For each, count its lines and ERROR lines, "
                  "then say which has the most ERROR lines.")


def fifty_runs(folder: Path) -> Path:
    bench = folder / "bench-20261201"
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "toolmode", "bench", "--scripted", "--tasks", TASKS, "--modes", "react,code",
                    "--runs", "2", "--jobs", "2", "--out", str(bench)], check=True, capture_output=True, cwd=folder)
    record_runs(folder, 2)
    return bench


def shoot(browser: Browser, url: str, page: str, out: Path, name: str) -> list[Path]:
    paths = []
    for width, height in SIZES:
        browser.resize(width, height)
        browser.open(url, page)
        paths.append(browser.screenshot(out / f"{name}-{width}x{height}.png"))
        errors = browser.console_errors()
        if errors:
            print(f"{name}: console errors: {errors}", file=sys.stderr)
    return paths


def small_png(source: Path, target: Path) -> None:
    """A copy with at most 256 colours (a screenshot of text stays sharp and gets 3-4 times smaller)."""
    from PIL import Image

    Image.open(source).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def main() -> int:
    """Build the folders, serve each, take the screenshots."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--docs", action="store_true", help="also write docs/images/view-{list,run,compare,bench}.png")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="toolmode-view-shots-"))
    folders = {"one": work / "one" / "runs", "fifty": work / "fifty" / "runs", "hundred": work / "hundred" / "runs"}
    one_run(folders["one"])
    bench = fifty_runs(folders["fifty"])
    record_runs(folders["hundred"], 1, calls=99, result_chars=300)
    browser = Browser()
    shots: dict[str, list[Path]] = {}
    try:
        for key, folder in folders.items():
            server = ViewServer(Folder(folder))
            threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                shots[f"list-{key}"] = shoot(browser, server.url + "#/", "list", out, f"list-{key}")
                runs = [r["path"] for r in server.runs.listing()["runs"]]
                if key == "one":
                    shots["run-one"] = shoot(browser, server.url + "#/run?path=" + runs[0], "run", out, "run-one")
                if key == "hundred":
                    shots["run-hundred"] = shoot(browser, server.url + "#/run?path=" + runs[0], "run", out,
                                                 "run-hundred")
                if key == "fifty":
                    rel = bench.name
                    shots["bench"] = shoot(browser, server.url + "#/bench?path=" + rel, "bench", out, "bench")
                    pair = [r for r in runs if "/log_stats/" in r and r.endswith(("react.jsonl", "code.jsonl"))
                            and "/run-1/" in r]
                    pair.sort(key=lambda r: "/react/" not in r)
                    shots["compare"] = shoot(browser, server.url + f"#/compare?a={pair[0]}&b={pair[1]}", "compare",
                                             out, "compare")
            finally:
                server.shutdown()
                server.server_close()
    finally:
        browser.close()
    for name, paths in shots.items():
        print(name, *(str(p) for p in paths))
    if args.docs:
        images = ROOT / "docs" / "images"
        images.mkdir(parents=True, exist_ok=True)
        for name, shot in (("view-list", "list-fifty"), ("view-run", "run-one"), ("view-compare", "compare"),
                           ("view-bench", "bench")):
            target = images / f"{name}.png"
            small_png(shots[shot][1], target)  # the 1920x1080 one
            print("wrote", target, f"{target.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
