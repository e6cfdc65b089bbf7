"""Chained arithmetic and multi-hop look-ups through small in-process fake APIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolmode.bench.parse import has_number, mentions, normalize
from toolmode.bench.task import CheckResult, Task, TaskEnv
from toolmode.bench.tasks.common import BUILTIN_NAMES, MOST, builtins, first_after, rng
from toolmode.tools.base import Tool

_EUR_PER = {"USD": 0.9213, "GBP": 1.1687, "JPY": 0.006132, "CHF": 1.0478, "CNY": 0.12741, "SEK": 0.08693}


def rates_for(seed: int) -> dict[str, float]:
    """EUR per unit of each currency, jittered by the seed so answers cannot be memorised."""
    r = rng("rates", seed)
    return {cur: round(v * r.uniform(0.95, 1.05), 6) for cur, v in _EUR_PER.items()} | {"EUR": 1.0}


def _rate_tool(rates: dict[str, float]) -> Tool:
    def exchange_rate(base: str, quote: str) -> float:
        """Exchange rate: how many units of `quote` one unit of `base` buys (ISO codes, e.g. USD, EUR).

        Returns: the rate as a float.
        """
        b, q = base.strip().upper(), quote.strip().upper()
        if b not in rates or q not in rates:
            raise ValueError(f"unknown currency; known: {', '.join(sorted(rates))}")
        return round(rates[b] / rates[q], 6)

    return Tool.from_function(exchange_rate)


def build_expenses(workspace: Path, seed: int) -> dict[str, Any]:
    """Six expenses in foreign currencies; facts: their EUR total and the lines for the prompt."""
    r = rng("currency_total", seed)
    rates = rates_for(seed)
    items = []
    for cur in r.sample(sorted(_EUR_PER), 6):
        amount = round(r.uniform(20, 900), 2) if cur != "JPY" else float(r.randint(2_000, 90_000))
        items.append((amount, cur))
    total = sum(amount * round(rates[cur] / rates["EUR"], 6) for amount, cur in items)
    text = "; ".join(f"{amount:.2f} {cur}" for amount, cur in items)
    return {"items": text, "total": round(total, 2), "rates": rates}


def check_total(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The EUR total, to within a cent or 0.01 %."""
    if not has_number(answer, facts["total"], rel=1e-4, abs_tol=0.02):
        return CheckResult(False, f"expected total {facts['total']:.2f}")
    return CheckResult(True, f"total {facts['total']:.2f}")


_GOODS = {
    "bicycle helmet": "6506.10",
    "espresso machine": "8516.71",
    "wool scarf": "6117.10",
    "ceramic vase": "6913.90",
    "running shoes": "6404.11",
    "desk lamp": "9405.21",
}


def tariff_facts(seed: int) -> dict[str, Any]:
    """Three imports with price, currency and origin; tariff rates per HS code and origin; the total."""
    r = rng("tariffs", seed)
    rates = rates_for(seed)
    duties = {
        (hs, origin): round(r.uniform(0, 12), 1) for hs in _GOODS.values() for origin in ["CN", "US", "CH"]
    }
    vat = 19.0
    items: list[dict[str, Any]] = []
    for good in r.sample(sorted(_GOODS), 3):
        cur, origin = r.choice([("USD", "US"), ("CNY", "CN"), ("CHF", "CH")])
        price = round(r.uniform(30, 700), 2) if cur != "CNY" else round(r.uniform(200, 5000), 2)
        items.append({"good": good, "price": price, "currency": cur, "origin": origin})
    total = 0.0
    for it in items:
        eur = it["price"] * round(rates[it["currency"]] / rates["EUR"], 6)
        total += eur * (1 + duties[(_GOODS[it["good"]], it["origin"])] / 100) * (1 + vat / 100)
    text = "; ".join(f"{it['good']}: {it['price']:.2f} {it['currency']} from {it['origin']}" for it in items)
    return {"items": text, "total": round(total, 2), "rates": rates, "duties": duties, "vat": vat}


def tariff_tools(env: TaskEnv) -> list[Tool]:
    """Builtins + exchange_rate, hs_code, tariff_rate and vat_rate over the episode's facts."""
    duties = env.facts["duties"]
    vat = env.facts["vat"]

    def hs_code(product: str) -> str:
        """The customs HS code of a product description, e.g. "desk lamp" -> "9405.21"."""
        code = _GOODS.get(normalize(product))
        if code is None:
            raise ValueError(f"no HS code for {product!r}")
        return code

    def tariff_rate(hs: str, origin: str) -> float:
        """EU import duty in percent for an HS code and a country of origin (ISO 2-letter, e.g. CN)."""
        key = (hs.strip(), origin.strip().upper())
        if key not in duties:
            raise ValueError(f"no tariff for HS {hs} from {origin}")
        return duties[key]

    def vat_rate(country: str) -> float:
        """VAT in percent charged on imports into a country (ISO 2-letter code, e.g. DE)."""
        if country.strip().upper() != "DE":
            raise ValueError("only DE is known")
        return vat

    extra = [Tool.from_function(f) for f in (hs_code, tariff_rate, vat_rate)]
    return builtins(env) + [_rate_tool(env.facts["rates"])] + extra


_FIRST = [
    "Lena",
    "Omar",
    "Priya",
    "Jonas",
    "Mei",
    "Tomas",
    "Aisha",
    "Kenji",
    "Sofia",
    "Diego",
    "Nadia",
    "Pavel",
]
_LAST = ["Park", "Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Novak", "Silva", "Weber", "Kowalski"]
_TEAMS = ["platform", "payments", "growth", "research"]
_OFFICES = {"OF-1": "Lisbon", "OF-2": "Oslo", "OF-3": "Osaka", "OF-4": "Denver"}


def people_facts(seed: int) -> dict[str, Any]:
    """A staff directory: people with team, manager, office and salary; offices with phone numbers."""
    r = rng("people", seed)
    names = r.sample([f"{f} {la}" for f in _FIRST for la in _LAST], 40)
    people: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        pid = f"P{100 + i}"
        people[pid] = {
            "id": pid,
            "name": name,
            "team": _TEAMS[i % len(_TEAMS)],
            "office_id": r.choice(sorted(_OFFICES)),
            "salary": r.randint(48, 160) * 1000,
            "manager_id": None,
        }
    ids = sorted(people)
    for pid in ids[4:]:
        people[pid]["manager_id"] = ids[ids.index(pid) % 4]
    offices = {
        oid: {
            "id": oid,
            "city": city,
            "phone": f"+{r.randint(1, 49)} {r.randint(100, 999)} {r.randint(1000, 9999)}",
        }
        for oid, city in _OFFICES.items()
    }
    return {"people": people, "offices": offices}


def directory_tools(env: TaskEnv) -> list[Tool]:
    """Builtins + a fake staff API: find_person, get_person, get_office, list_team."""
    people, offices = env.facts["people"], env.facts["offices"]

    def find_person(name: str) -> list[dict]:
        """Search the staff directory by (part of a) name.

        Returns: list of {"id", "name", "team"} for every match.
        """
        q = normalize(name)
        return [
            {"id": p["id"], "name": p["name"], "team": p["team"]}
            for p in people.values()
            if q in normalize(p["name"])
        ]

    def get_person(person_id: str) -> dict:
        """Full record of a person: {"id", "name", "team", "office_id", "salary", "manager_id"}."""
        if person_id not in people:
            raise KeyError(f"no person {person_id}")
        return dict(people[person_id])

    def get_office(office_id: str) -> dict:
        """Details of an office: {"id", "city", "phone"}."""
        if office_id not in offices:
            raise KeyError(f"no office {office_id}")
        return dict(offices[office_id])

    def list_team(team: str) -> list[str]:
        """Person ids of everyone in a team (platform, payments, growth, research)."""
        return [p["id"] for p in people.values() if p["team"] == normalize(team)]

    return builtins(env) + [Tool.from_function(f) for f in (find_person, get_person, get_office, list_team)]


def build_multihop(workspace: Path, seed: int) -> dict[str, Any]:
    """Pick a person who has a manager; facts: the manager's office phone."""
    facts = people_facts(seed)
    r = rng("multihop", seed)
    pid = r.choice([p for p, rec in facts["people"].items() if rec["manager_id"]])
    person = facts["people"][pid]
    manager = facts["people"][person["manager_id"]]
    return facts | {"name": person["name"], "phone": facts["offices"][manager["office_id"]]["phone"]}


def check_phone(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The phone number, digits compared without spacing or punctuation."""
    digits = "".join(ch for ch in facts["phone"] if ch.isdigit())
    if digits not in "".join(ch for ch in normalize(answer) if ch.isdigit()):
        return CheckResult(False, f"expected phone {facts['phone']}")
    return CheckResult(True, facts["phone"])


def build_payroll(workspace: Path, seed: int) -> dict[str, Any]:
    """Pick a team; facts: its salary total and its best-paid member."""
    facts = people_facts(seed)
    team = rng("payroll", seed).choice(_TEAMS)
    members = [p for p in facts["people"].values() if p["team"] == team]
    top = max(members, key=lambda p: p["salary"])
    return facts | {
        "team": team,
        "total": sum(p["salary"] for p in members),
        "top": top["name"],
        "members": [p["name"] for p in members],
    }


def check_payroll(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The salary total and the best-paid member's name."""
    if not has_number(answer, facts["total"], abs_tol=0.5):
        return CheckResult(False, f"expected total {facts['total']}")
    named = first_after(answer, MOST + ["earns"], facts["members"])
    if named != facts["top"] and not (mentions(answer, facts["top"]) and named is None):
        return CheckResult(False, f"best paid: expected {facts['top']}, answer says {named}")
    return CheckResult(True, f"total {facts['total']}, top {facts['top']}")


def api_tasks() -> list[Task]:
    """The chained-arithmetic and multi-hop look-up tasks."""
    not_web = [n for n in BUILTIN_NAMES if n not in ("calculator",)]
    return [
        Task(
            name="currency_total",
            kind="chained-arithmetic",
            prompt=(
                "A trip had these expenses: {items}. Convert each to EUR with the exchange_rate tool (do not "
                "round intermediate values) and give the total in EUR with 2 decimals."
            ),
            build=build_expenses,
            tools=lambda env: builtins(env) + [_rate_tool(env.facts["rates"])],
            check=check_total,
            hidden=not_web + ["exchange_rate"],
            direct=["exchange_rate"],
        ),
        Task(
            name="tariffs",
            kind="chained-arithmetic",
            prompt=(
                "An importer in Germany (DE) buys: {items}. For each item: find its HS code, the import "
                "duty for that HS code and origin, and convert the price to EUR. Landed cost = price in EUR × "
                "(1 + duty/100) × (1 + VAT/100), VAT being DE's import VAT. Give the total landed cost in EUR "
                "with 2 decimals (no intermediate rounding)."
            ),
            build=lambda workspace, seed: tariff_facts(seed),
            tools=tariff_tools,
            check=check_total,
            hidden=not_web + ["exchange_rate", "hs_code", "tariff_rate", "vat_rate"],
            direct=["vat_rate"],
        ),
        Task(
            name="api_multihop",
            kind="multi-hop",
            prompt=(
                "Using the staff directory tools: what is the phone number of the office where the manager of "
                "{name} works? Answer with the phone number."
            ),
            build=build_multihop,
            tools=directory_tools,
            check=check_phone,
            hidden=[*BUILTIN_NAMES, "find_person", "get_person", "get_office", "list_team"],
            direct=["find_person"],
        ),
        Task(
            name="team_payroll",
            kind="multi-hop",
            prompt=(
                "Using the staff directory tools: what is the total annual salary of the {team} team, and who "
                "in it earns the most? Answer as `total: <number>; top: <full name>`."
            ),
            build=build_payroll,
            tools=directory_tools,
            check=check_payroll,
            hidden=[*BUILTIN_NAMES, "find_person", "get_person", "get_office", "list_team"],
            direct=["list_team"],
        ),
    ]
