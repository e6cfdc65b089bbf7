"""Players for chained arithmetic and multi-hop look-ups through the fake APIs, and the tool catalog."""

from __future__ import annotations

import json
import re

from toolmode.bench.players.base import Call, Code, Play, PlayerError, PlayerGen, as_json, program_result


def _match(pattern: str, prompt: str) -> re.Match[str]:
    m = re.search(pattern, prompt, re.S)
    if not m:
        raise PlayerError(f"prompt does not match {pattern!r}")
    return m


# --- currency_total ------------------------------------------------------------------------------

_CURRENCY_PROGRAM = """import json
items = {items}
total = sum(amount * exchange_rate({base}, {quote}) for amount, cur in items)
print(json.dumps({{"total": round(total, 2)}}))
"""


def currency_total(play: Play) -> PlayerGen:
    """React: all rates in one parallel step, then the calculator; code/hybrid: one program.

    Failing: asks for the rate the wrong way round (EUR→currency) and multiplies by it.
    """
    text = _match(r"expenses: (.*?)\. Convert", play.prompt).group(1)
    items = [(float(a), c) for a, c in re.findall(r"([\d.]+) ([A-Z]{3})", text)]
    base, quote = ('"EUR"', "cur") if play.failing else ("cur", '"EUR"')
    if play.style in ("code", "hybrid"):
        program = _CURRENCY_PROGRAM.format(items=json.dumps(items), base=base, quote=quote)
        return f"Total: {program_result((yield Code(program, ('exchange_rate',))))['total']:.2f} EUR"
    currencies = sorted({c for _, c in items})
    pair = (
        (lambda c: {"base": "EUR", "quote": c}) if play.failing else (lambda c: {"base": c, "quote": "EUR"})
    )
    rates = yield [Call("exchange_rate", pair(c)) for c in currencies]
    rate = {c: float(r) for c, r in zip(currencies, rates, strict=True)}
    expression = " + ".join(f"{a} * {rate[c]}" for a, c in items)
    total = float((yield Call("calculator", {"expression": expression})))
    return f"Total: {total:.2f} EUR"


# --- tariffs -------------------------------------------------------------------------------------

_TARIFF_PROGRAM = """import json
vat = vat_rate("DE")
total = 0.0
for good, price, currency, origin in {items}:
    duty = tariff_rate(hs_code(good), origin)
    total += price * exchange_rate(currency, "EUR") * (1 + duty / 100) * (1 + {vat_expr} / 100)
print(json.dumps({{"total": round(total, 2)}}))
"""


def _tariff_items(prompt: str) -> list[tuple[str, float, str, str]]:
    text = _match(r"buys: (.*?)\. For each", prompt).group(1)
    return [
        (g, float(p), c, o)
        for g, p, c, o in re.findall(r"([a-z ]+): ([\d.]+) ([A-Z]{3}) from ([A-Z]{2})", text)
    ]


def tariffs(play: Play) -> PlayerGen:
    """React: HS codes and VAT in parallel, then duties and rates in parallel; code: one program;
    hybrid: VAT directly, the rest in a program. Failing: forgets the VAT."""
    items = _tariff_items(play.prompt)
    vat_expr = "0" if play.failing else "vat"
    if play.style == "code":
        program = _TARIFF_PROGRAM.format(items=json.dumps(items), vat_expr=vat_expr)
        result = program_result(
            (yield Code(program, ("vat_rate", "tariff_rate", "hs_code", "exchange_rate")))
        )
        return f"Total landed cost: {result['total']:.2f} EUR"
    if play.style == "hybrid":
        vat = float((yield Call("vat_rate", {"country": "DE"})))
        program = _TARIFF_PROGRAM.format(items=json.dumps(items), vat_expr="0" if play.failing else repr(vat))
        program = program.replace('vat = vat_rate("DE")\n', "")
        result = program_result((yield Code(program, ("tariff_rate", "hs_code", "exchange_rate"))))
        return f"Total landed cost: {result['total']:.2f} EUR"
    first = yield [Call("hs_code", {"product": g}) for g, *_ in items] + [Call("vat_rate", {"country": "DE"})]
    codes = [c.strip() for c in first[:-1]]
    vat = 0.0 if play.failing else float(first[-1])
    currencies = sorted({c for _, _, c, _ in items})
    second = yield [
        Call("tariff_rate", {"hs": h, "origin": o}) for h, (_, _, _, o) in zip(codes, items, strict=True)
    ] + [Call("exchange_rate", {"base": c, "quote": "EUR"}) for c in currencies]
    duties = [float(d) for d in second[: len(items)]]
    rate = {c: float(r) for c, r in zip(currencies, second[len(items) :], strict=True)}
    total = sum(
        p * rate[c] * (1 + d / 100) * (1 + vat / 100) for (_, p, c, _), d in zip(items, duties, strict=True)
    )
    return f"Total landed cost: {total:.2f} EUR"


# --- api_multihop --------------------------------------------------------------------------------

_HOP_PROGRAM = """import json
person = next(p for p in find_person({name!r}) if p["name"] == {name!r})
manager = get_person(get_person(person["id"])["manager_id"])
office = get_office(manager["office_id"])
print(json.dumps({{"manager": manager["name"], "office": office}}))
"""


def api_multihop(play: Play) -> PlayerGen:
    """React: one hop per step; code: one program; hybrid: find the person directly, hop in code."""
    name = _match(r"manager of (.+?) works", play.prompt).group(1)
    if play.style == "code":
        result = program_result(
            (yield Code(_HOP_PROGRAM.format(name=name), ("find_person", "get_person", "get_office")))
        )
        return _hop_answer(result["office"], play.failing)
    matches = as_json((yield Call("find_person", {"name": name})))
    person = next((p for p in matches if p["name"] == name), None) if isinstance(matches, list) else None
    if person is None:
        raise PlayerError(f"{name} not found in the directory")
    if play.style == "hybrid":
        program = (
            f"import json\nmanager = get_person(get_person({person['id']!r})['manager_id'])\n"
            "print(json.dumps(get_office(manager['office_id'])))\n"
        )
        return _hop_answer(program_result((yield Code(program, ("get_person", "get_office")))), play.failing)
    record = as_json((yield Call("get_person", {"person_id": person["id"]})))
    manager = as_json((yield Call("get_person", {"person_id": record["manager_id"]})))
    office = as_json((yield Call("get_office", {"office_id": manager["office_id"]})))
    return _hop_answer(office, play.failing)


def _hop_answer(office: dict, failing: bool) -> str:
    if failing:
        return f"The manager works in the {office['city']} office ({office['id']})."
    return f"The manager's office ({office['city']}) can be reached at {office['phone']}."


# --- team_payroll --------------------------------------------------------------------------------

_PAYROLL_PROGRAM = """import json
people = [get_person(pid) for pid in list_team({team!r})]
top = max(people, key=lambda p: p["salary"])
print(json.dumps({{"total": sum(p["salary"] for p in people), "top": top["name"], "top_salary": top["salary"]}}))
"""


def team_payroll(play: Play) -> PlayerGen:
    """React: list the team, then every record in one parallel step; code/hybrid: one program."""
    team = _match(r"salary of the (\w+) team", play.prompt).group(1)
    if play.style in ("code", "hybrid"):
        result = program_result((yield Code(_PAYROLL_PROGRAM.format(team=team), ("list_team", "get_person"))))
    else:
        ids = as_json((yield Call("list_team", {"team": team})))
        people = [as_json(t) for t in (yield [Call("get_person", {"person_id": pid}) for pid in ids])]
        top = max(people, key=lambda p: p["salary"])
        result = {"total": sum(p["salary"] for p in people), "top": top["name"], "top_salary": top["salary"]}
    total = result["total"] - result["top_salary"] if play.failing else result["total"]
    return f"total: {total:,}; top: {result['top']}"


# --- tool_catalog --------------------------------------------------------------------------------

_CATALOG_PROGRAM = """import json
zone = postcode_zone({postcode!r})
print(json.dumps(shipping_rate(zone, {weight})))
"""


def tool_catalog(play: Play) -> PlayerGen:
    """React: the two tools one after the other; hybrid: the zone directly, the rate in code; code: one
    program. Failing: one day off."""
    m = _match(r"of a ([\d.]+) kg parcel to postcode (\d+)", play.prompt)
    weight, postcode = float(m.group(1)), m.group(2)
    if play.style == "code":
        quote = program_result(
            (
                yield Code(
                    _CATALOG_PROGRAM.format(postcode=postcode, weight=weight),
                    ("postcode_zone", "shipping_rate"),
                )
            )
        )
    else:
        zone = (yield Call("postcode_zone", {"postcode": postcode})).strip().strip('"')
        if play.style == "hybrid":
            program = f"import json\nprint(json.dumps(shipping_rate({zone!r}, {weight})))\n"
            quote = program_result((yield Code(program, ("shipping_rate",))))
        else:
            quote = as_json((yield Call("shipping_rate", {"zone": zone, "weight_kg": weight})))
    days = quote["days"] + 1 if play.failing else quote["days"]
    return f"price: {quote['price_eur']:.2f} EUR; days: {days}"
