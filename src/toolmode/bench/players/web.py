"""Players for the web tasks: the time + page title, and browsing a local site by its links."""

from __future__ import annotations

import re
from typing import Any

from toolmode.bench.players.base import Call, Code, Play, PlayerError, PlayerGen, as_json, program_result

_TIME_PROMPT = re.compile(
    r"current time in (?P<city>.+?) \(time zone (?P<tz>[^)]+)\).*?(?P<url>https?://\S+)", re.S
)

_TIME_PROGRAM = """import json
now = current_time({tz!r})
page = fetch_url({url!r})
print(json.dumps({{"time": now["time"][:5], "title": page["title"]}}))
"""
# What a model writes when it assumes fetch_url returns the HTML as a string (it returns a dict).
_TIME_PROGRAM_GUESS = """now = current_time({tz!r})
html = fetch_url({url!r})
title = html.split("<title>")[1].split("</title>")[0]
print(now["time"][:5], title)
"""


def _time_prompt(prompt: str) -> dict[str, str]:
    m = _TIME_PROMPT.search(prompt)
    if not m:
        raise PlayerError("cannot read the city, time zone and URL from the prompt")
    return {"tz": m.group("tz"), "url": m.group("url").rstrip(" ?")}


def _time_answer(time: str, title: str, failing: bool) -> str:
    return f"time: {time}; title: {'Today' if failing else title}"


def time_and_title(play: Play) -> PlayerGen:
    """React: both tools in one parallel step; code: one program; hybrid: the time directly, the title in code."""
    p = _time_prompt(play.prompt)
    if play.style == "code":
        result = program_result((yield Code(_TIME_PROGRAM.format(**p), ("current_time", "fetch_url"))))
        return _time_answer(result["time"], result["title"], play.failing)
    if play.style == "hybrid":
        now = as_json((yield Call("current_time", {"timezone": p["tz"]})))
        program = f"page = fetch_url({p['url']!r})\nprint(page['title'])\n"
        title = (yield Code(program, ("fetch_url",))).strip().splitlines()[-1]
        return _time_answer(now["time"][:5], title, play.failing)
    now, page = yield [Call("current_time", {"timezone": p["tz"]}), Call("fetch_url", {"url": p["url"]})]
    return _time_answer(as_json(now)["time"][:5], as_json(page)["title"], play.failing)


def time_and_title_guessing(play: Play) -> PlayerGen:
    """Code style that first treats fetch_url's dict as an HTML string, reads the error, and fixes it."""
    if play.style != "code":
        return (yield from time_and_title(play))
    p = _time_prompt(play.prompt)
    out = yield Code(_TIME_PROGRAM_GUESS.format(**p), ("current_time", "fetch_url"))
    if "AttributeError" not in out:
        raise PlayerError(f"expected the program to fail on the dict, got: {out[:200]!r}")
    result = program_result((yield Code(_TIME_PROGRAM.format(**p), ("current_time", "fetch_url"))))
    return _time_answer(result["time"], result["title"], play.failing)


# --- site_browse ---------------------------------------------------------------------------------

_SITE_PROMPT = re.compile(
    r"starts at (?P<start>https?://\S+?) \..*?temperature of the (?P<product>\w+) sensor", re.S
)
_LINK = re.compile(r"\((/[\w./-]+\.html)\)")

_CRAWL_PROGRAM = """import json, re
start = {start!r}
root = start.rsplit("/", 1)[0]
queue, seen = [start], set()
while queue:
    url = queue.pop(0)
    if url in seen:
        continue
    seen.add(url)
    page = fetch_url(url)
    if page["title"] == {title!r}:
        cells = re.findall(r"Max operating temperature\\s*([\\d.]+)", page["text"])
        print(json.dumps({{"url": url, "temp": cells[0], "weight": re.findall(r"Weight\\s*(\\d+)", page["text"])[0]}}))
        break
    links = [link["url"] for link in page.get("links") or []]  # older fetch_url: targets in the link text
    queue += links or [root + link for link in re.findall(r"\\((/[\\w./-]+\\.html)\\)", page["text"])]
"""


def _links(page: dict[str, Any], root: str) -> list[str]:
    """The page's link URLs: fetch_url's `links`, else the targets written in the link texts."""
    links = page.get("links")
    if isinstance(links, list) and links:
        return [str(x["url"]) for x in links if isinstance(x, dict) and x.get("url")]
    return [root + path for path in _LINK.findall(page.get("text", ""))]


def _spec(text: str, label: str) -> str:
    m = re.search(label + r"\s*([\d.]+)", text)
    if not m:
        raise PlayerError(f"no {label!r} on the datasheet")
    return m.group(1)


def site_browse(play: Play) -> PlayerGen:
    """React and hybrid: follow links one page per step; code: one program that crawls the site."""
    m = _SITE_PROMPT.search(play.prompt)
    if not m:
        raise PlayerError("cannot read the start URL and the product from the prompt")
    start, product = m.group("start"), m.group("product")
    root = start.rsplit("/", 1)[0]
    if play.style == "code":
        program = _CRAWL_PROGRAM.format(start=start, title=f"{product} datasheet")
        result = program_result((yield Code(program, ("fetch_url",))))
        return f"{result['weight']} g" if play.failing else f"{result['temp']} °C"
    page = as_json((yield Call("fetch_url", {"url": start})))
    for want in ("catalogue", product.lower(), "datasheet"):
        link = next((x for x in _links(page, root) if want in x.rsplit("/", 1)[-1]), None)
        if link is None:
            raise PlayerError(f"no link containing {want!r} on {page.get('url')}")
        if want == "datasheet" and play.style == "hybrid":
            program = (
                f"import json, re\npage = fetch_url({link!r})\n"
                "print(json.dumps(dict(re.findall(r'(Weight|Max operating temperature)\\s*([\\d.]+)', page['text']))))\n"
            )
            found = program_result((yield Code(program, ("fetch_url",))))
            return f"{found['Weight']} g" if play.failing else f"{found['Max operating temperature']} °C"
        page = as_json((yield Call("fetch_url", {"url": link})))
    text = page.get("text", "")
    return f"{_spec(text, 'Weight')} g" if play.failing else f"{_spec(text, 'Max operating temperature')} °C"
