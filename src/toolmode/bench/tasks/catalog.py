"""A 50-tool catalog: two tools answer the question, 48 are plausible distractors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolmode.bench.parse import has_number, numbers_in
from toolmode.bench.task import CheckResult, Task, TaskEnv
from toolmode.bench.tasks.common import BUILTIN_NAMES, rng
from toolmode.tools.base import Tool

# (name, description, parameters) of the distractors; several sound close to the two real tools.
_DISTRACTORS: list[tuple[str, str, dict[str, str]]] = [
    ("postcode_to_city", "City name for a postcode.", {"postcode": "string"}),
    (
        "shipping_insurance_quote",
        "Price of insurance for a parcel of a declared value, in EUR.",
        {"value_eur": "number"},
    ),
    (
        "shipping_label_create",
        "Create a printable shipping label; returns a label id.",
        {"address": "string"},
    ),
    ("track_parcel", "Tracking events of a parcel by tracking number.", {"tracking_number": "string"}),
    ("customs_form_fill", "Fill a customs declaration form.", {"contents": "string", "value_eur": "number"}),
    (
        "warehouse_stock",
        "Units in stock of a product at a warehouse.",
        {"sku": "string", "warehouse": "string"},
    ),
    (
        "pickup_schedule",
        "Schedule a courier pickup at an address on a date.",
        {"address": "string", "date": "string"},
    ),
    ("return_label_create", "Create a return label for an order.", {"order_id": "string"}),
    (
        "weather_forecast",
        "Weather forecast for a city for the next days.",
        {"city": "string", "days": "integer"},
    ),
    ("convert_temperature", "Convert a temperature between C and F.", {"value": "number", "unit": "string"}),
    ("translate_text", "Translate text into a target language.", {"text": "string", "target": "string"}),
    ("send_email", "Send an email.", {"to": "string", "subject": "string", "body": "string"}),
    (
        "create_invoice",
        "Create an invoice for a customer.",
        {"customer_id": "string", "amount_eur": "number"},
    ),
    ("refund_payment", "Refund a payment.", {"payment_id": "string"}),
    ("customer_lookup", "Customer record by id.", {"customer_id": "string"}),
    ("order_status", "Status of an order.", {"order_id": "string"}),
    ("list_orders", "Orders of a customer.", {"customer_id": "string"}),
    ("product_search", "Search the product catalogue.", {"query": "string"}),
    ("product_price", "List price of a product in EUR.", {"sku": "string"}),
    ("apply_coupon", "Apply a coupon to a cart.", {"cart_id": "string", "code": "string"}),
    ("cart_total", "Total of a cart in EUR.", {"cart_id": "string"}),
    ("tax_rate_lookup", "Sales tax rate of a region.", {"region": "string"}),
    ("geocode_address", "Latitude and longitude of an address.", {"address": "string"}),
    (
        "distance_between",
        "Road distance in km between two cities.",
        {"origin": "string", "destination": "string"},
    ),
    ("fuel_price", "Current fuel price per litre in a country.", {"country": "string"}),
    ("vehicle_availability", "Delivery vans free on a date.", {"date": "string"}),
    ("driver_roster", "Drivers on shift on a date.", {"date": "string"}),
    (
        "parcel_dimensions_check",
        "Check that parcel dimensions (cm) are within limits.",
        {"length": "number", "width": "number", "height": "number"},
    ),
    (
        "volumetric_weight",
        "Volumetric weight in kg of a parcel from its dimensions in cm.",
        {"length": "number", "width": "number", "height": "number"},
    ),
    ("holiday_calendar", "Public holidays of a country in a year.", {"country": "string", "year": "integer"}),
    ("business_days_between", "Business days between two dates.", {"start": "string", "end": "string"}),
    ("currency_format", "Format an amount in a locale.", {"amount": "number", "locale": "string"}),
    ("sms_notify", "Send an SMS notification.", {"phone": "string", "text": "string"}),
    ("support_ticket_open", "Open a support ticket.", {"subject": "string", "body": "string"}),
    ("support_ticket_status", "Status of a support ticket.", {"ticket_id": "string"}),
    ("employee_directory", "Find an employee by name.", {"name": "string"}),
    (
        "meeting_room_book",
        "Book a meeting room.",
        {"room": "string", "start": "string", "minutes": "integer"},
    ),
    ("expense_submit", "Submit an expense claim.", {"amount_eur": "number", "reason": "string"}),
    ("stock_quote", "Latest stock price for a ticker symbol.", {"symbol": "string"}),
    ("news_headlines", "Latest news headlines on a topic.", {"topic": "string"}),
    ("dictionary_define", "Dictionary definition of a word.", {"word": "string"}),
    (
        "unit_convert",
        "Convert between units (kg, lb, km, mi).",
        {"value": "number", "from_unit": "string", "to_unit": "string"},
    ),
    ("timezone_of_city", "IANA time zone of a city.", {"city": "string"}),
    ("qr_code_create", "Create a QR code image for a text; returns a URL.", {"text": "string"}),
    ("password_strength", "Score the strength of a password.", {"password": "string"}),
    (
        "carbon_footprint_parcel",
        "CO2 in kg for shipping a parcel a distance.",
        {"weight_kg": "number", "km": "number"},
    ),
    ("delivery_slot_options", "Home delivery slots for an address.", {"address": "string"}),
    ("address_validate", "Validate and normalise a postal address.", {"address": "string"}),
]
ZONES = ["Z1", "Z2", "Z3", "Z4"]
_PRICES = {"Z1": (4.9, 0.85, 1), "Z2": (6.4, 1.1, 2), "Z3": (8.9, 1.45, 3), "Z4": (12.5, 2.2, 5)}


def _distractor(name: str, description: str, params: dict[str, str]) -> Tool:
    def fn(**kwargs: Any) -> dict:
        return {"status": "ok", "tool": name, "note": "demo data", "echo": kwargs}

    schema = {
        "type": "object",
        "properties": {p: {"type": t} for p, t in params.items()},
        "required": list(params),
    }
    return Tool(name=name, description=description, parameters=schema, fn=fn, returns="dict")


def catalog_facts(seed: int) -> dict[str, Any]:
    """A postcode → zone table, the asked postcode and weight, and the expected price and days."""
    r = rng("tool_catalog", seed)
    zones = {str(r.randint(10000, 99999)): r.choice(ZONES) for _ in range(30)}
    postcode = r.choice(sorted(zones))
    weight = round(r.uniform(0.5, 19.5), 1)
    base, per_kg, days = _PRICES[zones[postcode]]
    return {
        "zones": zones,
        "postcode": postcode,
        "weight": weight,
        "price": round(base + per_kg * weight, 2),
        "days": days,
    }


def catalog_tools(env: TaskEnv) -> list[Tool]:
    """Builtins, the two tools that matter, and 48 distractors (50 catalog tools in all)."""
    from toolmode.bench.tasks.common import builtins

    zones = env.facts["zones"]

    def postcode_zone(postcode: str) -> str:
        """Shipping zone (Z1..Z4) of a postcode."""
        if postcode.strip() not in zones:
            raise ValueError(f"unknown postcode {postcode}")
        return zones[postcode.strip()]

    def shipping_rate(zone: str, weight_kg: float) -> dict:
        """Standard parcel shipping for a zone and weight.

        Returns: {"price_eur": float, "days": int} (price rounded to cents).
        """
        if zone not in _PRICES:
            raise ValueError(f"unknown zone {zone}; zones are {', '.join(ZONES)}")
        base, per_kg, days = _PRICES[zone]
        return {"price_eur": round(base + per_kg * weight_kg, 2), "days": days}

    catalog = [_distractor(*d) for d in _DISTRACTORS[:24]]
    catalog += [Tool.from_function(postcode_zone), Tool.from_function(shipping_rate)]
    catalog += [_distractor(*d) for d in _DISTRACTORS[24:]]
    return builtins(env) + catalog


def check_catalog(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The price (to the cent) and the delivery days."""
    if not has_number(answer, facts["price"]):
        return CheckResult(False, f"expected price {facts['price']:.2f} EUR")
    if facts["days"] not in numbers_in(answer):
        return CheckResult(False, f"expected {facts['days']} days")
    return CheckResult(True, f"{facts['price']:.2f} EUR, {facts['days']} days")


def catalog_tasks() -> list[Task]:
    """The 50-tool catalog task."""
    names = [d[0] for d in _DISTRACTORS] + ["postcode_zone", "shipping_rate"]
    assert len(names) == 50
    return [
        Task(
            name="tool_catalog",
            kind="tool-choice",
            prompt=(
                "How much does standard shipping of a {weight} kg parcel to postcode {postcode} cost in EUR, and "
                "how many days does it take? Answer as `price: <EUR>; days: <n>`."
            ),
            build=lambda workspace, seed: catalog_facts(seed),
            tools=catalog_tools,
            check=check_catalog,
            hidden=[*BUILTIN_NAMES, *names],
            direct=["postcode_zone"],
        )
    ]
