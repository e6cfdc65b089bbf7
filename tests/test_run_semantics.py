"""A run means what it says (issue 17): the caller's context variables and per-run dependencies reach the
tools; per-run state stays in its run; max_cost, max_tokens and max_total_tokens each have one meaning;
a continued conversation runs under the new agent's prompt; a custom model's requests are counted; a
FallbackModel says what falls back; the code-mode workspace default and refusal; options checked at the start."""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolmode import (
    Agent,
    FallbackModel,
    ModelSettings,
    Reply,
    RunContext,
    ToolCall,
    Usage,
    builtin_tools,
    tool,
)
from toolmode.budget import RunStopped
from toolmode.cli import main
from toolmode.sandbox import UnsafeWorkspace
from toolmode.testing import call, calls, reply
from toolmode.trace import MemorySink, Trace

REPO = Path(__file__).resolve().parents[1]
TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="nobody")


@tool
def whoami() -> str:
    """The tenant of the request in progress."""
    return TENANT.get()


@tool
async def whoami_async() -> str:
    """The tenant of the request in progress, from async code."""
    await asyncio.sleep(0)
    return TENANT.get()


def make(server: Any, tools: Sequence[Any] = (), **kwargs: Any) -> Agent:
    return Agent(list(tools), model="m", base_url=server.base_url, **kwargs)


def results(result: Any) -> list[str]:
    return [c.result for c in result.records[0].calls]


# ----------------------------------------------------------------------------- item 3: context and deps


def test_every_driver_runs_the_tools_in_the_callers_context(scripted) -> None:
    server = scripted([calls(("whoami", {}), ("whoami_async", {})), reply("ok")] * 4)
    token = TENANT.set("acme")
    try:
        with make(server, [whoami, whoami_async]) as agent:
            ran = agent.run("who")
            streamed = list(agent.stream("who"))[-1].result

            async def in_asyncio() -> tuple[Any, Any]:
                awaited = await agent.arun("who")
                events = [e async for e in agent.astream("who")]
                return awaited, events[-1].result

            awaited, astreamed = asyncio.run(in_asyncio())
    finally:
        TENANT.reset(token)
    for result in (ran, streamed, awaited, astreamed):
        assert results(result) == ["acme", "acme"]


@dataclass
class Deps:
    user: str


@tool
def greet(ctx: RunContext[Deps], greeting: str) -> str:
    """Greet the user of this run."""
    return f"{greeting}, {ctx.deps.user} (step {ctx.step})"


def test_deps_reach_a_tool_that_asks_for_the_run_context(scripted) -> None:
    server = scripted([call("greet", greeting="hello"), reply("done")] * 2)
    with make(server, [greet], deps=Deps("ada")) as agent:
        first = agent.run("go")
        second = agent.run("go", deps=Deps("bob"))
    assert results(first) == ["hello, ada (step 1)"] and results(second) == ["hello, bob (step 1)"]
    sent = server.requests[0]["tools"][0]["function"]["parameters"]
    assert list(sent["properties"]) == ["greeting"] and sent["required"] == ["greeting"]  # ctx is not the model's


def test_deps_reach_a_tool_called_from_run_code(scripted, workspace: Path) -> None:
    server = scripted([call("run_code", code="print(greet('hi'))"), reply("done")])
    with make(server, [greet], mode="code", workspace=workspace, deps=Deps("ada")) as agent:
        result = agent.run("go")
    assert results(result)[0].strip() == "hi, ada (step 1)"


# ----------------------------------------------------------------------------- item 4: per-run mode state


def test_a_name_defined_in_one_run_is_not_remembered_by_the_next(scripted, workspace: Path) -> None:
    server = scripted([call("run_code", code="x = 1\nprint(x)"), call("run_code", code="print(x)"), reply("a"),
                       call("run_code", code="print(x)"), reply("b")])
    with make(server, mode="code", workspace=workspace) as agent:
        first = agent.run("define then use")
        second = agent.run("use only")
    hint = "was set by an earlier run_code call"
    assert hint in first.records[1].calls[0].result  # within a run, the hint explains the NameError
    assert "NameError" in second.records[0].calls[0].result and hint not in second.records[0].calls[0].result


class _OnCallFinished:
    """A trace sink that runs `action` in the run's own thread when its run_code call has finished."""

    def __init__(self, action: Any) -> None:
        self.action = action

    def emit(self, event: Any) -> None:
        if event.kind == "tool_result" and event.name == "run_code":
            self.action()

    def close(self) -> None:
        pass


def test_two_runs_at_once_keep_their_own_names(scripted, workspace: Path) -> None:
    """`define` sets y, then (still in progress) starts `use` and waits until use's program has run."""
    def script(body: dict[str, Any], index: int) -> Any:
        task, done = body["messages"][1]["content"], any(m["role"] == "tool" for m in body["messages"])
        program = "y = 2\nprint(y)" if task == "define" else "print(y)"
        return reply(f"{task} done") if done else call("run_code", code=program)

    server = scripted(script)
    out: dict[str, Any] = {}
    used = threading.Event()
    with make(server, mode="code", workspace=workspace) as agent:
        def run(task: str, action: Any) -> None:
            out[task] = agent.run(task, trace=Trace([_OnCallFinished(action)]))

        use = threading.Thread(target=run, args=("use", used.set))

        def start_use_and_wait() -> None:
            use.start()
            assert used.wait(120)  # a bound for a broken build

        run("define", start_use_and_wait)
        use.join(120)
    result = out["use"].records[0].calls[0].result
    assert out["define"].answer == "define done" and out["use"].answer == "use done"
    assert "NameError" in result and "was set by an earlier run_code call" not in result


# ----------------------------------------------------------------------------- item 6: max_cost, unknown price


def test_max_cost_with_an_unknown_price_counts_the_unknown_cost_as_spent(scripted) -> None:
    server = scripted([call("whoami") for _ in range(5)] + [reply("never")])
    sink = MemorySink()
    with make(server, [whoami], max_cost=0.0001, sinks=[sink]) as agent:
        result = agent.run("go")
    assert (result.stopped, result.limit, len(server.requests)) == ("budget", "max_cost", 1)
    assert "max_cost cannot be held" in result.error and result.cost is None
    assert [e.data["about"] for e in sink.of("notice")] == ["price_unknown"]
    assert result.messages[-1]["role"] == "tool"  # stopped between requests: a valid conversation


# ----------------------------------------------------------------------------- item 7: max_tokens


def test_max_tokens_caps_each_reply_and_max_total_tokens_is_the_budget(scripted) -> None:
    server = scripted([reply("a"), reply("b"), call("whoami"), reply("never")])
    with Agent([], model=ModelSettings("m", base_url=server.base_url, max_tokens=64)) as agent:
        assert agent.run("go").ok
    with pytest.warns(FutureWarning, match="max_tokens now caps each reply"), make(server, max_tokens=32) as agent:
        assert agent.run("go").ok
    with make(server, [whoami], max_total_tokens=1) as agent:
        budget = agent.run("go")
        with pytest.raises(ValueError, match="max_tokens caps each reply .* the run's token budget is max_total_tokens"):
            agent.run("go", max_tokens=5)
    assert [r.get("max_tokens") for r in server.requests] == [64, 32, None]
    assert (budget.stopped, budget.limit) == ("budget", "max_total_tokens")


def test_the_cli_and_the_library_agree_on_max_tokens(scripted, tmp_path: Path, capsys) -> None:
    server = scripted([reply("fine")])
    assert main(["run", "--mode", "react", "--no-builtin", "--base-url", server.base_url, "--model", "m",
                 "--no-trace", "--max-tokens", "64", "--max-total-tokens", "100000", "--json", "hi"]) == 0
    assert server.requests[0]["max_tokens"] == 64
    assert json.loads(capsys.readouterr().out)["answer"] == "fine"


# ----------------------------------------------------------------------------- item 8: history across agents


def test_history_from_a_code_agent_continues_under_a_react_agents_prompt(scripted, workspace: Path) -> None:
    server = scripted([reply("first"), reply("second"), reply("third")])
    with make(server, mode="code", workspace=workspace) as code_agent:
        first = code_agent.run("one")
    with make(server, [whoami]) as react_agent:
        second = react_agent.run("two", history=first.messages)
    with make(server, [whoami], instructions="Answer briefly.") as briefed:
        briefed.run("three", history=second.messages)
    code_prompt = first.messages[0]["content"]
    assert "run_code" in code_prompt and first.messages[0]["role"] == "system"
    assert [m["role"] for m in server.requests[1]["messages"]] == ["user", "assistant", "user"]
    assert server.requests[2]["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert all(code_prompt not in json.dumps(r["messages"]) for r in server.requests[1:])


# ----------------------------------------------------------------------------- item 9: custom models counted


class CannedModel:
    """A custom model that reports tokens but not requests, as a provider SDK wrapper would."""

    model = "canned"

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
        return self.replies.pop(0)


def test_a_custom_models_requests_are_counted_by_the_loop() -> None:
    model = CannedModel([Reply(None, [ToolCall("c1", "whoami", "{}")], usage=Usage(prompt_tokens=10)),
                         Reply("done", usage=Usage(prompt_tokens=12, completion_tokens=3))])
    with Agent([whoami], model=model) as agent:
        result = agent.run("go")
    assert result.answer == "done"
    assert (result.usage.requests, result.usage.prompt_tokens, result.steps) == (2, 22, 2)


# ----------------------------------------------------------------------------- item 10: what falls back


class Failing:
    """A custom primary that raises."""

    model = "failing"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.calls = 0

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
        self.calls += 1
        raise self.exc


def test_a_custom_primary_that_raises_falls_back_to_the_backup(scripted) -> None:
    primary = Failing(RuntimeError("the provider SDK broke"))
    sink = MemorySink()
    with Agent([whoami], model=FallbackModel([primary, CannedModel([Reply("from the backup")])]),
               sinks=[sink]) as agent:
        result = agent.run("go")
    assert result.answer == "from the backup" and primary.calls == 1
    [notice] = sink.of("notice")
    assert notice.data["about"] == "fallback" and "RuntimeError: the provider SDK broke" in notice.data["message"]


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), RunStopped("cancelled", "stopped: cancelled")])
def test_an_interrupt_or_the_runs_own_stop_never_falls_back(exc: BaseException) -> None:
    backup = CannedModel([Reply("must not be asked")])
    chain = FallbackModel([Failing(exc), backup])
    with pytest.raises(type(exc)):
        chain.chat([{"role": "user", "content": "go"}])
    assert backup.replies  # untouched


# ----------------------------------------------------------------------------- item 15: the workspace


def test_the_readme_code_mode_example_works_from_the_repository_root(scripted, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # holds .venv and src/toolmode: never a workspace for model-written code
    server = scripted([call("run_code", code="print(sorted(t['name'] for t in list_dir('.'))[:1])"), reply("ok")])
    tools = [*builtin_tools(workspace=".")]
    core = ["read_file", "list_dir", "write_file", "run_shell"]
    with Agent(tools=tools, mode="code", visible=core, model="m", base_url=server.base_url) as agent:
        result = agent.run("list")
        scratch = agent.mode.sandbox.workspace
        assert scratch.is_dir() and not scratch.is_relative_to(REPO)  # a private temporary workspace
    assert result.ok and not scratch.exists()  # removed with the agent


def test_the_workspace_refusal_names_the_library_and_the_cli_spelling(scripted, capsys) -> None:
    server = scripted([])
    with pytest.raises(UnsafeWorkspace) as err:
        Agent([], mode="code", workspace=REPO, model="m", base_url=server.base_url)
    assert "workspace= in Python" in str(err.value) and "--workspace DIR on the command line" in str(err.value)
    assert main(["run", "--mode", "code", "--workspace", str(REPO), "--base-url", server.base_url, "hi"]) == 2
    assert "--workspace DIR" in capsys.readouterr().err


# ----------------------------------------------------------------------------- item 16: options checked


@pytest.mark.parametrize("kwargs, message", [
    ({"max_tokens": 1.5}, "max_tokens must be a whole number, got 1.5"),
    ({"max_steps": 0}, "max_steps must be 1 or more, got 0"),
    ({"max_result_chars": -1}, "max_result_chars must be 0 or more, got -1"),
    ({"request_timeout": 0}, "request_timeout must be more than 0, got 0"),
    ({"temperature": "hot"}, "temperature must be a positive number, got 'hot'"),
    ({"timeout": float("nan")}, "timeout must be a positive number, got nan"),
])
def test_a_bad_agent_option_is_one_clear_error_naming_it(kwargs: dict[str, Any], message: str) -> None:
    with warnings.catch_warnings(), pytest.raises(ValueError) as err:
        warnings.simplefilter("ignore", FutureWarning)
        Agent([], model="m", base_url="http://127.0.0.1:9/v1", **kwargs)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("output_type, problem", [
    (object, "matches any JSON"),
    (lambda text: text, "is a function"),
    ("int", "is a name: give the type itself"),
])
def test_an_output_type_no_answer_could_meet_is_refused_at_the_start(scripted, output_type: Any, problem: str) -> None:
    server = scripted([reply("never")])
    with make(server) as agent, pytest.raises(ValueError) as err:
        agent.run("go", output_type=output_type)
    assert str(err.value).startswith("output_type ") and problem in str(err.value)
    assert server.requests == []


class ThreadNoting:
    """A custom model that notes the thread it is called on."""

    model = "noting"

    def __init__(self, interruptible: bool) -> None:
        self.interruptible = interruptible
        self.threads: list[threading.Thread] = []

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
        self.threads.append(threading.current_thread())
        return Reply("done")


@pytest.mark.parametrize("interruptible", [True, False])
def test_a_model_that_stops_by_itself_is_called_on_the_runs_thread(interruptible: bool) -> None:
    model = ThreadNoting(interruptible)
    with Agent([], model=model) as agent:
        assert agent.run("go").answer == "done"
    on_the_run = model.threads == [threading.current_thread()]
    assert on_the_run is interruptible  # any other model runs where the run can stop waiting for it
