"""Host-side parses of model- or web-controlled input: hostile inputs against ordinary ones of the same size.

    python benchmarks/bounded_parse.py [--kib 96]

For each parser (HTML to text and links, text-call recovery, the lenient JSON reader, redaction before a
trace is written) prints the CPU time (this thread, best of 3) of an ordinary input and of the worst
hostile inputs found for it, and their ratio. A parser linear in its input keeps the ratio small at every
size; run with two sizes (e.g. --kib 24 and --kib 96) to see that it does not grow with the input.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable
from typing import Any

from toolmode.models.lenient_json import loads_lenient
from toolmode.models.text_calls import Tools, find_text_calls, recover_code_call, recover_json_calls
from toolmode.redact import redact
from toolmode.tools import html_text

TOOLS = Tools({"read_file": ["path"], "run_code": ["code"]})


def _html(text: str) -> None:
    html_text.html_to_text(text)
    html_text.html_links(text, "http://example.test/")


def _replies(text: str) -> None:
    find_text_calls(text, TOOLS, code_blocks=True)
    recover_json_calls(text, ["read_file"])
    recover_code_call(text)


CASES: dict[str, tuple[Callable[[str], Any], str, dict[str, tuple[str, str]]]] = {
    "HTML (fetch_url)": (_html, "<p>Some <b>text</b> with <a href='/x'>a link</a> &amp; more.</p>\n", {
        "nested <a<a<a": ("", "<a"), "<a b=' unclosed": ("", "<a b='"), "<a + space": ("", "<a "),
        "open comments": ("", "<!--"),
    }),
    "text-call recovery": (_replies, "The answer is 42. ", {
        "``` + spaces": ("```", " "), "<tool_call> + spaces": ("<tool_call>a", " "),
        "a call, then unparsable lines": ('read_file("a.txt")\n', "(" + "x," * 1200 + "\n"),
        "many keyword arguments": ("read_file(", "a=1, "),
    }),
    "lenient JSON": (loads_lenient, "'word', ", {"',',',' strings": ("", "',")}),
    "redaction": (redact, "plain words of a trace ", {
        "scheme-like runs": ("", "a.a.a://"), "near-miss keys": ("", "sk-short Bearer x "),
    }),
}


def _sized(unit: str, size: int, prefix: str = "") -> str:
    return prefix + (unit * (size // len(unit) + 1))[: size - len(prefix)]


def _cost(fn: Callable[[str], Any], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        with contextlib.suppress(ValueError):
            fn(text)
        best = min(best, time.thread_time() - started)
    return best


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kib", type=int, default=96, help="input size in KiB (default: 96, the report's page)")
    size = parser.parse_args().kib * 1024
    print(f"input size {size // 1024} KiB; CPU ms, best of 3")
    print(f"{'parser':22} {'input':32} {'ms':>9} {'x ordinary':>11}")
    for name, (fn, ordinary, hostile) in CASES.items():
        base = _cost(fn, _sized(ordinary, size))
        print(f"{name:22} {'ordinary':32} {base * 1000:9.1f} {1:11.1f}")
        for label, (prefix, unit) in hostile.items():
            cost = _cost(fn, _sized(unit, size, prefix))
            print(f"{'':22} {label:32} {cost * 1000:9.1f} {cost / max(base, 1e-6):11.1f}")


if __name__ == "__main__":
    main()
