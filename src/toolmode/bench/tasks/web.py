"""Tasks against the episode's local fixture HTTP server: a page title plus the time; browsing by links."""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from toolmode.bench.parse import has_number, mentions, minutes_apart, times_in
from toolmode.bench.task import CheckResult, Task
from toolmode.bench.tasks.common import builtins, hide_builtins_except, rng

CITIES = {
    "Tokyo": "Asia/Tokyo",
    "Berlin": "Europe/Berlin",
    "New York": "America/New_York",
    "Sydney": "Australia/Sydney",
    "São Paulo": "America/Sao_Paulo",
    "Mumbai": "Asia/Kolkata",
}
TITLES = [
    "Quarterly Harbour Report — Tidewater Logistics",
    "Release Notes: Nimbus 4.2 “Heron”",
    "The Lantern Café · Seasonal Menu",
    "Orbital Mechanics for Gardeners",
    "Field Guide to Urban Moths (2nd edition)",
    "Minutes of the Bicycle Committee, November",
]
TIME_TOLERANCE_MIN = 10


def _filler(r: Any, paragraphs: int) -> str:
    words = [
        "lorem",
        "ipsum",
        "harbor",
        "signal",
        "basalt",
        "meadow",
        "copper",
        "lantern",
        "vector",
        "orchard",
        "quiet",
        "amber",
    ]
    return "\n".join(f"<p>{' '.join(r.choice(words) for _ in range(40))}.</p>" for _ in range(paragraphs))


def title_facts(seed: int) -> dict[str, Any]:
    """City, time zone and page title chosen by the seed."""
    r = rng("time_and_title", seed)
    city = r.choice(sorted(CITIES))
    return {"city": city, "tz": CITIES[city], "title": r.choice(TITLES)}


def title_pages(seed: int) -> dict[str, str]:
    """A page of some length whose <title> is the answer."""
    facts = title_facts(seed)
    r = rng("time_and_title:page", seed)
    head = f"<head><meta charset='utf-8'><title>{html.escape(facts['title'])}</title></head>"
    return {
        "news/today.html": f"<!doctype html><html>{head}<body><h1>Today</h1>{_filler(r, 12)}</body></html>"
    }


def check_time_title(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The page title appears, and a clock time within 10 minutes of now in the city."""
    if not mentions(answer, facts["title"]):
        return CheckResult(False, f"title {facts['title']!r} not in answer")
    now = datetime.now(ZoneInfo(facts["tz"]))
    times = times_in(answer)
    if not any(minutes_apart(t, (now.hour, now.minute)) <= TIME_TOLERANCE_MIN for t in times):
        return CheckResult(False, f"no time near {now:%H:%M} ({facts['tz']}) in answer; found {times}")
    return CheckResult(True, "title and time right")


_PRODUCTS = ["Aurora", "Basalt", "Cobalt", "Drift", "Ember", "Fjord"]


def site_facts(seed: int) -> dict[str, Any]:
    """Each product's max operating temperature, and the product asked about."""
    r = rng("site_browse", seed)
    temps = r.sample(range(38, 96), len(_PRODUCTS))
    specs = {p: {"temp": t, "weight": r.randint(200, 2400)} for p, t in zip(_PRODUCTS, temps, strict=True)}
    return {"product": r.choice(_PRODUCTS), "specs": specs}


def site_pages(seed: int) -> dict[str, str]:
    """Home → catalogue → product page → spec sheet; the answer is only on the spec sheet."""
    facts = site_facts(seed)
    r = rng("site_browse:pages", seed)

    def page(title: str, body: str) -> str:
        return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"

    # fetch_url returns the page's `links` ([{text, url}], absolute URLs) besides its text; the link texts
    # also carry their targets, so a model (or player) that reads only the text can follow them too.
    links = "".join(
        f"<li><a href='/products/{p.lower()}.html'>{p} sensor (/products/{p.lower()}.html)</a></li>"
        for p in _PRODUCTS
    )
    pages = {
        "index.html": page(
            "Northwind Instruments",
            "<h1>Northwind Instruments</h1><ul><li><a href='/about.html'>About us (/about.html)</a></li>"
            "<li><a href='/catalogue.html'>Product catalogue (/catalogue.html)</a></li>"
            "<li><a href='/blog.html'>Blog (/blog.html)</a></li></ul>" + _filler(r, 3),
        ),
        "about.html": page("About", "<h1>About</h1>" + _filler(r, 4)),
        "blog.html": page("Blog", "<h1>Blog</h1><p>Our sensors survive hot summers.</p>" + _filler(r, 4)),
        "catalogue.html": page("Catalogue", f"<h1>Catalogue</h1><ul>{links}</ul>" + _filler(r, 2)),
    }
    for p, spec in facts["specs"].items():
        pages[f"products/{p.lower()}.html"] = page(
            f"{p} sensor",
            f"<h1>{p} sensor</h1>{_filler(r, 2)}<p><a href='/specs/{p.lower()}-datasheet.html'>Datasheet (/specs/{p.lower()}-datasheet.html)</a></p>",
        )
        pages[f"specs/{p.lower()}-datasheet.html"] = page(
            f"{p} datasheet",
            f"<h1>{p} datasheet</h1><table><tr><td>Weight</td><td>{spec['weight']} g</td></tr>"
            f"<tr><td>Max operating temperature</td><td>{spec['temp']} °C</td></tr></table>",
        )
    return pages


def check_site(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
    """The asked product's maximum operating temperature."""
    want = facts["specs"][facts["product"]]["temp"]
    if not has_number(answer, want, abs_tol=0.5):
        return CheckResult(False, f"expected {want} °C")
    return CheckResult(True, f"{want} °C")


def web_tasks() -> list[Task]:
    """The tasks that need the fixture HTTP server."""
    return [
        Task(
            name="time_and_title",
            kind="web",
            prompt=(
                "What is the current time in {city} (time zone {tz}), and what is the title of the web page "
                "{base_url}/news/today.html ? Answer as `time: HH:MM; title: <title>`."
            ),
            build=lambda workspace, seed: title_facts(seed),
            tools=builtins,
            check=check_time_title,
            # +search: the two tools it needs (and the calculator, a plausible third) are found by search.
            hidden=["fetch_url", "current_time", "calculator"],
            direct=["current_time"],
            pages=title_pages,
        ),
        Task(
            name="site_browse",
            kind="web",
            prompt=(
                "The website of Northwind Instruments starts at {base_url}/index.html . Starting there and "
                "following links, find the maximum operating temperature of the {product} sensor. "
                "Answer with the temperature in °C."
            ),
            build=lambda workspace, seed: site_facts(seed),
            tools=builtins,
            check=check_site,
            hidden=hide_builtins_except("fetch_url"),
            direct=["fetch_url"],
            pages=site_pages,
        ),
    ]
