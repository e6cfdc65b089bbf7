"""Budgets and cancellation: max_cost, max_total_tokens, timeout (between requests, inside long tool calls and
sandboxed code), agent.cancel() and cancel tokens from another thread or task; the partial result keeps
usage and cost, the trace says which limit; bad budgets get one clear line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, CancelToken, tool
from toolmode.models.pricing import PriceTable
from toolmode.testing import call, fault, reply
from toolmode.trace import MemorySink

PRICES = PriceTable({"models": {"m": {"price": {"cache_hit": 10.0, "cache_miss": 100.0, "output": 100.0}}}})


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
def sleepy(seconds: float) -> str:
    """Sleep, then say so."""
    time.sleep(seconds)
    return "woke up"


def make(server, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [echo, sleepy])
    return Agent(mode="react", model="m", base_url=server.base_url, **kwargs)


class Seen:
    """A sink that sets `event` when an event of `kind` (whose data includes `match`) is published: a test
    acts when the run has got there, not after a guessed sleep."""

    def __init__(self, kind: str, **match: Any) -> None:
        self.kind, self.match = kind, match
        self.event = threading.Event()

    def emit(self, event: Any) -> None:
        if event.kind == self.kind and all(event.data.get(k) == v for k, v in self.match.items()):
            self.event.set()

    def close(self) -> None:
        pass

    def wait(self) -> None:
        assert self.event.wait(60), f"no {self.kind} event came"


def cancel_when(seen: Seen, cancel: Any) -> None:
    """From another thread: wait until `seen` fires, then `cancel()`."""
    threading.Thread(target=lambda: (seen.wait(), cancel()), daemon=True).start()


def test_timeout_inside_a_long_tool_call_stops_the_run_with_usage_kept(scripted) -> None:
    server = scripted([call("sleepy", seconds=30), reply("never")])
    sink = MemorySink()
    with make(server, sinks=[sink], timeout=0.5, prices=PRICES) as agent:
        result = agent.run("sleep")
    assert (result.stopped, result.limit) == ("budget", "timeout")
    assert result.error == "stopped: time budget of 0.5 s spent"
    assert result.usage.requests == 1 and result.usage.prompt_tokens > 0
    assert result.cost is not None and result.cost > 0
    [end] = sink.of("run_end")
    assert (end.data["stopped"], end.data["limit"]) == ("budget", "timeout")
    # the 30 s call was abandoned, not awaited (it would have answered "woke up"), and is answered, so the
    # conversation stays valid to continue
    assert result.messages[-1]["role"] == "tool" and "stopped before this call finished" in result.messages[-1]["content"]
    assert len(server.requests) == 1


def test_max_total_tokens_is_checked_between_requests(scripted) -> None:
    server = scripted([call("echo", text="x" * 50) for _ in range(5)])
    with make(server) as agent:
        result = agent.run("go", max_total_tokens=1)
    assert (result.stopped, result.limit, result.steps) == ("budget", "max_total_tokens", 1)
    assert result.error.startswith("stopped: token budget of 1 spent (")
    assert len(server.requests) == 1


def test_max_cost_stops_once_spent(scripted) -> None:
    server = scripted([call("echo", text=str(i)) for i in range(10)])
    with make(server, prices=PRICES) as agent:
        probe = agent.run("go", max_steps=1)  # one step's cost at these prices
        result = agent.run("go", max_cost=probe.cost * 2.5)
    assert (result.stopped, result.limit) == ("budget", "max_cost")
    # it stops at the first check after the budget is crossed
    assert sum(r.cost for r in result.records[:-1]) < probe.cost * 2.5 <= result.cost
    assert 2 <= result.steps < 10


def test_max_cost_with_an_unknown_price_says_so(scripted) -> None:
    server = scripted([reply("ok")])
    sink = MemorySink()
    with make(server, sinks=[sink], max_cost=1.0) as agent:
        result = agent.run("go")
    assert result.ok
    assert any("price of m is unknown" in e.data["message"] for e in sink.of("notice"))


def test_reported_cost_counts_toward_max_cost(scripted) -> None:
    server = scripted([{**call("echo", text="a"), "usage": {"cost": 0.02}}, reply("never", usage={"cost": 0.02})])
    with make(server) as agent:
        result = agent.run("go", max_cost=0.01)
    assert (result.stopped, result.limit, result.cost) == ("budget", "max_cost", 0.02)


def test_agent_cancel_from_another_thread(scripted) -> None:
    server = scripted([call("sleepy", seconds=30), reply("never")])
    started = Seen("tool_call", name="sleepy")
    with make(server, sinks=[started]) as agent:
        cancel_when(started, agent.cancel)
        result = agent.run("sleep")
    assert (result.stopped, result.error, result.limit) == ("cancelled", "stopped: cancelled", None)
    assert result.usage.requests == 1
    assert "stopped before this call finished" in result.messages[-1]["content"]  # cancelled while it ran


def test_a_cancel_token_cancels_only_its_run(scripted) -> None:
    def script(body: dict[str, Any], index: int) -> Any:
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply(f"{task} done")
        return call("sleepy", seconds=1.0 if task == "keep" else 30)

    server = scripted(script)
    token = CancelToken()
    started = Seen("tool_call", name="sleepy", arguments='{"seconds": 30}')  # the "stop" run's call is under way
    with make(server, sinks=[started]) as agent:
        results: dict[str, Any] = {}
        threads = [threading.Thread(target=lambda: results.__setitem__("stop", agent.run("stop", cancel=token))),
                   threading.Thread(target=lambda: results.__setitem__("keep", agent.run("keep")))]
        for t in threads:
            t.start()
        started.wait()
        token.cancel()
        for t in threads:
            t.join(60)
    assert results["stop"].stopped == "cancelled"
    assert (results["keep"].stopped, results["keep"].answer) == ("answer", "keep done")


def test_cancelling_the_task_awaiting_arun_cancels_the_run(scripted) -> None:
    server = scripted([call("sleepy", seconds=30), reply("never")])
    sink = MemorySink()
    started, ended = Seen("tool_call", name="sleepy"), Seen("run_end")

    async def main() -> None:
        with make(server, sinks=[sink, started, ended]) as agent:
            task = asyncio.ensure_future(agent.arun("sleep"))
            await asyncio.to_thread(started.wait)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.to_thread(ended.wait)  # the run ends on its worker thread after the task is gone

    asyncio.run(main())
    assert sink.of("run_end")[0].data["stopped"] == "cancelled"


@pytest.mark.parametrize("stream", [False, True])
def test_cancel_stops_a_run_waiting_on_a_slow_model_request(scripted, stream: bool) -> None:
    arrived = threading.Event()

    def script(request: dict[str, Any], index: int) -> Any:
        arrived.set()
        return fault("slow", delay=30, then=reply("late"))

    server = scripted(script)
    with make(server, stream=stream) as agent:
        threading.Thread(target=lambda: arrived.wait(60) and agent.cancel(), daemon=True).start()
        result = agent.run("go")
        # cancelled during the request: had it been awaited, "late" would be the answer
        assert (result.stopped, result.answer) == ("cancelled", None)
        assert result.messages == [{"role": "user", "content": "go"}]


def test_cancel_ends_a_retry_wait_at_once(scripted) -> None:
    server = scripted([fault("429", retry_after=30), reply("late")])
    waiting = Seen("retry")
    with make(server, sinks=[waiting]) as agent:
        cancel_when(waiting, agent.cancel)
        result = agent.run("go")
    # the 30 s wait ended at the cancel: had it run out, the retry would have got "late" as the answer
    assert result.stopped == "cancelled" and len(server.requests) == 1


def test_timeout_bounds_sandboxed_code(scripted, workspace: Path) -> None:
    from toolmode.sandbox import SandboxLimits

    server = scripted([call("run_code", code="while True:\n    pass\n"), call("run_code", code="print('next')"),
                       reply("done")])
    with Agent([], mode="code", model="m", base_url=server.base_url, workspace=workspace,
               sandbox_limits=SandboxLimits(timeout=60, cpu_seconds=60), timeout=1.0) as agent:
        result = agent.run("spin")
        assert (result.stopped, result.limit) == ("budget", "timeout")
        # the sandbox ended the program at the run's deadline, not after its own 60 s: the next run's program
        # gets the worker within that run's 30 s
        nxt = agent.run("next", timeout=30)
    assert nxt.ok and nxt.records[0].calls[0].result.strip() == "next"


@pytest.mark.parametrize("kwargs, message", [
    ({"max_cost": 0}, "max_cost must be more than 0, got 0 (leave it out for no limit)"),
    ({"timeout": -1}, "timeout must be more than 0, got -1 (leave it out for no limit)"),
    ({"max_total_tokens": 0}, "max_total_tokens must be more than 0, got 0 (leave it out for no limit)"),
    ({"max_cost": "1"}, "max_cost must be a positive number, got '1'"),
])
def test_a_budget_of_zero_or_negative_gets_one_clear_line(scripted, kwargs: dict[str, Any], message: str) -> None:
    server = scripted([reply("never")])
    with pytest.raises(ValueError) as err:
        make(server, **kwargs)
    assert str(err.value) == message
    with make(server) as agent, pytest.raises(ValueError) as err:
        agent.run("go", **kwargs)
    assert str(err.value) == message
    assert server.requests == []


@pytest.mark.parametrize("kwargs, error, message", [
    ({"cancel": "stop"}, ValueError, "cancel must be a toolmode.CancelToken, not str"),
    ({"max_steps": "3"}, ValueError, "max_steps must be a whole number, got '3'"),
    ({"max_cost_usd": 1}, TypeError, "unknown run option 'max_cost_usd'; the options are: history, output_type, "
                                     "max_cost, max_total_tokens, timeout, max_steps, cancel, trace, deps, approver"),
])
def test_other_bad_run_options_get_one_clear_line(scripted, kwargs: dict[str, Any], error: type, message: str) -> None:
    server = scripted([reply("never")])
    with make(server) as agent, pytest.raises(error) as err:
        agent.run("go", **kwargs)
    assert str(err.value) == message
    assert server.requests == []


def test_cli_timeout_and_max_cost(scripted, tmp_path: Path) -> None:
    server = scripted([reply("fine")])
    base = [sys.executable, "-m", "toolmode", "run", "--mode", "react", "--no-builtin", "--base-url",
            server.base_url, "--model", "m", "--no-trace"]
    ok = subprocess.run([*base, "--timeout", "30", "--max-cost", "0.5", "--json", "hi"], capture_output=True,
                        text=True, timeout=60, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["answer"] == "fine"
    bad = subprocess.run([*base, "--timeout", "0", "hi"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr == "toolmode run: error: argument --timeout: must be more than 0, got 0 (see toolmode run --help)\n"
    assert "Traceback" not in bad.stderr


def test_cli_reports_a_budget_stop(scripted, tmp_path: Path) -> None:
    server = scripted([call("echo", text="a"), reply("never")])
    code = "from toolmode.cli import main; raise SystemExit(main())"
    proc = subprocess.run(
        [sys.executable, "-c", code, "run", "--mode", "react", "--no-builtin", "--base-url", server.base_url,
         "--model", "m", "--no-trace", "--max-total-tokens", "1", "hi"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1
    assert "stopped: budget - token budget of 1 spent" in proc.stdout


def test_run_shell_is_killed_at_the_runs_deadline(scripted, workspace: Path) -> None:
    from toolmode.tools.builtin import builtin_tools

    # The command holds a FIFO open (as its `sleep` does, by inheritance): the reader sees the end of it
    # when every process of the command is gone, which must be when the run stops, not 30 s later.
    os.mkfifo(workspace / "alive")
    seen: list[bytes] = []

    def read_until_all_gone() -> None:
        with open(workspace / "alive", "rb") as fifo:  # blocks until the command opens it
            seen.extend(iter(lambda: fifo.read(1), b""))

    reader = threading.Thread(target=read_until_all_gone, daemon=True)
    reader.start()
    command = "exec 3>alive; echo started >&3; sleep 30; echo late > marker.txt"
    server = scripted([call("run_shell", command=command), reply("never")])
    with Agent(builtin_tools(workspace), mode="react", model="m", base_url=server.base_url, timeout=3) as agent:
        result = agent.run("write late")
    assert (result.stopped, result.limit) == ("budget", "timeout")
    reader.join(60)
    assert not reader.is_alive(), "a process of the command outlived the run"
    assert b"".join(seen) == b"started\n"  # the command had started
    assert not (workspace / "marker.txt").exists()
