"""Batch file work: many small files to read, count, aggregate or rewrite."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.bench.parse import has_number, mentions, numbers_in, segments
from toolmode.bench.task import CheckResult, Task
from toolmode.bench.tasks.common import MOST, builtins, first_after, hide_builtins_except, rng

LOG_FILES = ["api.log", "auth.log", "billing.log", "search.log", "worker.log"]
_LEVELS = ["INFO"] * 7 + ["WARN"] * 2 + ["DEBUG"]
_MESSAGES = [
    "request handled path=/v1/items ms={n}",
    "cache refresh done keys={n}",
    "user session renewed id=u{n}",
    "slow query took {n}ms",
    "retry scheduled attempt={n}",
    "queue depth={n}",
]
_ERRORS = ["upstream timeout after {n}ms", "db write failed code={n}", "unhandled exception id=e{n}"]


def build_logs(workspace: Path, seed: int) -> dict[str, Any]:
    """Five log files with distinct ERROR counts; facts: lines and errors per file, the top file."""
    r = rng("log_stats", seed)
    error_counts = r.sample(range(2, 14), len(LOG_FILES))
    facts: dict[str, Any] = {"files": {}}
    (workspace / "logs").mkdir(parents=True, exist_ok=True)
    for name, errors in zip(LOG_FILES, error_counts, strict=True):
        total = r.randint(max(errors + 12, 24), 44)
        levels = ["ERROR"] * errors + [r.choice(_LEVELS) for _ in range(total - errors)]
        r.shuffle(levels)
        lines = []
        for i, level in enumerate(levels):
            msg = r.choice(_ERRORS if level == "ERROR" else _MESSAGES).format(n=r.randint(1, 999))
            lines.append(f"2026-11-30T09:{i // 60:02d}:{i % 60:02d}Z {level} {msg}")
        (workspace / "logs" / name).write_text("\n".join(lines) + "\n")
        facts["files"][name] = {"lines": total, "errors": errors}
    facts["top"] = max(facts["files"], key=lambda n: facts["files"][n]["errors"])
    return facts


def check_logs(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """Every file's line and ERROR counts next to its name, and the file with most ERRORs singled out."""
    parts = segments(answer, facts["files"])
    for name, want in facts["files"].items():
        nums = numbers_in(parts[name])
        if want["lines"] not in nums or want["errors"] not in nums:
            return CheckResult(False, f"{name}: expected {want['lines']} lines and {want['errors']} ERROR")
    top = first_after(answer, MOST, list(facts["files"]))
    if top != facts["top"]:
        return CheckResult(False, f"most ERRORs: expected {facts['top']}, answer says {top}")
    return CheckResult(True, "all counts and the top file right")


def build_sales(workspace: Path, seed: int) -> dict[str, Any]:
    """24 store CSV files; facts: total revenue and the top store."""
    r = rng("csv_sales", seed)
    products = {"widget": 4.5, "gadget": 12.25, "gizmo": 7.8, "doohickey": 19.99, "sprocket": 2.35}
    (workspace / "sales").mkdir(parents=True, exist_ok=True)
    per_store: dict[str, float] = {}
    for i in range(1, 25):
        store = f"store-{i:02d}"
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["date", "product", "units", "unit_price"])
        revenue = 0.0
        for day in range(r.randint(6, 12)):
            product = r.choice(list(products))
            units = r.randint(1, 40)
            writer.writerow([f"2026-11-{day + 1:02d}", product, units, f"{products[product]:.2f}"])
            revenue += units * products[product]
        per_store[store] = round(revenue, 2)
        (workspace / "sales" / f"{store}.csv").write_text(buf.getvalue())
    top = max(per_store, key=lambda s: per_store[s])
    return {"total": round(sum(per_store.values()), 2), "top": top, "stores": sorted(per_store)}


def check_sales(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The total revenue (to the cent) and the top store."""
    if not has_number(answer, facts["total"]):
        return CheckResult(False, f"total revenue {facts['total']:.2f} not in answer")
    top = first_after(answer, MOST + ["best"], facts["stores"])
    if top != facts["top"]:
        return CheckResult(False, f"top store: expected {facts['top']}, answer says {top}")
    return CheckResult(True, "total and top store right")


def build_configs(workspace: Path, seed: int) -> dict[str, Any]:
    """20 service configs; facts: the services with max_connections > 100 and tls off."""
    r = rng("config_scan", seed)
    (workspace / "configs").mkdir(parents=True, exist_ok=True)
    names = [f"svc-{w}" for w in r.sample(_SERVICE_WORDS, 20)]
    risky = set(r.sample(names, r.randint(3, 5)))
    for name in names:
        if name in risky:
            conns, tls = r.randint(101, 900), "off"
        else:
            conns, tls = r.choice(
                [(r.randint(10, 100), "off"), (r.randint(101, 900), "on"), (r.randint(10, 100), "on")]
            )
        body = (
            f"# {name} configuration\n[server]\nport = {r.randint(8000, 9000)}\n"
            f"max_connections = {conns}\nworkers = {r.randint(1, 16)}\n\n[security]\ntls = {tls}\n"
            f"# tls = {'on' if tls == 'off' else 'off'} (old setting, commented out)\n"
        )
        (workspace / "configs" / f"{name}.conf").write_text(body)
    return {"risky": sorted(risky), "all": sorted(names)}


_SERVICE_WORDS = [
    "alpha",
    "bravo",
    "cedar",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "maple",
    "nimbus",
    "onyx",
    "pepper",
    "quartz",
    "raven",
    "sable",
    "tundra",
    "umber",
    "violet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
]


def check_configs(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """Exactly the risky services are named (order free)."""
    named = {n for n in facts["all"] if mentions(answer, n)}
    want = set(facts["risky"])
    if named != want:
        return CheckResult(False, f"missing {sorted(want - named)}, extra {sorted(named - want)}")
    return CheckResult(True, f"all {len(want)} services right")


def build_orders(workspace: Path, seed: int) -> dict[str, Any]:
    """8 JSON files of orders with Chinese statuses; facts: count and total of completed orders."""
    r = rng("orders_cn", seed)
    (workspace / "orders").mkdir(parents=True, exist_ok=True)
    total, count = 0, 0
    for month in range(1, 9):
        orders = []
        for i in range(r.randint(5, 9)):
            cents = r.randint(1_000, 900_000)
            status = r.choice(["已完成", "已完成", "已取消", "待付款"])
            orders.append(
                {
                    "id": f"2026{month:02d}-{i:03d}",
                    "客户": r.choice(_CUSTOMERS),
                    "金额": cents / 100,
                    "状态": status,
                }
            )
            if status == "已完成":
                total += cents
                count += 1
        (workspace / "orders" / f"2026-{month:02d}.json").write_text(
            json.dumps(orders, ensure_ascii=False, indent=1)
        )
    return {"total": total / 100, "count": count}


_CUSTOMERS = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄强"]


def check_orders(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The total (yuan, to the fen) and the number of completed orders."""
    if not has_number(answer, facts["total"]):
        return CheckResult(False, f"total {facts['total']:.2f} not in answer")
    if facts["count"] not in numbers_in(answer):
        return CheckResult(False, f"order count {facts['count']} not in answer")
    return CheckResult(True, "total and count right")


def build_inventory(workspace: Path, seed: int) -> dict[str, Any]:
    """6 warehouse files of `sku qty` lines; facts: the expected report rows."""
    r = rng("write_report", seed)
    (workspace / "inventory").mkdir(parents=True, exist_ok=True)
    skus = [f"SKU-{r.randint(1000, 9999)}" for _ in range(14)]
    totals: dict[str, int] = {}
    for wh in ["north", "south", "east", "west", "central", "port"]:
        lines = [f"# warehouse {wh}: sku quantity"]
        for sku in r.sample(skus, r.randint(5, 10)):
            qty = r.randint(0, 250)
            lines.append(f"{sku} {qty}")
            totals[sku] = totals.get(sku, 0) + qty
        (workspace / "inventory" / f"{wh}.txt").write_text("\n".join(lines) + "\n")
    return {"rows": [[sku, totals[sku]] for sku in sorted(totals)]}


def check_inventory(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """`report.csv` exists with header `sku,total_qty` and the right rows sorted by sku."""
    try:  # written by the model: a link or a FIFO there must not make the host read elsewhere or hang
        text = hostfiles.read_text(workspace / "report.csv", limit=10_000_000)
    except (OSError, UnicodeDecodeError) as exc:
        return CheckResult(False, f"report.csv was not written or cannot be read ({exc})")
    rows = [row for row in csv.reader(io.StringIO(text.strip())) if row]
    if not rows or [c.strip() for c in rows[0]] != ["sku", "total_qty"]:
        return CheckResult(False, f"bad header: {rows[0] if rows else None}")
    got = [[c.strip() for c in row] for row in rows[1:]]
    want = [[sku, str(qty)] for sku, qty in facts["rows"]]
    if got != want:
        wrong = next(
            (i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), min(len(got), len(want))
        )
        return CheckResult(
            False, f"{len(got)} rows, expected {len(want)}; first difference at row {wrong + 1}"
        )
    return CheckResult(True, f"report.csv has all {len(want)} rows")


def file_tasks() -> list[Task]:
    """The batch-file tasks."""
    file_hidden = hide_builtins_except("list_dir", "read_file", "run_shell")
    return [
        Task(
            name="log_stats",
            kind="batch-files",
            prompt=(
                "The directory logs/ holds 5 log files. For each file, count its lines and its ERROR lines "
                "(lines whose level is ERROR). Then say which file has the most ERROR lines. Answer with one "
                "line per file, like `api.log: 40 lines, 3 ERROR`, and a last line `most errors: <file>`."
            ),
            build=build_logs,
            tools=builtins,
            check=check_logs,
            hidden=file_hidden,
            direct=["list_dir"],
        ),
        Task(
            name="csv_sales",
            kind="batch-files",
            prompt=(
                "sales/ holds one CSV file per store (columns date, product, units, unit_price). Compute the "
                "total revenue (units × unit_price) over all stores, and find the store with the highest "
                "revenue. Answer as `total: <amount with 2 decimals>; top store: <store name>`."
            ),
            build=build_sales,
            tools=builtins,
            check=check_sales,
            hidden=file_hidden,
            direct=["list_dir"],
        ),
        Task(
            name="config_scan",
            kind="batch-files",
            prompt=(
                "configs/ holds one .conf file per service. List every service whose config sets "
                "max_connections above 100 AND has tls = off (ignore commented-out lines). Answer with the "
                "service names (file names without .conf), comma separated."
            ),
            build=build_configs,
            tools=builtins,
            check=check_configs,
            hidden=file_hidden,
            direct=["list_dir"],
        ),
        Task(
            name="orders_cn",
            kind="batch-files",
            prompt=(
                "orders/ 目录里每个月有一个 JSON 订单文件。请统计所有状态为“已完成”的订单：一共多少笔，"
                "总金额是多少元（保留两位小数）。请用中文回答。"
            ),
            build=build_orders,
            tools=builtins,
            check=check_orders,
            hidden=file_hidden,
            direct=["list_dir"],
        ),
        Task(
            name="write_report",
            kind="write",
            prompt=(
                "inventory/ holds one file per warehouse with lines `SKU quantity` (lines starting with # are "
                "comments). Write report.csv in the workspace root: header `sku,total_qty`, then one row per "
                "SKU with its quantity summed over all warehouses, sorted by SKU, no spaces. Then reply `done`."
            ),
            build=build_inventory,
            tools=builtins,
            check=check_inventory,
            hidden=hide_builtins_except("list_dir", "read_file", "write_file", "run_shell"),
            direct=["list_dir"],
        ),
    ]
