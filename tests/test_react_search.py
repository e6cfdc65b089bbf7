"""ReAct mode with hidden (deferred) tools: search="load" (append-only tool list) and search="proxy"."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from toolmode import Agent, tool
from toolmode.modes import make_mode
from toolmode.modes.react import ReactMode
from toolmode.testing import call, reply


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool(deferred=True)
def download_page(url: str) -> str:
    """Download a web page and return its HTML.

    Args:
        url: The page's address.
    """
    return f"<html>{url}</html>"


@tool(deferred=True)
def convert_currency(amount: float, src: str, dst: str) -> float:
    """Convert an amount of money from one currency to another."""
    return amount * 2


@tool(deferred=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to someone."""
    return f"sent to {to}"


TOOLS = [echo, download_page, convert_currency, send_email]


def names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def run(server, search: str, task: str = "task", **kwargs: Any):
    with Agent(tools=TOOLS, mode="react", search=search, model="m", base_url=server.base_url, console=False,
               runs_dir=None, **kwargs) as agent:
        return agent.run(task)


# ----------------------------------------------------------------------------- search="load"


def test_load_end_to_end_found_tools_are_appended(scripted) -> None:
    server = scripted([
        call("search_tools", query="download web page", k=1),
        call("download_page", url="https://example.com"),
        call("search_tools", query="convert money currency", k=1),
        call("convert_currency", amount=21, src="EUR", dst="USD"),
        reply("done"),
    ])
    result = run(server, "load")
    assert result.answer == "done"
    reqs = server.requests
    assert names(reqs[0]) == ["echo", "search_tools"]
    assert names(reqs[1]) == ["echo", "search_tools", "download_page"]
    assert names(reqs[2]) == ["echo", "search_tools", "download_page"]
    assert names(reqs[3]) == ["echo", "search_tools", "download_page", "convert_currency"]
    assert names(reqs[4]) == names(reqs[3])
    # append only: every request's tool list (the exact JSON) is a prefix of the next one's
    for before, after in itertools.pairwise(reqs):
        assert after["tools"][: len(before["tools"])] == before["tools"]
    results = tool_results(reqs[4])
    assert "download_page(url: str) -> str - Download a web page" in results[0]
    assert "callable directly" in results[0]
    assert results[1] == "<html>https://example.com</html>"
    assert results[3] == "42.0"
    # the system prompt explains search_tools
    assert "search_tools" in reqs[0]["messages"][0]["content"]
    # the appended tool carries its full schema
    loaded = reqs[1]["tools"][2]["function"]
    assert loaded["parameters"]["properties"]["url"]["description"] == "The page's address."


def test_load_keeps_the_prefix_cached(scripted) -> None:
    server = scripted([
        call("search_tools", query="download web page", k=1),
        call("download_page", url="https://example.com"),
        call("echo", text="again"),
        reply("done"),
    ])
    result = run(server, "load")
    cached = [r.usage.cached_tokens for r in result.records]
    prompt = [r.usage.prompt_tokens for r in result.records]
    assert cached[0] == 0
    assert cached[1] > 0  # the unchanged tool prefix is reused even though a tool was appended
    # no tool added from step 2 on: each request reuses the whole previous prompt
    assert cached[2] == prompt[1]
    assert cached[3] == prompt[2]
    assert cached == sorted(cached)


def test_load_hidden_tool_is_not_callable_before_it_is_found(scripted) -> None:
    server = scripted([
        call("send_email", to="a@b.c", subject="s", body="b"),
        call("search_tools", query="send an email", k=1),
        call("send_email", to="a@b.c", subject="s", body="b"),
        reply("done"),
    ])
    result = run(server, "load")
    first, _, third = tool_results(server.requests[3])
    assert first.startswith("Error: UnknownTool: unknown tool 'send_email'")
    assert "download_page" not in first  # hidden tools are not leaked in the error
    assert third == "sent to a@b.c"
    assert result.answer == "done"


def test_load_searching_again_does_not_duplicate_tools(scripted) -> None:
    server = scripted([
        call("search_tools", query="download web page", k=1),
        call("search_tools", query="download web page", k=1),
        reply("done"),
    ])
    run(server, "load")
    assert names(server.requests[2]) == ["echo", "search_tools", "download_page"]


def test_load_no_match_says_so(scripted) -> None:
    server = scripted([call("search_tools", query="zzqx"), reply("done")])
    run(server, "load")
    assert tool_results(server.requests[1]) == ["No tool matches 'zzqx'. Try other words."]
    assert names(server.requests[1]) == ["echo", "search_tools"]


def test_hidden_tools_default_to_load_search() -> None:
    mode = make_mode("react", TOOLS)
    assert isinstance(mode, ReactMode) and mode.search == "load"
    assert [s["function"]["name"] for s in mode.tool_schemas()] == ["echo", "search_tools"]


def test_no_hidden_tools_no_search_tool() -> None:
    mode = make_mode("react", [echo])
    assert [s["function"]["name"] for s in mode.tool_schemas()] == ["echo"]
    assert mode.system_prompt() is None


def test_visible_list_hides_the_rest() -> None:
    mode = make_mode("react", TOOLS, visible=["send_email"], search="load")
    assert [s["function"]["name"] for s in mode.tool_schemas()] == ["send_email", "search_tools"]
    with pytest.raises(ValueError, match="unknown tools: nope"):
        make_mode("react", TOOLS, visible=["nope"])


# ----------------------------------------------------------------------------- search="proxy"


def test_proxy_end_to_end(scripted) -> None:
    server = scripted([
        call("search_tools", query="download web page", k=2),
        call("describe_tool", name="download_page"),
        call("call_tool", name="download_page", arguments={"url": "https://example.com"}),
        reply("done"),
    ])
    result = run(server, "proxy")
    assert result.answer == "done"
    proxy_names = ["echo", "search_tools", "describe_tool", "call_tool"]
    for request in server.requests:
        assert names(request) == proxy_names
        assert request["tools"] == server.requests[0]["tools"]  # the tool list never changes
    found, described, called = tool_results(server.requests[3])
    assert found.splitlines()[0] == "download_page(url: str) -> str - Download a web page and return its HTML."
    assert "describe_tool" in found and "call_tool" in found
    assert described.startswith("download_page(url: str) -> str\n")
    schema = json.loads(described.split("Arguments (JSON schema): ", 1)[1])
    assert schema["required"] == ["url"]
    assert called == "<html>https://example.com</html>"
    system = server.requests[0]["messages"][0]["content"]
    assert "describe_tool" in system and "call_tool" in system
    cached = [r.usage.cached_tokens for r in result.records]
    assert cached[1:] == [r.usage.prompt_tokens for r in result.records[:-1]]  # whole prefix reused


def test_proxy_errors_are_answered(scripted) -> None:
    server = scripted([
        call("download_page", url="x"),  # hidden: only through call_tool
        call("call_tool", name="no_such_tool", arguments={}),
        call("call_tool", name="convert_currency", arguments={"amount": "lots"}),
        call("describe_tool", name="nope"),
        reply("done"),
    ])
    result = run(server, "proxy")
    direct, unknown, bad_args, describe = tool_results(server.requests[4])
    assert direct.startswith("Error: UnknownTool: unknown tool 'download_page'")
    assert unknown.startswith("Error: UnknownTool: unknown tool 'no_such_tool'")
    assert bad_args.startswith("Error: ToolArgumentError: convert_currency:")
    assert "amount" in bad_args and "src" in bad_args  # wrong type and missing ones are named
    assert describe.startswith("Error: UnknownTool")
    assert result.answer == "done"


def test_search_must_be_load_or_proxy() -> None:
    with pytest.raises(ValueError, match="search must be"):
        ReactMode(TOOLS, search="magic")  # type: ignore[arg-type]


def test_load_found_tools_do_not_leak_into_the_next_run(scripted) -> None:
    server = scripted([call("search_tools", query="download web page", k=1), reply("one"), reply("two")])
    with Agent(tools=TOOLS, mode="react", search="load", model="m", base_url=server.base_url, console=False,
               runs_dir=None) as agent:
        agent.run("first task")
        agent.run("second task")
    assert names(server.requests[1]) == ["echo", "search_tools", "download_page"]  # within the first run
    assert names(server.requests[2]) == ["echo", "search_tools"]  # a fresh run starts from the base list
