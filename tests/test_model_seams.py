"""The seams users replace: the Model protocol (another provider), FallbackModel, system_prompt /
instructions, settings objects, one Agent running several tasks at once without mixing per-run state,
and the quiet library defaults."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolmode import (
    Agent,
    FallbackModel,
    Model,
    ModelClient,
    ModelSettings,
    OutputSettings,
    Reply,
    SandboxSettings,
    ToolCall,
    Usage,
    tool,
)
from toolmode.models.pricing import PriceTable
from toolmode.testing import call, fault, reply
from toolmode.trace import MemorySink, Trace

PRICES = PriceTable({"models": {"backup": {"price": {"cache_hit": 1.0, "cache_miss": 1.0, "output": 1.0}}}})


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


class UrllibModel:
    """Another provider, written against the protocol only: plain urllib, no openai SDK."""

    def __init__(self, base_url: str, model: str) -> None:
        self.base_url, self.model = base_url, model

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
        body = json.dumps({"model": self.model, "messages": list(messages), "tools": list(tools)}).encode()
        request = urllib.request.Request(f"{self.base_url}/chat/completions", body,
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            data = json.load(response)
        message = data["choices"][0]["message"]
        return Reply(
            content=message.get("content"),
            tool_calls=[ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                        for c in message.get("tool_calls") or []],
            usage=Usage.from_api(data.get("usage")),
            finish_reason=data["choices"][0].get("finish_reason"),
        )


def test_another_provider_plugs_in_through_the_protocol(scripted) -> None:
    server = scripted([call("echo", text="via urllib"), reply("done")])
    model = UrllibModel(server.base_url, "custom")
    assert isinstance(model, Model)
    with Agent([echo], model=model) as agent:
        result = agent.run("go")
    assert result.answer == "done"
    assert result.records[0].calls[0].result == "via urllib"
    assert server.requests[0]["model"] == "custom"


def test_fallback_on_an_error_prices_the_model_that_answered(scripted) -> None:
    primary = scripted([fault("status", status=401, message="key revoked")])
    backup = scripted([reply("from the backup")])
    sink = MemorySink()
    chain = FallbackModel([ModelClient("primary", base_url=primary.base_url),
                           ModelClient("backup", base_url=backup.base_url)])
    with Agent([echo], model=chain, prices=PRICES, sinks=[sink]) as agent:
        result = agent.run("go")
    assert result.answer == "from the backup"
    assert result.cost is not None and result.cost > 0  # priced as "backup": "primary" has no price
    [step] = sink.of("reply")
    assert step.data["model"] == "backup"
    [notice] = sink.of("notice")
    assert notice.data["message"].startswith("model primary failed (model API error 401")
    assert "falling back to backup" in notice.data["message"]


def test_fallback_on_429_after_the_primarys_deadline(scripted) -> None:
    primary = scripted([fault("429", retry_after=5)] * 3)
    backup = scripted([reply("ok")])
    chain = FallbackModel([ModelClient("primary", base_url=primary.base_url, deadline=1.0),
                           ModelClient("backup", base_url=backup.base_url)])
    with Agent([echo], model=chain) as agent:
        result = agent.run("go")
    assert result.answer == "ok" and len(primary.requests) == 1


def test_fallback_when_every_model_fails_ends_with_the_last_error(scripted) -> None:
    a = scripted([fault("status", status=400, message="bad a")])
    b = scripted([fault("status", status=400, message="bad b")])
    chain = FallbackModel([ModelClient("a", base_url=a.base_url), ModelClient("b", base_url=b.base_url)])
    with Agent([echo], model=chain) as agent:
        result = agent.run("go")
    assert result.stopped == "error" and "bad b" in result.error


def test_not_a_model_gets_one_line() -> None:
    with pytest.raises(ValueError) as err:
        Agent([echo], model=object())  # type: ignore[arg-type]
    assert "is not a model: it needs chat(messages, tools) and a 'model' name" in str(err.value)
    with pytest.raises(ValueError, match="FallbackModel needs at least one model"):
        FallbackModel([])


@tool(deferred=True)
def secret(x: str) -> str:
    """A hidden tool found by search."""
    return x


def test_system_prompt_replaces_and_instructions_add(scripted) -> None:
    server = scripted([reply("a"), reply("b"), reply("c")])
    kwargs: dict[str, Any] = {"mode": "react", "search": "load", "model": "m", "base_url": server.base_url}
    with Agent([echo, secret], **kwargs) as agent:
        agent.run("x")
    with Agent([echo, secret], instructions="Answer in French.", **kwargs) as agent:
        agent.run("x")
    with Agent([echo, secret], system_prompt="You are terse.", **kwargs) as agent:
        agent.run("x")
    mode_prompt = server.requests[0]["messages"][0]["content"]
    assert "search_tools" in mode_prompt
    assert server.requests[1]["messages"][0]["content"] == f"{mode_prompt}\n\nAnswer in French."
    assert server.requests[2]["messages"][0]["content"] == "You are terse."


def test_settings_objects_match_the_keyword_form(scripted, tmp_path: Path) -> None:
    server = scripted([reply("one"), reply("two")])
    sink = MemorySink()
    with Agent([], "code", model=ModelSettings(model="grouped", base_url=server.base_url),
               sandbox=SandboxSettings(workspace=tmp_path / "ws", policy="none", persistent=True),
               output=OutputSettings(runs_dir=tmp_path / "runs", sinks=[sink])) as grouped:
        r1 = grouped.run("a")
        assert grouped.mode.sandbox.persistent and grouped.mode.sandbox.workspace == (tmp_path / "ws").resolve()
    with Agent([], "code", model="grouped", base_url=server.base_url, workspace=tmp_path / "ws", sandbox="none",
               persistent=True, runs_dir=tmp_path / "runs") as flat:
        r2 = flat.run("a")
    assert server.requests[0] == server.requests[1]
    assert r1.trace_path and r2.trace_path and r1.trace_path.exists() and r2.trace_path.exists()
    assert sink.of("run_end")
    with pytest.raises(ValueError, match="either as ModelSettings or as keywords, not both \\(base_url\\)"):
        Agent([], model=ModelSettings(model="x"), base_url=server.base_url)


@tool(deferred=True)
def alpha(x: str) -> str:
    """Alpha tool: fetch alpha records."""
    return f"alpha {x}"


@tool(deferred=True)
def beta(x: str) -> str:
    """Beta tool: fetch beta records."""
    return f"beta {x}"


def test_one_agent_runs_tasks_at_once_without_mixing_state(scripted) -> None:
    """Threads and asyncio tasks share one Agent; each run loads its own tool by search, gets its own
    retry events, and no request of one run carries another run's loaded tools."""
    def script(body: dict[str, Any], index: int) -> Any:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        kind, n = user.split()
        tools = [t["function"]["name"] for t in body["tools"]]
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not results:
            return call("search_tools", query=f"{kind} records", k=1)
        if len(results) == 1:
            return call(kind, x=n) if kind in tools else reply(f"{kind} missing from {tools}")
        return reply(f"{kind} {n}: {results[-1]} with tools {','.join(tools)}")

    faulted: set[str] = set()

    def script_with_a_retry(body: dict[str, Any], index: int) -> Any:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if user == "alpha t1" and user not in faulted:
            faulted.add(user)
            return fault("429", retry_after=0.05)
        return script(body, index)

    server = scripted(script_with_a_retry)
    sinks: dict[str, MemorySink] = {}
    results: dict[str, Any] = {}
    with Agent([echo, alpha, beta], mode="react", search="load", model="m", base_url=server.base_url) as agent:
        def in_thread(task: str) -> None:
            sinks[task] = MemorySink()
            with Trace([sinks[task]]) as trace:
                results[task] = agent.run(task, max_steps=5, trace=trace)

        async def in_tasks() -> None:
            tasks = [f"{'alpha' if i % 2 else 'beta'} a{i}" for i in range(4)]
            for t, r in zip(tasks, await asyncio.gather(*(agent.arun(t, max_steps=5) for t in tasks)), strict=True):
                results[t] = r

        threads = [threading.Thread(target=in_thread, args=(f"{'alpha' if i % 2 else 'beta'} t{i}",))
                   for i in range(4)]
        for t in threads:
            t.start()
        asyncio.run(in_tasks())
        for t in threads:
            t.join(60)
    assert len(results) == 8
    for task, result in results.items():
        kind, n = task.split()
        other = "beta" if kind == "alpha" else "alpha"
        assert result.answer == f"{kind} {n}: {kind} {n} with tools echo,search_tools,{kind}", result.answer
        assert other not in result.answer
    # the retry is in the trace of the run that met it, and only there
    assert [task for task, sink in sinks.items() if sink.of("retry")] == ["alpha t1"]


def test_library_defaults_are_quiet(scripted, tmp_path: Path, monkeypatch, capfd) -> None:
    monkeypatch.chdir(tmp_path)
    server = scripted([call("echo", text="x"), reply("done")])
    with Agent([echo], model="m", base_url=server.base_url) as agent:
        result = agent.run("go")
    assert result.answer == "done" and result.trace_path is None
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert list(tmp_path.iterdir()) == []  # no ./runs
