"""The classic task in every mode × search combination: the time in Beijing and the title of a web page,
with `fetch_url` and `current_time` hidden, so the model has to find them through tool search."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolmode import Agent
from toolmode.testing import call, calls, reply
from toolmode.tools.builtin import builtin_tools

VISIBLE = ["read_file", "list_dir", "write_file", "run_shell"]
TASK = "现在北京时间几点？再抓取这个网页告诉我标题"


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def sent(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def script_for(combo: str, url: str) -> list[dict[str, Any]]:
    """How a model solves the task in each combination (the replies a model would write)."""
    program = (
        "clock = search_tools('current time timezone', k=1)[0]\n"
        "page = search_tools('fetch web page title', k=1)[0]\n"
        f"print(clock(timezone='Asia/Shanghai')['utc_offset'], page({url!r})['title'])\n"
    )
    if combo == "react+load":
        return [
            calls(("search_tools", {"query": "current time in a timezone"}), ("search_tools", {"query": "fetch a web page"})),
            calls(("current_time", {"timezone": "Asia/Shanghai"}), ("fetch_url", {"url": url})),
            reply("done"),
        ]
    if combo == "react+proxy":
        return [
            calls(("search_tools", {"query": "current time in a timezone"}), ("search_tools", {"query": "fetch a web page"})),
            call("describe_tool", name="fetch_url"),
            calls(("call_tool", {"name": "current_time", "arguments": {"timezone": "Asia/Shanghai"}}),
                  ("call_tool", {"name": "fetch_url", "arguments": {"url": url}})),
            reply("done"),
        ]
    return [call("run_code", code=program), reply("done")]  # code+search and hybrid


COMBOS = {
    "react+load": {"mode": "react", "search": "load"},
    "react+proxy": {"mode": "react", "search": "proxy"},
    "code+search": {"mode": "code"},
    "hybrid+search": {"mode": "hybrid", "direct": ["read_file", "list_dir"]},
}


@pytest.mark.parametrize("combo", list(COMBOS))
def test_classic_task_with_hidden_tools(combo, scripted, workspace, page_server, page_title) -> None:
    server = scripted(script_for(combo, page_server))
    tools = builtin_tools(workspace, allow_private_network=True)
    with Agent(tools=tools, visible=VISIBLE, base_url=server.base_url, model="m", workspace=workspace,
               console=False, runs_dir=None, **COMBOS[combo]) as agent:
        result = agent.run(TASK)
    assert result.answer == "done"
    first = sent(server.requests[0])
    assert "fetch_url" not in first and "current_time" not in first
    descriptions = json.dumps(server.requests[0].get("tools", []))
    assert "Fetch a web page" not in descriptions  # hidden docs are not in the first prompt
    everything = "\n".join(tool_results(server.requests[-1]))
    assert "+08:00" in everything and page_title in everything
    if combo == "react+load":
        assert sent(server.requests[1])[-2:] == ["current_time", "fetch_url"]  # appended after the search
        assert sent(server.requests[1])[: len(first)] == first  # earlier tools never move
    if combo == "react+proxy":
        assert sent(server.requests[-1]) == first  # the proxy trio never changes
        assert "fetch_url(url: str, max_chars: int = 20000) -> dict" in tool_results(server.requests[2])[-1]
