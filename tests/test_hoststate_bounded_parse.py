"""Every host-side parse of model- or web-controlled input is bounded in time and size.

Pathological inputs are fed to each parser and their cost is compared with an ordinary input of the same
size, in CPU time of this thread (best of three), as a ratio: quadratic behaviour shows as a ratio in the
hundreds or thousands at these sizes, linear behaviour as a small one. No test compares seconds.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.results import BenchDirError, read_results, read_settings
from toolmode.bounded import MAX_JSON_DEPTH, ParseLimitError, loads_json
from toolmode.mcp.convert import result_value
from toolmode.models.lenient_json import loads_lenient
from toolmode.models.text_calls import Tools, find_text_calls, recover_code_call, recover_json_calls
from toolmode.tools import html_text
from toolmode.tools.builtin import builtin_tools

KIB = 1024
RATIO = 25  # linear parsers stay far below; the quadratic ones this replaces were 100x-10,000x at these sizes


def _cost(fn: Callable[[str], Any], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        with contextlib.suppress(ValueError):  # LenientError is one
            fn(text)
        best = min(best, time.thread_time() - started)
    return max(best, 1e-3)


def _sized(unit: str, size: int, prefix: str = "") -> str:
    return prefix + (unit * (size // len(unit) + 1))[: size - len(prefix)]


# ----------------------------------------------------------------------------- HTML

BENIGN_HTML = "<p>Some <b>text</b> with <a href='/x'>a link</a> &amp; an entity.</p>\n"
HOSTILE_HTML = {"nested <a": "<a", "<a space": "<a ", "open quote": "<a b='", "open comments": "<!--",
                "<a newline": "<a\n", "<x<": "<x<", "cdata": "<![CDATA[", "end tags": "</"}  # fmt: skip


def _html(text: str) -> None:
    html_text.html_to_text(text)
    html_text.html_links(text, "http://example.test/")


@pytest.mark.parametrize("unit", HOSTILE_HTML.values(), ids=HOSTILE_HTML.keys())
def test_html_of_unterminated_tags_parses_in_linear_time(unit: str) -> None:
    size = 96 * KIB  # the page of the report: 72-108 s of host time before
    assert _cost(_html, _sized(unit, size)) / _cost(_html, _sized(BENIGN_HTML, size)) < RATIO


def test_html_text_is_kept_and_an_unterminated_tail_dropped() -> None:
    title, text = html_text.html_to_text("<title>T</title><p>kept</p><a b='" + "x<a " * 2000)
    assert (title, text) == ("T", "kept")
    title, text = html_text.html_to_text("<p>a &amp; b</p><pre>  x  </pre><!-- c -->tail &lt; 3")
    assert text == "a & b\n\n  x  \n\ntail < 3"


def test_fetch_url_of_the_nested_page_costs_what_an_ordinary_page_costs(tmp_path: Path) -> None:
    size = 96 * KIB
    pages = {"nested.html": "<html><body>" + _sized("<a", size), "plain.html": _sized(BENIGN_HTML, size)}
    with FixtureServer(pages) as server:
        host = server.base_url.removeprefix("http://")
        fetch = next(t for t in builtin_tools(tmp_path, allow_hosts=[host]) if t.name == "fetch_url")
        nested = _cost(lambda url: fetch(url=url), f"{server.base_url}/nested.html")
        plain = _cost(lambda url: fetch(url=url), f"{server.base_url}/plain.html")
    assert nested / plain < RATIO


# ----------------------------------------------------------------------------- model replies

TOOLS = Tools({"read_file": ["path"], "run_code": ["code"]})
REPLY_SIZE = 100 * KIB
HOSTILE_REPLIES = {
    "fence and spaces": ("```", " "),  # minutes before (cubic)
    "fence, spaces, text": ("```", " " * 50 + "x"),
    "tool_call tag and spaces": ("<tool_call>a", " "),
    "loose run_code string": ('{"name": "run_code", "arguments": {"code": "', "x" + " " * 40),
    "many python strings": ("", "',"),  # ast.get_source_segment per string: quadratic before
    "many keyword arguments": ("read_file(", "a=1, "),
    "a call, then lines that do not parse": ('read_file("a.txt")\n', "(" + "x," * 1200 + "\n"),  # 80 parses before
    "fences": ("", "```\n"),
    "open braces": ("", "{\n"),
}


def _replies(text: str) -> None:
    find_text_calls(text, TOOLS, code_blocks=True)
    recover_json_calls(text, ["read_file"])
    recover_code_call(text)


@pytest.mark.parametrize(("prefix", "unit"), HOSTILE_REPLIES.values(), ids=HOSTILE_REPLIES.keys())
def test_text_call_recovery_is_linear_in_the_reply(prefix: str, unit: str) -> None:
    plain = _sized("The answer is 42. ", REPLY_SIZE)
    assert _cost(_replies, _sized(unit, REPLY_SIZE, prefix)) / _cost(_replies, plain) < RATIO


def test_lenient_json_is_linear() -> None:
    plain = repr(["word"] * (REPLY_SIZE // 8))  # single quotes: read through `ast` too, as the hostile text is
    assert _cost(loads_lenient, _sized("',", REPLY_SIZE)) / _cost(loads_lenient, plain) < RATIO


@pytest.mark.parametrize("reply", [
    "[" * 100_000,
    '{"name": "read_file", "arguments": ' + "[" * 100_000,
    "```json\n" + '{"a":' * 50_000 + "\n```",
    '{"name": "read_file", "arguments": {"path": ' + "1" * 5000 + "}}",
    "x" * 300_000,
], ids=["deep array", "deep arguments", "deep fenced object", "5000 digits", "300 KB"])
def test_hostile_replies_are_no_calls_and_raise_nothing(reply: str) -> None:
    found = find_text_calls(reply, TOOLS, code_blocks=True)
    assert found.calls == []
    assert recover_json_calls(reply, ["read_file"]) == []


# ----------------------------------------------------------------------------- JSON of tool arguments and results


@pytest.mark.parametrize(("text", "said"), [
    ("[" * 100_000 + "]" * 100_000, "nested more than"),
    ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), f"nested more than {MAX_JSON_DEPTH}"),
    ('{"n": ' + "7" * 5000 + "}", "4300 digits"),
    ('"' + "x" * 50 + '"', "too large"),
], ids=["deeper than recursion", "one level too deep", "5000 digits", "too large"])
def test_bounded_json_raises_one_error_that_callers_of_json_already_catch(text: str, said: str) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        loads_json(text, max_chars=40 if said == "too large" else 8_000_000)
    assert isinstance(caught.value, ParseLimitError) and said in str(caught.value)
    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


def test_an_mcp_result_nested_too_deeply_comes_back_as_text() -> None:
    text = "[" * 100_000 + "]" * 100_000
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])
    assert result_value(result, structured=True, wrapped=False) == text


def test_bench_files_nested_too_deeply_are_refused_in_one_line(tmp_path: Path) -> None:
    """results.jsonl and bench.json live where the model's code can write."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "results.jsonl").write_text(json.dumps({"task": "t", "mode": "m", "run": 1}) + "\n" + deep + "\n")
    with pytest.raises(BenchDirError, match="line 2 is not an episode record"):
        read_results(tmp_path)
    (tmp_path / "bench.json").write_text(deep)
    with pytest.raises(BenchDirError, match="nested more than"):
        read_settings(tmp_path)
