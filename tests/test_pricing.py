"""Prices as data: DeepSeek peak / off-peak, aliases, unknown models, and OpenRouter's reported cost."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from rich.console import Console

from toolmode import Agent
from toolmode.console import ConsoleSink
from toolmode.models import Price, PriceTable
from toolmode.testing import fault, reply
from toolmode.usage import Usage

TABLE = PriceTable()
PEAK = Price(cache_hit=0.006, cache_miss=0.30, output=1.20)
OFF_PEAK = Price(cache_hit=0.003, cache_miss=0.15, output=0.60)
MONDAY = datetime(2025, 6, 2, tzinfo=UTC)  # a Monday
SATURDAY = datetime(2025, 6, 7, tzinfo=UTC)


def at(day: datetime, hour: int, minute: int = 0) -> datetime:
    return day + timedelta(hours=hour, minutes=minute)


def test_table_has_deepseek_flash_and_pro() -> None:
    assert TABLE.lookup("deepseek-flash", at(MONDAY, 2)) == PEAK
    assert TABLE.lookup("deepseek-v4-pro", at(MONDAY, 2)) is not None
    assert TABLE.lookup("deepseek-pro", at(MONDAY, 2)) == TABLE.lookup("deepseek-v4-pro", at(MONDAY, 2))


@pytest.mark.parametrize(
    "when, expected",
    [
        (at(MONDAY, 0, 59), OFF_PEAK),
        (at(MONDAY, 1), PEAK),
        (at(MONDAY, 3, 59), PEAK),
        (at(MONDAY, 4), OFF_PEAK),  # the gap between the two windows
        (at(MONDAY, 5, 30), OFF_PEAK),
        (at(MONDAY, 6), PEAK),
        (at(MONDAY, 9, 59), PEAK),
        (at(MONDAY, 10), OFF_PEAK),
        (at(MONDAY, 23), OFF_PEAK),
        (at(MONDAY + timedelta(days=4), 2), PEAK),  # Friday
        (at(SATURDAY, 2), OFF_PEAK),  # weekends are off-peak all day
        (at(SATURDAY + timedelta(days=1), 7), OFF_PEAK),  # Sunday
    ],
)
def test_v4_flash_alias_peak_and_off_peak_by_utc_hour_and_weekday(when: datetime, expected: Price) -> None:
    assert TABLE.lookup("deepseek-v4-flash", when) == expected


def test_time_zone_is_converted_to_utc() -> None:
    beijing = timezone(timedelta(hours=8))
    # Monday 10:00 in Beijing is Monday 02:00 UTC: peak.
    assert TABLE.lookup("deepseek-v4-flash", datetime(2025, 6, 2, 10, 0, tzinfo=beijing)) == PEAK
    # Saturday 08:00 in Beijing is Saturday 00:00 UTC: off-peak (weekend), although Friday in no zone.
    assert TABLE.lookup("deepseek-v4-flash", datetime(2025, 6, 7, 8, 0, tzinfo=beijing)) == OFF_PEAK
    # Monday 07:00 in Beijing is Sunday 23:00 UTC: off-peak, weekday taken in UTC.
    assert TABLE.lookup("deepseek-v4-flash", datetime(2025, 6, 2, 7, 0, tzinfo=beijing)) == OFF_PEAK


def test_names_are_case_insensitive_and_aliases_resolve() -> None:
    for name in ("DeepSeek-V4-Flash", " deepseek-chat ", "deepseek-reasoner", "deepseek-flash"):
        assert TABLE.lookup(name, at(MONDAY, 2)) == PEAK, name


def test_flat_price_model() -> None:
    assert TABLE.lookup("gpt-4o-mini", at(MONDAY, 2)) == TABLE.lookup("gpt-4o-mini", at(SATURDAY, 2))
    assert TABLE.lookup("gpt-4o-mini") is not None


def test_cost_formula_splits_cache_hits_misses_and_output() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=100_000, cached_tokens=400_000, requests=1)
    expected = 400_000 * 0.006 / 1e6 + 600_000 * 0.30 / 1e6 + 100_000 * 1.20 / 1e6
    assert TABLE.cost("deepseek-v4-flash", usage, at(MONDAY, 2)) == pytest.approx(expected)
    assert PEAK.cost(usage) == pytest.approx(expected)
    # Off-peak is exactly half for flash.
    assert TABLE.cost("deepseek-v4-flash", usage, at(SATURDAY, 2)) == pytest.approx(expected / 2)


@pytest.mark.parametrize("name", ["m", "llama3", "deepseek/deepseek-v4-flash", "", "gpt-5-unknown"])
def test_unknown_model_has_no_price(name: str) -> None:
    assert TABLE.lookup(name, at(MONDAY, 2)) is None
    assert TABLE.cost(name, Usage(prompt_tokens=10, completion_tokens=5, requests=1)) is None


def test_custom_table_data() -> None:
    table = PriceTable({"models": {"tiny": {"price": {"cache_hit": 1, "cache_miss": 2, "output": 3}}},
                        "aliases": {"tiny-latest": "tiny"}})
    usage = Usage(prompt_tokens=3_000_000, cached_tokens=1_000_000, completion_tokens=1_000_000)
    assert table.cost("tiny-latest", usage) == pytest.approx(1 + 4 + 3)
    assert table.lookup("deepseek-v4-flash") is None


# ----------------------------------------------------------------------------- in a run


def _agent(server, model: str, out: io.StringIO | None = None, **kwargs: Any) -> Agent:
    sinks = [ConsoleSink(Console(file=out, width=200))] if out is not None else []
    return Agent(tools=[], mode="react", model=model, base_url=server.base_url, console=False, sinks=sinks,
                 runs_dir=None, **kwargs)


def test_unknown_price_gives_cost_none_and_the_console_says_so(scripted) -> None:
    server = scripted([reply("42")])
    out = io.StringIO()
    with _agent(server, "m", out) as agent:
        result = agent.run("question")
    assert result.answer == "42"
    assert result.cost is None
    assert result.records[0].cost is None
    assert result.to_dict()["cost"] is None
    assert json.loads(json.dumps(result.to_dict()))["cost"] is None
    text = out.getvalue()
    assert "unknown price" in text
    assert "$" not in text


def test_known_price_gives_a_cost_in_a_run(scripted) -> None:
    server = scripted([reply("42")])
    table = PriceTable({"models": {"m": {"price": {"cache_hit": 1.0, "cache_miss": 2.0, "output": 4.0}}}})
    out = io.StringIO()
    with _agent(server, "m", out, prices=table) as agent:
        result = agent.run("question")
    u = result.usage
    expected = (u.cached_tokens * 1.0 + (u.prompt_tokens - u.cached_tokens) * 2.0 + u.completion_tokens * 4.0) / 1e6
    assert u.prompt_tokens > 0
    assert result.cost == pytest.approx(expected)
    assert f"${expected:.6f}" in out.getvalue()
    assert "unknown price" not in out.getvalue()


def test_deepseek_v4_flash_run_is_priced_peak_or_off_peak(scripted) -> None:
    server = scripted([reply("42")])
    with _agent(server, "deepseek-v4-flash") as agent:
        result = agent.run("question")
    assert result.cost is not None
    assert result.cost in (pytest.approx(PEAK.cost(result.usage)), pytest.approx(OFF_PEAK.cost(result.usage)))


def _completion_with_usage(content: str | None, usage: dict, tool_calls: list | None = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage}
    return fault("bad_body", body=json.dumps(body))  # served verbatim, status 200


def test_openrouter_reported_cost_takes_precedence_over_the_table(scripted) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "cost": 0.0421}
    server = scripted([_completion_with_usage("42", usage)])
    with _agent(server, "deepseek-v4-flash") as agent:  # a model the table knows
        result = agent.run("question")
    assert result.cost == pytest.approx(0.0421)
    assert result.records[0].cost == pytest.approx(0.0421)


def test_reported_cost_prices_an_unknown_model_and_zero_is_a_price(scripted) -> None:
    call = [{"id": "c1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]
    server = scripted([
        _completion_with_usage(None, {"prompt_tokens": 10, "completion_tokens": 1, "cost": 0.0}, call),
        _completion_with_usage("done", {"prompt_tokens": 20, "completion_tokens": 1, "cost": 0.002}),
    ])

    def noop() -> str:
        """Do nothing."""
        return "ok"

    with Agent(tools=[noop], model="openrouter/some-model", base_url=server.base_url, console=False,
               runs_dir=None) as agent:
        result = agent.run("question")
    assert result.answer == "done"
    assert [r.cost for r in result.records] == [0.0, pytest.approx(0.002)]
    assert result.cost == pytest.approx(0.002)


def test_one_unpriced_step_makes_the_run_cost_unknown(scripted) -> None:
    call = [{"id": "c1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]
    server = scripted([
        _completion_with_usage(None, {"prompt_tokens": 10, "completion_tokens": 1, "cost": 0.001}, call),
        reply("done"),  # no reported cost, unknown model
    ])

    def noop() -> str:
        """Do nothing."""
        return "ok"

    with Agent(tools=[noop], model="m", base_url=server.base_url, console=False, runs_dir=None) as agent:
        result = agent.run("question")
    assert result.records[0].cost == pytest.approx(0.001)
    assert result.records[1].cost is None
    assert result.cost is None  # never a partial sum passed off as the total
