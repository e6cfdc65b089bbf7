"""Players for the batch-file tasks: react reads file by file, code writes one program, hybrid mixes."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from typing import Any

from toolmode.bench.players.base import Call, Code, Play, PlayerGen, as_json, program_result


def names_in(listing: str, suffix: str = "") -> list[str]:
    """File names from a list_dir result (a JSON list of {"name", "type", "size"})."""
    entries = as_json(listing)
    if not isinstance(entries, list):
        return []
    return [e["name"] for e in entries if isinstance(e, dict) and e.get("name", "").endswith(suffix)]


# --- log_stats -----------------------------------------------------------------------------------

_LOG_PROGRAM = """import json
stats = {}
for entry in list_dir("logs"):
    lines = read_file("logs/" + entry["name"]).splitlines()
    errors = sum(1 for line in lines if line.split()[1:2] == ["ERROR"])
    stats[entry["name"]] = {"lines": len(lines), "errors": errors}
print(json.dumps(stats))
"""

_LOG_HYBRID = """import json
stats = {}
for name in %s:
    lines = read_file("logs/" + name).splitlines()
    stats[name] = [len(lines), sum(1 for line in lines if line.split()[1:2] == ["ERROR"])]
print(json.dumps(stats))
"""


def _log_answer(stats: dict[str, dict[str, int]], failing: bool) -> str:
    lines = [f"{name}: {s['lines']} lines, {s['errors']} ERROR" for name, s in stats.items()]
    pick = min if failing else max
    top = pick(stats, key=lambda n: stats[n]["errors"])
    return "\n".join([*lines, f"most errors: {top}"])


def _count(text: str) -> dict[str, int]:
    lines = text.splitlines()
    return {"lines": len(lines), "errors": sum(1 for line in lines if line.split()[1:2] == ["ERROR"])}


def log_stats(play: Play) -> PlayerGen:
    """React: list, then read one file per step; code: one program; hybrid: list directly, count in code."""
    if play.style == "code":
        stats = program_result((yield Code(_LOG_PROGRAM, ("list_dir", "read_file"))))
        return _log_answer(stats, play.failing)
    names = names_in((yield Call("list_dir", {"path": "logs"})), ".log")
    if play.style == "hybrid":
        raw = program_result((yield Code(_LOG_HYBRID % json.dumps(names), ("read_file",))))
        stats = {n: {"lines": v[0], "errors": v[1]} for n, v in raw.items()}
        return _log_answer(stats, play.failing)
    stats = {}
    for name in names:
        stats[name] = _count((yield Call("read_file", {"path": f"logs/{name}"})))
    return _log_answer(stats, play.failing)


# --- csv_sales -----------------------------------------------------------------------------------

_SALES_PROGRAM = """import csv, io, json
revenue = {}
for entry in list_dir("sales"):
    rows = csv.DictReader(io.StringIO(read_file("sales/" + entry["name"])))
    revenue[entry["name"][:-4]] = sum(int(r["units"]) * float(r["unit_price"]) for r in rows)
top = max(revenue, key=revenue.get)
print(json.dumps({"total": round(sum(revenue.values()), 2), "top": top}))
"""


def _revenue(text: str) -> float:
    return sum(int(r["units"]) * float(r["unit_price"]) for r in csv.DictReader(io.StringIO(text)))


def csv_sales(play: Play) -> PlayerGen:
    """React: list, then read all 24 files in one parallel step; code/hybrid: one program."""
    if play.style == "code":
        result = program_result((yield Code(_SALES_PROGRAM, ("list_dir", "read_file"))))
        total, top = result["total"], result["top"]
    else:
        names = names_in((yield Call("list_dir", {"path": "sales"})), ".csv")
        if play.style == "hybrid":
            program = _SALES_PROGRAM.replace('list_dir("sales")', json.dumps([{"name": n} for n in names]))
            result = program_result((yield Code(program, ("read_file",))))
            total, top = result["total"], result["top"]
        else:
            texts = yield [Call("read_file", {"path": f"sales/{n}"}) for n in names]
            revenue = {n[:-4]: _revenue(t) for n, t in zip(names, texts, strict=True)}
            total, top = round(sum(revenue.values()), 2), max(revenue, key=lambda s: revenue[s])
    if play.failing:
        total = round(total * 0.9, 2)
    return f"total: {total:,.2f}; top store: {top}"


# --- config_scan ---------------------------------------------------------------------------------

_CONFIG_PROGRAM = """import json
risky = []
for entry in list_dir("configs"):
    settings = {}
    for line in read_file("configs/" + entry["name"]).splitlines():
        line = line.strip()
        if "=" in line and not line.startswith("#"):
            key, value = (part.strip() for part in line.split("=", 1))
            settings[key] = value
    if int(settings["max_connections"]) > 100 and settings["tls"] == "off":
        risky.append(entry["name"][:-5])
print(json.dumps(risky))
"""


def _config_program(failing: bool) -> str:
    # The failing player's bug: it reads commented-out settings as if they were set.
    return (
        _CONFIG_PROGRAM.replace("line = line.strip()", 'line = line.strip().lstrip("# ")')
        if failing
        else _CONFIG_PROGRAM
    )


def _risky(text: str, failing: bool) -> bool:
    settings = {}
    for line in text.splitlines():
        line = line.strip().lstrip("# ") if failing else line.strip()
        if "=" in line and not line.startswith("#"):
            key, value = (part.strip() for part in line.split("=", 1))
            settings[key] = value
    return int(settings.get("max_connections", 0)) > 100 and settings.get("tls") == "off"


def config_scan(play: Play) -> PlayerGen:
    """React: read all configs in one parallel step; code: one program; hybrid: list, then a program."""
    if play.style == "code":
        risky = program_result((yield Code(_config_program(play.failing), ("list_dir", "read_file"))))
        return ", ".join(risky) if risky else "none"
    names = names_in((yield Call("list_dir", {"path": "configs"})), ".conf")
    if play.style == "hybrid":
        program = _config_program(play.failing).replace(
            'list_dir("configs")', json.dumps([{"name": n} for n in names])
        )
        risky = program_result((yield Code(program, ("read_file",))))
    else:
        texts = yield [Call("read_file", {"path": f"configs/{n}"}) for n in names]
        risky = [n[:-5] for n, t in zip(names, texts, strict=True) if _risky(t, play.failing)]
    return ", ".join(risky) if risky else "none"


# --- orders_cn -----------------------------------------------------------------------------------

_ORDERS_PROGRAM = """import json
count, total = 0, 0.0
for entry in list_dir("orders"):
    for order in json.loads(read_file("orders/" + entry["name"])):
        if order["状态"] == "已完成":
            count += 1
            total += order["金额"]
print(json.dumps({"count": count, "total": round(total, 2)}))
"""


def orders_cn(play: Play) -> PlayerGen:
    """React: read the monthly files in parallel; code: one program; hybrid: list, then a program."""
    program = (
        _ORDERS_PROGRAM.replace('order["状态"] == "已完成"', "True") if play.failing else _ORDERS_PROGRAM
    )
    if play.style == "code":
        result = program_result((yield Code(program, ("list_dir", "read_file"))))
    else:
        names = names_in((yield Call("list_dir", {"path": "orders"})), ".json")
        if play.style == "hybrid":
            program = program.replace('list_dir("orders")', json.dumps([{"name": n} for n in names]))
            result = program_result((yield Code(program, ("read_file",))))
        else:
            texts = yield [Call("read_file", {"path": f"orders/{n}"}) for n in names]
            done = [o for t in texts for o in json.loads(t) if play.failing or o["状态"] == "已完成"]
            result = {"count": len(done), "total": round(sum(o["金额"] for o in done), 2)}
    return f"已完成的订单共 {result['count']} 笔，总金额为 {result['total']:,.2f} 元。"


# --- write_report --------------------------------------------------------------------------------

_REPORT_PROGRAM = """totals = {}
for entry in list_dir("inventory"):
    for line in read_file("inventory/" + entry["name"]).splitlines():
        if line.strip() and not line.startswith("#"):
            sku, qty = line.split()
            totals[sku] = totals.get(sku, 0) + int(qty)
rows = ["%s"] + [f"{sku},{totals[sku]}" for sku in sorted(totals)]
print(write_file("report.csv", "\\n".join(rows) + "\\n"))
"""


def _report(texts: list[str], header: str) -> str:
    totals: Counter[str] = Counter()
    for text in texts:
        for line in text.splitlines():
            if line.strip() and not line.startswith("#"):
                sku, qty = line.split()
                totals[sku] += int(qty)
    return "\n".join([header, *(f"{sku},{totals[sku]}" for sku in sorted(totals))]) + "\n"


def write_report(play: Play) -> PlayerGen:
    """React: read, then write_file; code: one program that writes; hybrid: list, then a program."""
    header = "sku,quantity" if play.failing else "sku,total_qty"
    program = _REPORT_PROGRAM % header
    if play.style == "code":
        yield Code(program, ("list_dir", "read_file", "write_file"))
        return "done"
    names = names_in((yield Call("list_dir", {"path": "inventory"})), ".txt")
    if play.style == "hybrid":
        program = program.replace('list_dir("inventory")', json.dumps([{"name": n} for n in names]))
        yield Code(program, ("read_file", "write_file"))
        return "done"
    texts = yield [Call("read_file", {"path": f"inventory/{n}"}) for n in names]
    yield Call("write_file", {"path": "report.csv", "content": _report(texts, header)})
    return "done"


# --- log_diagnosis -------------------------------------------------------------------------------

_DIAG_PROGRAM = """import collections, json
errors = {}
for entry in list_dir("logs"):
    lines = read_file("logs/" + entry["name"]).splitlines()
    errors[entry["name"][:-4]] = [line.split(" ERROR ", 1)[1] for line in lines if " ERROR " in line]
ranked = sorted(errors, key=lambda s: len(errors[s]), reverse=True)
worst = ranked[0]
print(json.dumps({"ranked": ranked, "counts": {s: len(errors[s]) for s in ranked},
                  "messages": collections.Counter(errors[worst]).most_common(2)}))
"""


def _diagnose(errors: dict[str, list[str]]) -> dict[str, Any]:
    ranked = sorted(errors, key=lambda s: len(errors[s]), reverse=True)
    return {"ranked": ranked, "messages": Counter(errors[ranked[0]]).most_common(2)}


def _diag_answer(result: dict[str, Any], failing: bool) -> str:
    if failing:
        return f"The {result['ranked'][-1]} service is failing: request failed, client closed connection."
    messages = "; ".join(m for m, _ in result["messages"])
    return f"The {result['ranked'][0]} service is failing. Its ERROR lines say: {messages}."


def log_diagnosis(play: Play) -> PlayerGen:
    """React: read every service log in one parallel step; code/hybrid: a program that ranks errors."""
    if play.style == "code":
        return _diag_answer(
            program_result((yield Code(_DIAG_PROGRAM, ("list_dir", "read_file")))), play.failing
        )
    names = names_in((yield Call("list_dir", {"path": "logs"})), ".log")
    if play.style == "hybrid":
        program = _DIAG_PROGRAM.replace('list_dir("logs")', json.dumps([{"name": n} for n in names]))
        return _diag_answer(program_result((yield Code(program, ("read_file",)))), play.failing)
    texts = yield [Call("read_file", {"path": f"logs/{n}"}) for n in names]
    errors = {
        n[:-4]: [line.split(" ERROR ", 1)[1] for line in t.splitlines() if " ERROR " in line]
        for n, t in zip(names, texts, strict=True)
    }
    return _diag_answer(_diagnose(errors), play.failing)
