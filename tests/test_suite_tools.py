"""Suite tools as toolmode Tools (`toolmode.bench.suites.m3_tools`), without the suite itself: types,
`*args` from react arguments and from code in the sandbox, and the calculator guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmode.agent import Agent
from toolmode.bench.suites.m3_tools import convert_tool
from toolmode.testing import call, reply
from toolmode.tools.base import ToolArgumentError


def test_variadic_tools_take_their_arguments_as_in_the_suite() -> None:
    def find_max_nucleotide(*args):  # type: ignore[no-untyped-def]
        counts = dict(zip(args[::2], args[1::2], strict=False))
        best = max(counts, key=counts.get)
        return (best, counts[best])

    t = convert_tool(
        "find_max_nucleotide", "max", find_max_nucleotide, "find_max_nucleotide(*args) -> (str, int)"
    )
    assert t.signature() == "find_max_nucleotide(*args) -> (str, int)"
    assert t(args=["A", 1, "C", 4]) == ("C", 4)
    hotel = convert_tool(
        "book_hotel",
        "d",
        lambda location, *prefs: [location, *prefs],
        "book_hotel(location: str, *preferences: str) -> List[Dict]",
    )
    assert hotel.signature() == "book_hotel(location: str, *prefs: str) -> List[Dict]"
    assert hotel(location="A", prefs=["wifi", "pool"]) == ["A", "wifi", "pool"]
    with pytest.raises(ToolArgumentError, match="prefs must be string"):
        hotel(location="A", prefs=[3])


def test_arguments_are_checked_against_the_signature_types() -> None:
    t = convert_tool("convert_currency", "d", lambda base_price, conversion_rate: base_price * conversion_rate,
                     "convert_currency(base_price: float, conversion_rate: float) -> float")  # fmt: skip
    assert t(base_price=100, conversion_rate=1.5) == 150.0
    # A string where a number is declared would be repeated a billion times by the suite's own function.
    with pytest.raises(ToolArgumentError, match="base_price must be number, got str"):
        t(base_price="x", conversion_rate=10**9)
    with pytest.raises(ToolArgumentError, match="unknown argument"):
        t(base_price=1, conversion_rate=1, extra=2)


def test_variadic_tools_collect_positional_arguments_in_code_mode(scripted: Any, tmp_path: Path) -> None:
    def find_minimum(*args):  # type: ignore[no-untyped-def]
        return min(args)

    def book_hotel(location, *preferences):  # type: ignore[no-untyped-def]
        return {"location": location, "preferences": list(preferences)}

    tools = [
        convert_tool(
            "find_minimum", "Minimum of the arguments.", find_minimum, "find_minimum(*args: float) -> float"
        ),
        convert_tool(
            "book_hotel", "Hotels.", book_hotel, "book_hotel(location: str, *preferences: str) -> List[Dict]"
        ),
    ]
    program = (
        "import json\n"
        "out = [find_minimum(3, 1.5, 2), book_hotel('A'), book_hotel('A', 'wifi', 'pool')]\n"
        "for bad in ((1, 'x'), ()):\n"
        "    try:\n        find_minimum(*bad)\n    except Exception as exc:\n        out.append(str(exc))\n"
        "print(json.dumps(out))"
    )
    server = scripted([call("run_code", code=program), reply("done")])
    with Agent(
        tools, mode="code", model="m", base_url=server.base_url, api_key="k", workspace=tmp_path
    ) as agent:
        result = agent.run("go")
    printed = result.records[0].calls[0].result
    out = json.loads(printed.strip().splitlines()[-1])
    assert out[0] == 1.5
    assert out[1] == {"location": "A", "preferences": []}
    assert out[2] == {"location": "A", "preferences": ["wifi", "pool"]}
    assert "args must be number, got str" in out[3]  # checked on the host before the function runs
    assert "empty" in out[4]  # min() of nothing: the function's own error reaches the program


def test_calculator_that_evals_is_replaced_by_the_safe_evaluator(tmp_path: Path) -> None:
    def calculator(expression: str) -> float:
        try:
            return eval(expression)
        except Exception:
            return f"Failed to evaluate expression: {expression}"

    calc = convert_tool("calculator", "Evaluates.", calculator, "calculator(expression: str) -> float")
    assert calc(expression="2 + (3 * 4)") == 14
    marker = tmp_path / "pwned"
    hostile = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    with pytest.raises(ValueError, match=r"Failed to evaluate expression: __import__.*not allowed"):
        calc(expression=hostile)  # a failed call (with the evaluator's reason), not a result that reads as one
    assert not marker.exists()
