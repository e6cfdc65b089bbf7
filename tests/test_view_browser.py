"""`toolmode view` in a real browser: headless Chromium (Debian's package) driven through chromedriver.

One browser for the module. Every page is checked by its DOM: the rows and steps are there, text a model
wrote is shown as text (markup, `javascript:` links, terminal escapes and bidi overrides included), and no
script from a trace ran (it would have changed `document.title` or set `window.__pwned`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from tests.browser import Browser, missing
from tests.view_data import BIG, MARKUP, Traces, build, serving

from toolmode.view.server import ViewServer

REASON = missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no headless Chromium: {REASON}")


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    folder = tmp_path_factory.mktemp("view-browser")
    traces = build(folder)
    proc = subprocess.run([sys.executable, "-m", "toolmode", "bench", "--scripted", "--tasks", "log_stats", "--modes",
                           "react,code", "--runs", "1", "--no-charts", "--out", str(folder / "runs" / "bench-1")],
                          cwd=folder, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return traces


@pytest.fixture(scope="module")
def server(traces: Traces) -> Iterator[ViewServer]:
    with serving(traces.folder) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    browser = Browser(1280, 900)
    yield browser
    browser.close()


def go(browser: Browser, server: ViewServer, route: str, page: str) -> None:
    browser.open(server.url + route, page)


def assert_nothing_ran(browser: Browser, title: str) -> None:
    """No script from a trace ran, no markup from a trace became an element, no link leads off the page."""
    assert browser.js("return document.title") == title
    assert browser.js("return typeof window.__pwned") == "undefined"
    assert browser.js("return [...document.scripts].map(s => s.getAttribute('src'))") == ["/static/app.js"]
    assert browser.js("return document.querySelectorAll('#app img:not([src^=\"/api/chart\"]), #app a:not([href^=\"#/\"]),"
                      " #app iframe, #app object, #app embed, #app b').length") == 0


def test_the_list_shows_every_run_with_hostile_text_as_text(browser: Browser, server: ViewServer,
                                                            traces: Traces) -> None:
    go(browser, server, "#/", "list")
    paths = browser.js("return [...document.querySelectorAll('table.runs tbody tr')].map(r => r.dataset.path)")
    expected = [traces.hostile, traces.code, traces.big, traces.hundred, *traces.plain, traces.bad_utf8, traces.torn,
                traces.odd]
    assert set(expected) <= set(paths) and len(paths) == len(expected) + 2  # and the bench's two episodes
    row = "table.runs tr[data-path='" + traces.hostile + "']"
    task = browser.text(row + " td.clip a")
    assert task.startswith("\\x1b[31mRED\\x1b[0m \\u202eevil") and MARKUP[:100] in task  # the cell shows 160 characters
    marks = browser.texts(row + " td.clip a .ctl")
    assert marks == ["\\x1b", "\\x1b", "\\u202e", "\\u202c", "\\u2066", "\\u2069", "\\u200b"]  # made visible
    assert_nothing_ran(browser, "toolmode view · runs")
    assert browser.text(f"table.runs tr[data-path='{traces.torn}'] td:last-child") == "unfinished"
    assert browser.console_errors() == []


def test_the_list_filters_and_sorts(browser: Browser, server: ViewServer, traces: Traces) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    go(browser, server, "#/", "list")
    rows = "return [...document.querySelectorAll('table.runs tbody tr')].map(r => r.dataset.path)"
    everything = browser.js(rows)
    search = browser.driver.find_element(By.CSS_SELECTOR, ".filters input[type=search]")
    search.send_keys("INVOICE totals")
    shown = browser.js(rows)
    assert traces.hundred in shown and traces.plain[0] in shown and 0 < len(shown) < len(everything)
    assert all("invoice totals" in browser.text(f"tr[data-path='{p}']").lower() for p in shown)
    search.clear()
    search.send_keys(" ")  # clear() sends no input event; a blank filter shows all again
    assert len(browser.js(rows)) == len(everything)
    Select(browser.driver.find_element(By.CSS_SELECTOR, "select[title=mode]")).select_by_value("code")
    code_rows = browser.js(rows)
    assert traces.code in code_rows and all(
        browser.text(f"tr[data-path='{p}'] td:nth-child(4)") == "code" for p in code_rows)
    Select(browser.driver.find_element(By.CSS_SELECTOR, "select[title=mode]")).select_by_value("")
    Select(browser.driver.find_element(By.CSS_SELECTOR, "select[title=stop]")).select_by_value("unfinished")
    assert browser.js(rows) == [traces.torn]
    Select(browser.driver.find_element(By.CSS_SELECTOR, "select[title=stop]")).select_by_value("")
    steps = "return [...document.querySelectorAll('table.runs tbody tr')].map(r => r.children[6].textContent)"
    browser.driver.find_element(By.CSS_SELECTOR, "th[data-key=steps]").click()
    first = [int(s.replace(",", "")) for s in browser.js(steps) if s != "—"]
    assert first == sorted(first)
    browser.driver.find_element(By.CSS_SELECTOR, "th[data-key=steps]").click()
    again = [int(s.replace(",", "")) for s in browser.js(steps) if s != "—"]
    assert again == sorted(first, reverse=True) and again[0] == 100


def test_a_hostile_run_page_shows_everything_as_text(browser: Browser, server: ViewServer, traces: Traces) -> None:
    go(browser, server, "#/run?path=" + traces.hostile, "run")
    assert_nothing_ran(browser, "toolmode view · run")
    facts = browser.texts("dl.facts dd")
    assert facts[0].startswith("\\x1b[31mRED") and facts[0].endswith(MARKUP)
    call = browser.texts(".item.call pre")
    assert len(call) == 2 and MARKUP.replace('"', '\\"') in call[0] and call[1].endswith(MARKUP)
    assert "\\u001b[31mRED" in call[0]  # JSON's own escape in the arguments; the result holds the raw bytes:
    assert browser.texts(".item.call > pre:last-child .ctl") == [
        "\\x1b", "\\x1b", "\\u202e", "\\u202c", "\\u2066", "\\u2069", "\\u200b"]
    assert browser.text(".step:last-of-type .item pre").endswith(MARKUP)  # the answer
    assert browser.console_errors() == []


def test_code_is_highlighted_and_its_output_shown(browser: Browser, server: ViewServer, traces: Traces) -> None:
    go(browser, server, "#/run?path=" + traces.code, "run")
    assert_nothing_ran(browser, "toolmode view · run")
    assert browser.texts("pre.code .tok-b")[0] == "print"
    assert any(t.startswith("# \\x1b[31mRED") for t in browser.texts("pre.code .tok-c"))
    code = browser.text("pre.code")
    assert code.startswith("print('\\x1b[31mRED") and "\nx = 1  # \\x1b[31mRED" in code and code.endswith(MARKUP)
    printed = browser.texts(".item.call pre")[-1]
    assert printed.startswith("\\x1b[31mRED") and printed.strip().endswith(MARKUP)


def test_a_megabyte_is_cut_until_asked_for(browser: Browser, server: ViewServer, traces: Traces) -> None:
    from selenium.webdriver.common.by import By

    go(browser, server, "#/run?path=" + traces.big, "run")
    buttons = browser.driver.find_elements(By.CSS_SELECTOR, ".item.call button.more")
    pretty = len(json.dumps({"text": BIG}, indent=2))  # the arguments as shown
    assert [b.text for b in buttons] == [f"show all {pretty:,} characters", "show all 1,000,000 characters"]
    result = ".item.call div:last-child > pre"
    assert len(browser.text(result)) == 4000
    buttons[1].click()
    assert browser.js("return document.querySelector(arguments[0]).textContent.length", result) == 1_000_000


def test_a_hundred_step_run_has_every_step(browser: Browser, server: ViewServer, traces: Traces) -> None:
    go(browser, server, "#/run?path=" + traces.hundred, "run")
    assert browser.js("return document.querySelectorAll('section.step').length") == 100
    assert browser.js("return document.querySelectorAll('.cols .col').length") == 100  # one column per request
    heights = browser.js("return [...document.querySelectorAll('.cols .col')].map(c => c.getBoundingClientRect().height)")
    assert heights[-1] > heights[0] > 0  # the prompt grows request by request
    browser.driver.execute_script("document.querySelectorAll('.cols .col')[49].click()")
    top = browser.js("return document.querySelector(\"section.step[data-step='50']\").getBoundingClientRect().top")
    assert abs(top) < 5  # a column takes you to its step


def test_damaged_traces_say_what_is_wrong(browser: Browser, server: ViewServer, traces: Traces) -> None:
    go(browser, server, "#/run?path=" + traces.bad_utf8, "run")
    assert "not UTF-8" in browser.text(".box.warn") and "caf\ufffd" in browser.text("dl.facts")
    go(browser, server, "#/run?path=" + traces.torn, "run")
    warnings = " ".join(browser.texts(".box.warn"))
    assert "is cut" in warnings and "no run_end event" in warnings
    go(browser, server, "#/run?path=" + traces.odd, "run")
    assert "telepathy" in browser.text("details.item summary") and "not a JSON object" in browser.text(".box.warn")
    assert_nothing_ran(browser, "toolmode view · run")
    go(browser, server, "#/run?path=missing.jsonl", "error")
    assert "no such file" in browser.text(".box.bad")
    assert [e.split(" - ")[0] for e in browser.console_errors()] == [server.url + "api/run?path=missing.jsonl"]


def test_two_runs_side_by_side(browser: Browser, server: ViewServer, traces: Traces) -> None:
    from selenium.webdriver.common.by import By

    go(browser, server, "#/", "list")
    for path in (traces.plain[1], traces.plain[2]):
        browser.driver.find_element(By.CSS_SELECTOR, f"tr[data-path='{path}'] input[type=checkbox]").click()
    button = browser.driver.find_element(By.CSS_SELECTOR, ".filters button")
    assert button.text == "compare the two picked (2/2)" and button.is_enabled()
    button.click()
    browser.wait_ready("compare")
    sections = browser.texts(".pair > section h2")
    assert sections == ["react · deepseek-v4-flash"] * 2
    bars = browser.js("return [...document.querySelectorAll('.pair > section')].map(s => s.querySelectorAll('.bar').length)")
    steps = [len([s for s in browser.texts(f".pair > section:nth-child({i}) .bars .name")]) for i in (1, 2)]
    assert bars == steps and all(n >= 1 for n in bars)
    assert "different tasks" in browser.text(".box.warn")


def test_a_bench_page_links_each_episode_to_its_run(browser: Browser, server: ViewServer) -> None:
    from selenium.webdriver.common.by import By

    go(browser, server, "#/bench?path=runs%2Fbench-1", "bench")
    assert browser.text(".banner").startswith("SCRIPTED:")
    rows = browser.texts("main table:first-of-type tbody tr td:first-child")
    assert rows[:2] == ["log_stats", "log_stats"]
    widths = browser.js("return [...document.querySelectorAll('.charts img')].map(i => i.naturalWidth)")
    assert len(widths) == 4 and all(w > 300 for w in widths)  # drawn by the bench's chart code
    links = browser.driver.find_elements(By.CSS_SELECTOR, "table.runs tbody a")
    assert len(links) == 2
    mode = browser.texts("table.runs tbody tr td:nth-child(3)")[1]  # episodes are in the order they finished
    links[1].click()
    browser.wait_ready("run")
    assert browser.text("dl.facts dd:nth-of-type(2)") == mode and mode in ("react", "code")
    assert browser.console_errors() == []


def test_the_policy_stops_inline_script(browser: Browser, server: ViewServer) -> None:
    """The Content-Security-Policy, not only careful code: an inline script added to the page never runs."""
    go(browser, server, "#/", "list")
    ran = browser.js("const s = document.createElement('script'); s.textContent = 'window.__inline = 1';"
                     "document.body.appendChild(s); return typeof window.__inline")
    assert ran == "undefined"
    assert any("Content Security Policy" in e for e in browser.console_errors())


def test_pages_fit_a_small_window(browser: Browser, server: ViewServer, traces: Traces) -> None:
    """At 800x600 no page is wider than the window (long text wraps or is cut, tables drop optional columns)."""
    browser.resize(800, 600)
    try:
        for route, page in (("#/", "list"), ("#/run?path=" + traces.hostile, "run"),
                            ("#/run?path=" + traces.big, "run"), ("#/run?path=" + traces.hundred, "run"),
                            (f"#/compare?a={traces.plain[0]}&b={traces.hundred}", "compare"),
                            ("#/bench?path=runs%2Fbench-1", "bench")):
            go(browser, server, route, page)
            width = browser.js("return document.documentElement.scrollWidth")
            assert width <= 800, (route, width)
        go(browser, server, "#/", "list")
        shown = browser.js("return [...document.querySelectorAll('table.runs thead th')]"
                           ".filter(th => th.offsetParent !== null).map(th => th.dataset.label || th.textContent)")
        assert shown == ["⇆", "task", "mode", "steps", "tokens", "cost", "time", "stopped"]
    finally:
        browser.resize(1280, 900)
