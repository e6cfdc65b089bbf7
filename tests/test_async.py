"""Async: `await agent.arun()`, async tools on the caller's event loop, `run()` from inside a running
loop (Jupyter, FastAPI), and the calls of one reply running concurrently in both."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from toolmode import Agent, tool
from toolmode.testing import calls, reply

PAIR = calls(("ping", {"name": "a", "other": "b"}), ("ping", {"name": "b", "other": "a"}))


def make(server, tools: list[Any]) -> Agent:
    return Agent(tools, mode="react", model="m", base_url=server.base_url)


def meeting_tool(loops: list[asyncio.AbstractEventLoop]) -> Any:
    """An async tool whose two calls each wait for the other: they finish only when run concurrently."""
    arrived: dict[str, asyncio.Event] = {}
    lock = threading.Lock()

    def event(name: str) -> asyncio.Event:
        with lock:
            return arrived.setdefault(name, asyncio.Event())

    @tool
    async def ping(name: str, other: str) -> str:
        """Arrive as `name`, then wait for `other`."""
        loops.append(asyncio.get_running_loop())
        event(name).set()
        try:
            await asyncio.wait_for(event(other).wait(), 5)
        except TimeoutError:
            return f"{name}: {other} never came"
        return f"{name} met {other}"

    return ping


def test_arun_runs_async_tools_concurrently_on_the_callers_loop(scripted) -> None:
    server = scripted([PAIR, reply("both met")])
    loops: list[asyncio.AbstractEventLoop] = []

    async def main() -> Any:
        with make(server, [meeting_tool(loops)]) as agent:
            return await agent.arun("meet"), asyncio.get_running_loop()

    result, caller = asyncio.run(main())
    assert result.answer == "both met"
    assert sorted(c.result for c in result.records[0].calls) == ["a met b", "b met a"]
    assert loops == [caller, caller]


def test_run_inside_a_running_loop_works_and_calls_run_concurrently(scripted) -> None:
    server = scripted([PAIR, reply("ok")])
    loops: list[asyncio.AbstractEventLoop] = []

    async def notebook_cell() -> Any:  # like Jupyter: a blocking run() called from a coroutine
        with make(server, [meeting_tool(loops)]) as agent:
            return agent.run("meet"), asyncio.get_running_loop()

    result, cell_loop = asyncio.run(notebook_cell())
    assert result.ok, result.error
    assert sorted(c.result for c in result.records[0].calls) == ["a met b", "b met a"]
    assert len(set(loops)) == 1 and loops[0] is not cell_loop  # toolmode's own background loop


def test_single_async_call_from_run_inside_a_loop(scripted) -> None:
    @tool
    async def double(n: int) -> int:
        """Double n."""
        await asyncio.sleep(0)
        return 2 * n

    server = scripted([calls(("double", {"n": 21})), reply("42")])

    async def cell() -> Any:
        with make(server, [double]) as agent:
            return agent.run("double 21")

    result = asyncio.run(cell())
    [c] = result.records[0].calls
    assert (c.result, c.error) == ("42", False)


def test_sync_tools_of_one_reply_run_concurrently(scripted) -> None:
    barrier = threading.Barrier(3, timeout=5)

    @tool
    def meet(i: int) -> str:
        """Wait for the other calls."""
        barrier.wait()
        return f"met {i}"

    server = scripted([calls(*[("meet", {"i": i}) for i in range(3)]), reply("ok")])

    async def main() -> Any:
        with make(server, [meet]) as agent:
            return await agent.arun("meet")

    result = asyncio.run(main())
    assert [c.result for c in result.records[0].calls] == ["met 0", "met 1", "met 2"]


def test_an_async_tool_error_goes_back_to_the_model(scripted) -> None:
    @tool
    async def fail() -> str:
        """Always fails."""
        raise ValueError("broken on purpose")

    server = scripted([calls(("fail", {})), reply("noted")])

    async def main() -> Any:
        with make(server, [fail]) as agent:
            return await agent.arun("try")

    result = asyncio.run(main())
    assert result.records[0].calls[0].result == "Error: ValueError: broken on purpose"
    assert result.answer == "noted"


def test_concurrent_aruns_on_one_agent_keep_their_results_apart(scripted) -> None:
    def script(body: dict[str, Any], index: int) -> Any:
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return reply(f"answer to {task}")

    server = scripted(script)

    async def main() -> list[Any]:
        with Agent([], mode="react", model="m", base_url=server.base_url) as agent:
            return await asyncio.gather(*(agent.arun(f"task {i}") for i in range(6)))

    results = asyncio.run(main())
    assert [r.answer for r in results] == [f"answer to task {i}" for i in range(6)]
