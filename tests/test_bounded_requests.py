"""Every model request ends in bounded time, streamed or not, whatever the server does.

The scripted server holds connections open in three ways: `keepalive` (a 200 whose body never ends: SSE
`: ping` comments, or spaces of a JSON body), `trickle` (the reply one byte at a time) and `stall` (half
the reply, then nothing, or pings). Each is checked against each bound of the client: the request timeout
(the whole of one attempt), the idle timeout (a started stream that goes quiet), the run's deadline and
cancellation. Nothing here waits on a clock: a bound that did not hold would show as the wrong error (or
the test's own timeout).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from toolmode import Agent
from toolmode.budget import Budget, CancelToken, Limits, RunStopped
from toolmode.events import BaseEvent, TextDelta
from toolmode.models import ModelClient, ModelError
from toolmode.runctx import RunContext, activate, deactivate
from toolmode.testing import fault, reply

USER = [{"role": "user", "content": "Say something long."}]
LONG = reply("A reply long enough to take a while when it comes one byte at a time. " * 3)

# (fault, streamed) pairs that hold a request past any short bound
HOLDS = {
    "keepalive-sse": (fault("keepalive", interval=0.05), True),
    "keepalive-json": (fault("keepalive", interval=0.05), False),
    "trickle-sse": (fault("trickle", interval=0.003, then=LONG), True),  # an event in ~0.7 s
    "trickle-json": (fault("trickle", interval=0.02, then=LONG), False),
    "stall-sse": (fault("stall", then=LONG), True),
    "stall-sse-pinging": (fault("stall", interval=0.05, then=LONG), True),
    "stall-json": (fault("stall", then=LONG), False),
}


@pytest.fixture
def in_run() -> Iterator[Any]:
    """`in_run(limits, publish)`: make a run current in this thread (as the loop does) until the test ends."""
    tokens: list[Any] = []

    def enter(limits: Limits, publish: Any = lambda event: None) -> None:
        tokens.append(activate(RunContext(publish, limits)))

    yield enter
    for token in reversed(tokens):
        deactivate(token)


@pytest.mark.parametrize("name", list(HOLDS))
def test_the_request_timeout_bounds_the_whole_request(scripted, name: str) -> None:
    hold, streamed = HOLDS[name]
    server = scripted([hold, reply("after the timeout")])
    # deadline 0.7: after a 0.5 s attempt the next one would start too late, so the first reason is the one
    model = ModelClient("m", base_url=server.base_url, stream=streamed, request_timeout=0.5, deadline=0.7,
                        idle_timeout=None)
    # Either our watch (it names request_timeout) or, on a loaded machine, the SDK's own timeout set to the same
    # 0.5 s ("request timed out") ends the attempt first; both end it at the request timeout, not later.
    with pytest.raises(ModelError, match=r"request timed out( after 0\.5 s \(request_timeout\))?$"):
        model.chat(USER)
    model.deadline = 30.0
    assert model.chat(USER).content == "after the timeout"  # the cut connection left the pool usable
    model.close()
    assert len(server.requests) == 2


@pytest.mark.parametrize("name", ["trickle-sse", "stall-sse", "stall-sse-pinging"])
def test_a_started_stream_that_goes_quiet_is_retried_after_the_idle_timeout(scripted, name: str) -> None:
    hold, _ = HOLDS[name]
    server = scripted([hold, reply("second try")])
    retries: list[str] = []
    model = ModelClient("m", base_url=server.base_url, stream=True, request_timeout=60, idle_timeout=0.3,
                        deadline=60, on_retry=lambda attempt, wait, reason: retries.append(reason))
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts) == ("second try", 2)
    assert retries == ["the stream went quiet: no event for 0.3 s (idle_timeout)"]


def test_keepalive_comments_before_the_reply_starts_are_not_idle(scripted) -> None:
    """Waiting for the first token (a long prompt on a CPU server, a queue upstream) is the request
    timeout's to bound: comments before any event do not start the idle clock."""
    server = scripted([fault("keepalive", interval=0.05)])
    model = ModelClient("m", base_url=server.base_url, stream=True, request_timeout=1.0, idle_timeout=0.2,
                        deadline=1.2)
    with pytest.raises(ModelError, match=r"request timed out after 1 s"):
        model.chat(USER)
    model.close()


@pytest.mark.parametrize("name", list(HOLDS))
def test_the_runs_deadline_ends_the_request(scripted, in_run, name: str) -> None:
    hold, streamed = HOLDS[name]
    server = scripted([hold])
    model = ModelClient("m", base_url=server.base_url, stream=streamed, request_timeout=60, deadline=60)
    in_run(Limits(Budget(timeout=0.5), []))
    with pytest.raises(RunStopped) as info:
        model.chat(USER)
    model.close()
    assert (info.value.stopped, info.value.limit) == ("budget", "timeout")


@pytest.mark.parametrize("name", list(HOLDS))
def test_cancelling_the_run_ends_the_request_at_once(scripted, in_run, name: str) -> None:
    hold, streamed = HOLDS[name]
    token = CancelToken()
    arrived = threading.Event()

    def script(request: dict[str, Any], index: int) -> Any:
        arrived.set()
        return hold

    def publish(event: BaseEvent) -> None:  # a stream that has started is cancelled mid-reply
        if isinstance(event, TextDelta):
            token.cancel()

    server = scripted(script)
    model = ModelClient("m", base_url=server.base_url, stream=streamed, request_timeout=60, deadline=60,
                        idle_timeout=None)
    in_run(Limits(Budget(), [token]), publish)
    if not streamed or name.startswith("keepalive"):  # no text will come: cancel once the server has it
        threading.Thread(target=lambda: arrived.wait(30) and token.cancel(), daemon=True).start()
    with pytest.raises(RunStopped) as info:
        model.chat(USER)
    model.close()
    assert info.value.stopped == "cancelled"


def test_an_agent_timeout_holds_with_a_stream_that_never_ends(scripted, tmp_path) -> None:
    server = scripted([fault("keepalive", interval=0.05)])
    with Agent(model="m", base_url=server.base_url, stream=True, timeout=0.5, request_timeout=60) as agent:
        result = agent.run("hello")
    assert (result.stopped, result.limit) == ("budget", "timeout")


def test_the_cli_request_timeout_stops_a_stream_of_keepalive_comments(scripted) -> None:
    server = scripted([fault("keepalive", interval=0.05)] * 3)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolmode", "run", "--stream", "--request-timeout", "0.5", "--timeout", "1.2",
         "--mode", "react", "--no-builtin", "--no-trace", "--base-url", server.base_url, "--model", "m", "hi"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "retry 1 in" in proc.stdout and "request timed out after 0.5 s (request_timeout)" in proc.stdout
    assert "stopped:" in proc.stdout + proc.stderr


@pytest.mark.parametrize("value", [0, -1.0])
def test_a_bad_idle_timeout_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match="idle_timeout must be more than 0"):
        ModelClient("m", base_url="http://127.0.0.1:9/v1", idle_timeout=value)


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "sse"])
def test_the_client_waits_on_the_runs_own_thread_and_a_cancel_still_ends_its_request(scripted, streamed) -> None:
    """ModelClient bounds every wait by the run (`interruptible`), so the loop calls it on the run's thread
    (no worker thread per request); `Agent.cancel()` from elsewhere still ends a request held open."""
    arrived = threading.Event()

    def script(request: dict[str, Any], index: int) -> Any:
        if index == 0:
            return fault("500")  # retried: the client publishes a Retry event from where it runs
        arrived.set()
        return fault("keepalive", interval=0.05)

    threads: dict[str, int] = {}

    class Where:
        def emit(self, event: BaseEvent) -> None:
            threads.setdefault(event.kind, threading.get_ident())

        def close(self) -> None:
            pass

    server = scripted(script)
    with Agent(model="m", base_url=server.base_url, stream=streamed, request_timeout=60, sinks=[Where()]) as agent:
        assert agent.model.interruptible is True
        threading.Thread(target=lambda: arrived.wait(30) and agent.cancel(), daemon=True).start()
        result = agent.run("hello")
    assert result.stopped == "cancelled"
    assert threads["retry"] == threads["run_start"] == threading.get_ident()


@pytest.mark.parametrize("form", ["settings", "flat"])
def test_idle_timeout_is_a_model_setting_of_the_agent(scripted, form: str) -> None:
    from toolmode import ModelSettings, Retry, SettingsConflict
    from toolmode.trace import MemorySink

    server = scripted([HOLDS["stall-sse"][0], reply("second try")])
    memory = MemorySink()
    given: dict[str, Any] = (
        {"model": ModelSettings("m", base_url=server.base_url, stream=True, idle_timeout=0.3)} if form == "settings"
        else {"model": "m", "base_url": server.base_url, "stream": True, "idle_timeout": 0.3})
    with Agent(sinks=[memory], **given) as agent:
        assert agent.run("hello").answer == "second try"
    assert [e.reason for e in memory.events if isinstance(e, Retry)] == [
        "the stream went quiet: no event for 0.3 s (idle_timeout)"]
    with pytest.raises(SettingsConflict, match="idle_timeout"):
        Agent(model=ModelSettings("m", base_url=server.base_url), idle_timeout=5)
    with pytest.raises(ValueError, match="idle_timeout must be more than 0"):
        ModelSettings("m", idle_timeout=0)


def test_the_cli_idle_timeout_reaches_the_client(scripted) -> None:
    server = scripted([HOLDS["stall-sse"][0], reply("second try")])
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolmode", "run", "--stream", "--idle-timeout", "0.3", "--mode", "react",
         "--no-builtin", "--no-trace", "--base-url", server.base_url, "--model", "m", "hi"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the stream went quiet: no event for 0.3 s (idle_timeout)" in proc.stdout
