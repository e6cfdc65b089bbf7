"""The agent loop (react mode) end to end against the scripted server: limits, truncation, parallel calls,
and every bad-input case: tool exceptions, unknown tools, invalid / non-object JSON arguments, model errors."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from toolmode import Agent, ModelClient, run_agent, tool
from toolmode.loop import truncate
from toolmode.modes.react import ReactMode
from toolmode.testing import call, calls, fault, reply
from toolmode.trace import MemorySink, Trace


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
def explode(message: str) -> str:
    """Always fails."""
    raise ValueError(message)


@tool
def big(n: int) -> str:
    """Return n characters."""
    return "".join(chr(ord("a") + i % 26) for i in range(n))


TOOLS = [echo, explode, big]


def agent(server, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", TOOLS)
    return Agent(mode="react", model="m", base_url=server.base_url, console=False, runs_dir=None, **kwargs)


def run(server, task: str = "task", **kwargs: Any):
    with agent(server, **kwargs) as a:
        return a.run(task)


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def last_tool_result(server, index: int = 1) -> str:
    return tool_messages(server.requests[index])[-1]["content"]


# ----------------------------------------------------------------------------- basics


def test_answer_without_tools_is_one_step(scripted) -> None:
    server = scripted([reply("Paris")])
    result = run(server, "Capital of France?")
    assert (result.answer, result.stopped, result.error, result.steps) == ("Paris", "answer", None, 1)
    assert result.ok
    assert result.usage.requests == 1
    first = server.requests[0]
    assert first["messages"][-1] == {"role": "user", "content": "Capital of France?"}
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["big", "echo", "explode"]


def test_tool_call_then_answer_replays_the_conversation(scripted) -> None:
    server = scripted([call("echo", text="hi there"), reply("It said hi there.")])
    result = run(server, system_prompt="Be brief.")
    assert result.answer == "It said hi there."
    assert result.steps == 2
    [c] = result.records[0].calls
    assert (c.name, json.loads(c.arguments), c.result, c.error) == ("echo", {"text": "hi there"}, "hi there", False)
    second = server.requests[1]["messages"]
    assert second[0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[3] == {"role": "tool", "tool_call_id": second[2]["tool_calls"][0]["id"], "content": "hi there"}
    # totals are the sum of the steps
    assert result.usage.prompt_tokens == sum(r.usage.prompt_tokens for r in result.records)
    assert result.usage.completion_tokens == sum(r.usage.completion_tokens for r in result.records)
    assert result.usage.cached_tokens == sum(r.usage.cached_tokens for r in result.records) > 0
    assert result.usage.requests == 2
    assert result.model_time > 0 and result.wall_time >= result.model_time


def test_empty_arguments_mean_no_arguments(scripted) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    server = scripted([calls(("ping", "")), reply("ok")])
    result = run(server, tools=[ping])
    assert result.records[0].calls[0].result == "pong"


# ----------------------------------------------------------------------------- step limit


def test_step_limit_stops_with_a_clear_error(scripted) -> None:
    server = scripted([call("echo", text=str(i)) for i in range(10)])
    result = run(server, max_steps=3)
    assert result.stopped == "step_limit"
    assert not result.ok
    assert result.answer is None
    assert result.steps == 3
    assert len(server.requests) == 3
    assert "step limit" in result.error and "3" in result.error
    assert [r.calls[0].result for r in result.records] == ["0", "1", "2"]


def test_default_step_limit_is_10(scripted) -> None:
    server = scripted([call("echo", text="again")] * 12)
    result = run(server)
    assert (result.stopped, result.steps, len(server.requests)) == ("step_limit", 10, 10)


def test_answer_on_the_last_allowed_step_is_an_answer(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("done")])
    result = run(server, max_steps=2)
    assert (result.stopped, result.answer) == ("answer", "done")


# ----------------------------------------------------------------------------- truncation


def test_long_result_is_truncated_with_a_marker_and_counts(scripted) -> None:
    server = scripted([call("big", n=10_000), reply("ok")])
    result = run(server, max_result_chars=100)
    sent = last_tool_result(server)
    assert sent.startswith(big.fn(100))
    assert "[truncated: 9,900 of 10,000 characters cut]" in sent
    assert len(sent) < 200
    assert result.records[0].calls[0].result == sent


def test_default_truncation_is_4000(scripted) -> None:
    server = scripted([call("big", n=4000), call("big", n=4001), reply("ok")])
    run(server)
    assert last_tool_result(server, 1) == big.fn(4000)
    assert last_tool_result(server, 2).endswith("[truncated: 1 of 4,001 characters cut]")


def test_truncate_helper() -> None:
    assert truncate("abc", 3) == "abc"
    assert truncate("abcd", 0) == "abcd"  # 0 = no limit
    assert truncate("abcdef", 2) == "ab\n... [truncated: 4 of 6 characters cut]"


# ----------------------------------------------------------------------------- parallel calls


def test_parallel_calls_all_run_concurrently_and_are_answered_in_order(scripted) -> None:
    # A barrier of 3: if the calls ran one after another, the first would wait alone and fail.
    barrier = threading.Barrier(3, timeout=10)
    threads: set[str] = set()

    @tool
    def meet(tag: str) -> str:
        """Wait for the others, then return the tag."""
        threads.add(threading.current_thread().name)
        barrier.wait()
        return f"result {tag}"

    server = scripted([calls(("meet", {"tag": "A"}), ("meet", {"tag": "B"}), ("meet", {"tag": "C"})), reply("ok")])
    result = run(server, tools=[meet])
    assert result.answer == "ok"
    assert len(threads) == 3
    assistant = server.requests[1]["messages"][-4]
    ids = [c["id"] for c in assistant["tool_calls"]]
    answered = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in answered] == ids
    assert [m["content"] for m in answered] == ["result A", "result B", "result C"]
    assert [c.result for c in result.records[0].calls] == ["result A", "result B", "result C"]


def test_parallel_calls_keep_order_when_the_first_finishes_last(scripted) -> None:
    last_done = threading.Event()

    @tool
    def step(tag: str) -> str:
        """Return the tag; the first waits until the last is done."""
        if tag == "first":
            last_done.wait(10)
        if tag == "last":
            last_done.set()
        return tag

    server = scripted([calls(("step", {"tag": "first"}), ("echo", {"text": "mid"}), ("step", {"tag": "last"})),
                       reply("ok")])
    run(server, tools=[step, echo])
    assert [m["content"] for m in tool_messages(server.requests[1])] == ["first", "mid", "last"]


def test_parallel_bad_calls_do_not_spoil_the_good_ones(scripted) -> None:
    server = scripted([
        calls(("echo", {"text": "good"}), ("nope", {}), ("echo", '{"text": '), ("explode", {"message": "x"})),
        reply("ok"),
    ])
    result = run(server)
    contents = [m["content"] for m in tool_messages(server.requests[1])]
    assert contents[0] == "good"
    assert all(c.startswith("Error: ") for c in contents[1:])
    assert [c.error for c in result.records[0].calls] == [False, True, True, True]


# ----------------------------------------------------------------------------- bad input, answered to the model


def test_tool_exception_becomes_error_type_message_and_run_continues(scripted) -> None:
    server = scripted([call("explode", message="disk on fire"), reply("Sorry, it failed.")])
    result = run(server)
    assert last_tool_result(server) == "Error: ValueError: disk on fire"
    assert result.answer == "Sorry, it failed."
    assert result.records[0].calls[0].error is True


def test_unknown_tool_is_answered_with_the_available_tools(scripted) -> None:
    server = scripted([call("read_fiel", path="a.txt"), reply("recovered")])
    result = run(server)
    text = last_tool_result(server)
    assert text.startswith("Error: ")
    assert "unknown tool 'read_fiel'" in text
    assert "echo" in text and "big" in text  # names what exists
    assert result.stopped == "answer" and result.answer == "recovered"


def test_invalid_json_arguments_are_answered_and_run_continues(scripted) -> None:
    server = scripted([calls(("echo", '{"text": "unterminated')), call("echo", text="fixed"), reply("done")])
    result = run(server)
    text = last_tool_result(server, 1)
    assert text.startswith("Error: the arguments of echo are not valid JSON")
    assert "nothing was run" in text
    assert '{"text": "unterminated' in text  # quotes what was sent
    assert last_tool_result(server, 2) == "fixed"
    assert result.answer == "done" and result.steps == 3


@pytest.mark.parametrize("raw, kind", [("[1, 2]", "list"), ('"text"', "str"), ("42", "int"), ("null", "NoneType")])
def test_non_object_json_arguments_are_answered(scripted, raw: str, kind: str) -> None:
    server = scripted([calls(("echo", raw)), reply("done")])
    result = run(server)
    text = last_tool_result(server)
    assert text.startswith("Error: the arguments of echo must be a JSON object")
    assert kind in text
    assert result.answer == "done"


def test_wrong_argument_type_and_missing_argument_are_answered(scripted) -> None:
    server = scripted([calls(("big", {"n": "many"}), ("echo", {})), reply("done")])
    result = run(server)
    wrong, missing = [m["content"] for m in tool_messages(server.requests[1])]
    assert wrong.startswith("Error: ToolArgumentError: big: n:")
    assert "big(n: int) -> str" in wrong
    assert missing.startswith("Error: ToolArgumentError: echo: text:")
    assert result.answer == "done"


def test_unknown_argument_is_answered(scripted) -> None:
    server = scripted([calls(("echo", {"text": "a", "loud": True})), reply("done")])
    run(server)
    assert "unknown argument(s) loud" in last_tool_result(server)


def test_model_error_mid_run_stops_with_error_and_keeps_the_records(scripted) -> None:
    server = scripted([
        call("echo", text="one"),
        call("echo", text="two"),
        fault("status", status=402, message="Insufficient Balance"),
    ])
    result = run(server)
    assert result.stopped == "error"
    assert result.answer is None
    assert "Insufficient Balance" in result.error and "402" in result.error
    assert result.steps == 2
    assert [r.calls[0].result for r in result.records] == ["one", "two"]
    assert result.usage.requests == 2


def test_script_running_out_is_a_model_error_not_a_crash(scripted) -> None:
    server = scripted([call("echo", text="one")])
    result = run(server)
    assert result.stopped == "error"
    assert "script exhausted" in result.error


# ----------------------------------------------------------------------------- run_agent directly


def test_run_agent_with_a_mode_and_a_client(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("fine")])
    sink = MemorySink()
    model = ModelClient("m", base_url=server.base_url)
    try:
        result = run_agent("task", ReactMode([echo]), model, trace=Trace([sink]), max_steps=4)
    finally:
        model.close()
    assert result.answer == "fine"
    kinds = [e.kind for e in sink.events]
    # the loop itself starts and ends the stream; tools only when they change; each message as it joins
    assert kinds == ["run_start", "message", "tools", "reply", "message", "tool_call", "tool_result", "message",
                     "reply", "message", "run_end"]
    assert [e.data["source"] for e in sink.of("message")] == ["task", "reply", "tool", "reply"]
    assert [e.data["message"] for e in sink.of("message")] == result.messages
    assert sink.of("tools")[0].data["names"] == ["echo"]
    assert sink.of("run_end")[0].data["stopped"] == "answer"


def test_result_to_dict_is_json(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("fine")])
    result = run(server)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["answer"] == "fine" and data["stopped"] == "answer" and data["steps"] == 2
    assert data["records"][0]["calls"][0]["name"] == "echo"
    assert data["usage"]["requests"] == 2
    assert "messages" not in data
    assert result.to_dict(include_messages=True)["messages"][-1] == {"role": "assistant", "content": "fine"}
