"""The scripted model server, exercised through the real openai SDK over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai import OpenAI

from toolmode.testing import ScriptedModelServer, ScriptError, call, calls, fault, main, reply

USER = [{"role": "user", "content": "What is in a.txt?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file from the workspace and return its content.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


_clients: list[OpenAI] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def client(server: ScriptedModelServer | str, retries: int = 0) -> OpenAI:
    base_url = server if isinstance(server, str) else server.base_url
    c = OpenAI(base_url=base_url, api_key="test-key", max_retries=retries, timeout=10)
    _clients.append(c)
    return c


def ask(c: OpenAI, messages: list[dict[str, Any]] = USER, **kwargs: Any) -> Any:
    return c.chat.completions.create(model="scripted-model", messages=messages, **kwargs)


def collect(stream: Iterator[Any]) -> dict[str, Any]:
    """Reassemble a streamed reply the way a client does; also count argument pieces per call."""
    content, reasoning, usage, finish = [], [], None, None
    tool_calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            reasoning.append(getattr(delta, "reasoning_content", None) or "")
            for tc in delta.tool_calls or []:
                entry = tool_calls.setdefault(
                    tc.index, {"id": None, "name": "", "arguments": "", "pieces": 0}
                )
                entry["id"] = tc.id or entry["id"]
                if tc.function and tc.function.name:
                    entry["name"] += tc.function.name
                if tc.function and tc.function.arguments:
                    entry["arguments"] += tc.function.arguments
                    entry["pieces"] += 1
            finish = choice.finish_reason or finish
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [tool_calls[i] for i in sorted(tool_calls)],
        "finish_reason": finish,
        "usage": usage,
    }


def as_plain(response: Any) -> dict[str, Any]:
    message = response.choices[0].message
    return {
        "content": message.content,
        "reasoning": getattr(message, "reasoning_content", None),
        "tool_calls": [
            {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments}
            for tc in message.tool_calls or []
        ],
        "finish_reason": response.choices[0].finish_reason,
        "usage": response.usage.model_dump(),
    }


# replies


def test_plain_reply_and_request_recorded() -> None:
    with ScriptedModelServer([reply("The file says hello.")]) as server:
        response = ask(client(server))
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    message = response.choices[0].message
    assert message.content == "The file says hello."
    assert message.tool_calls is None
    assert response.choices[0].finish_reason == "stop"
    assert response.model == "scripted-model"
    usage = response.usage.model_dump()
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_cache_hit_tokens"] == 0
    assert usage["prompt_cache_miss_tokens"] == usage["prompt_tokens"]
    assert server.requests == [{"model": "scripted-model", "messages": USER}]
    assert server.server_seconds > 0


def test_tool_call_has_null_content_and_generated_id() -> None:
    with ScriptedModelServer([call("read_file", path="a.txt")]) as server:
        response = ask(client(server), tools=TOOLS)
    message = response.choices[0].message
    assert message.content is None
    assert response.choices[0].finish_reason == "tool_calls"
    [tc] = message.tool_calls
    assert tc.type == "function" and tc.id.startswith("call_")
    assert tc.function.name == "read_file"
    assert json.loads(tc.function.arguments) == {"path": "a.txt"}
    assert server.requests[0]["tools"] == TOOLS


def test_parallel_calls_keep_given_ids_and_generate_unique_ones() -> None:
    item = calls(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"}), ("list_dir", {}))
    item["tool_calls"][1]["id"] = "call_given"
    with ScriptedModelServer([item]) as server:
        response = ask(client(server))
    tcs = response.choices[0].message.tool_calls
    assert [json.loads(tc.function.arguments) for tc in tcs] == [{"path": "a.txt"}, {"path": "b.txt"}, {}]
    assert tcs[1].id == "call_given"
    assert len({tc.id for tc in tcs}) == 3


def test_raw_string_arguments_arrive_verbatim() -> None:
    raw = '{"path": "a.txt", oops'
    with ScriptedModelServer([calls(("read_file", raw))]) as server:
        response = ask(client(server))
    assert response.choices[0].message.tool_calls[0].function.arguments == raw


def test_reasoning_content_and_openai_usage_style() -> None:
    with ScriptedModelServer([reply("42", reasoning="Six times seven.")], usage_style="openai") as server:
        response = ask(client(server))
    message = response.choices[0].message
    assert message.content == "42"
    assert message.reasoning_content == "Six times seven."
    usage = response.usage.model_dump(exclude_none=True)
    assert "prompt_cache_hit_tokens" not in usage and "prompt_cache_miss_tokens" not in usage
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    reasoning_tokens = usage["completion_tokens_details"]["reasoning_tokens"]
    assert 0 < reasoning_tokens < usage["completion_tokens"]


# streaming


SCRIPT_FOR_STREAMING = [
    reply("The answer is forty-two, as computed step by step.", reasoning="Multiply six by seven."),
    calls(("read_file", {"path": "notes/a.txt"}), ("list_dir", {"path": ".", "recursive": True})),
    calls(("read_file", "not json at all")),
]


def test_streaming_reassembles_to_the_plain_reply() -> None:
    with ScriptedModelServer(SCRIPT_FOR_STREAMING) as plain, ScriptedModelServer(SCRIPT_FOR_STREAMING) as sse:
        plain_client, sse_client = client(plain), client(sse)
        for _ in SCRIPT_FOR_STREAMING:
            expected = as_plain(ask(plain_client, tools=TOOLS))
            stream = ask(sse_client, tools=TOOLS, stream=True, stream_options={"include_usage": True})
            got = collect(stream)
            assert all(tc["pieces"] >= 2 for tc in got["tool_calls"])  # arguments split across chunks
            for tc in got["tool_calls"]:
                del tc["pieces"]
            assert got == expected
    assert sse.requests[0]["stream"] is True


def test_streaming_without_include_usage_has_no_usage_chunk() -> None:
    with ScriptedModelServer([reply("hello there")]) as server:
        got = collect(ask(client(server), stream=True))
    assert got["content"] == "hello there" and got["usage"] is None and got["finish_reason"] == "stop"


def test_streaming_wire_format_is_sse_with_done() -> None:
    with ScriptedModelServer([call("read_file", path="a.txt")]) as server:
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps({"model": "m", "messages": USER, "stream": True}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            text = response.read().decode()
    events = [event for event in text.split("\n\n") if event]
    assert all(event.startswith("data: ") for event in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    head = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert head["index"] == 0 and head["id"] and head["function"]["name"] == "read_file"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


# usage and simulated prefix caching


def test_cached_tokens_grow_as_a_conversation_is_replayed() -> None:
    script = [call("read_file", path="a.txt"), call("read_file", path="b.txt"), reply("done")]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}, *USER]
    with ScriptedModelServer(script) as server:
        c = client(server)
        usages = []
        for step in range(3):
            response = ask(c, messages=messages, tools=TOOLS)
            usages.append(response.usage.model_dump())
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            for tc in message.tool_calls or []:
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": f"content of file {step}"})
    prompts = [u["prompt_tokens"] for u in usages]
    cached = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    assert prompts[0] < prompts[1] < prompts[2]
    assert cached == [0, prompts[0], prompts[1]]
    assert [u["prompt_cache_hit_tokens"] for u in usages] == cached
    assert all(
        u["prompt_cache_miss_tokens"] == u["prompt_tokens"] - u["prompt_cache_hit_tokens"] for u in usages
    )


def test_cache_hits_only_the_shared_prefix_and_rounds_to_blocks() -> None:
    first = [{"role": "system", "content": "You are terse. " * 20}, *USER]
    other = [{"role": "system", "content": "You are verbose. " * 20}, *USER]
    with ScriptedModelServer([reply("a"), reply("b"), reply("c")], cache_block=8) as server:
        c = client(server)
        u1 = ask(c, messages=first, tools=TOOLS).usage
        u2 = ask(c, messages=other, tools=TOOLS).usage
        u3 = ask(c, messages=first, tools=TOOLS).usage
    shared = u2.prompt_tokens_details.cached_tokens
    assert 0 < shared < u1.prompt_tokens  # the tools are shared, the system prompt is not
    assert shared % 8 == 0
    assert u3.prompt_tokens_details.cached_tokens == u1.prompt_tokens - u1.prompt_tokens % 8


# faults


def test_429_sends_retry_after_and_the_retry_gets_the_next_item() -> None:
    with ScriptedModelServer(
        [fault("429", retry_after=1.5), fault("429", retry_after=0.1), reply("ok")]
    ) as server:
        with pytest.raises(openai.RateLimitError) as info:
            ask(client(server))
        assert info.value.status_code == 429
        assert info.value.response.headers["Retry-After"] == "1.5"
        assert info.value.body["type"] == "rate_limit_error"
        assert ask(client(server, retries=1)).choices[0].message.content == "ok"
    assert len(server.requests) == 3


def test_500() -> None:
    with ScriptedModelServer([fault("500"), reply("recovered")]) as server:
        c = client(server)
        with pytest.raises(openai.InternalServerError):
            ask(c)
        assert ask(c).choices[0].message.content == "recovered"


def test_slow_reply_is_delayed_and_reported_apart() -> None:
    with ScriptedModelServer([fault("slow", delay=0.3, then=reply("finally"))]) as server:
        began = time.perf_counter()
        response = ask(client(server))
        elapsed = time.perf_counter() - began
    assert response.choices[0].message.content == "finally"
    assert elapsed >= 0.25
    assert server.delay_seconds >= 0.25


def test_cut_stream_raises_in_the_client_and_the_connection_recovers() -> None:
    script = [fault("cut_stream"), fault("cut_stream", then=reply("never complete " * 20)), reply("fine")]
    with ScriptedModelServer(script) as server:
        c = client(server)
        with pytest.raises(openai.APIConnectionError):
            collect(ask(c, stream=True))
        with pytest.raises(openai.APIConnectionError):
            ask(c)
        assert ask(c).choices[0].message.content == "fine"
    assert len(server.requests) == 3


def test_bad_body_is_not_json() -> None:
    with ScriptedModelServer([fault("bad_body")]) as server, pytest.raises((ValueError, openai.APIError)):
        ask(client(server))


def test_status_fault_carries_the_message() -> None:
    script = [fault("status", status=401, message="Authentication Fails (invalid key)")]
    with ScriptedModelServer(script) as server, pytest.raises(openai.AuthenticationError) as info:
        ask(client(server))
    assert info.value.status_code == 401
    assert info.value.body["message"] == "Authentication Fails (invalid key)"
    assert "Authentication Fails (invalid key)" in str(info.value)


def test_script_exhausted_is_a_loud_400() -> None:
    with ScriptedModelServer([reply("only one")]) as server:
        c = client(server, retries=2)
        ask(c)
        with pytest.raises(openai.BadRequestError) as info:
            ask(c)
    assert "scripted server: script exhausted after 1 replies" in str(info.value)
    assert len(server.requests) == 2  # a 400 is not retried


# scripts, endpoints, lifecycle


def test_callable_script_sees_the_request_and_its_index() -> None:
    def script(request: dict[str, Any], index: int) -> dict[str, Any] | None:
        if index == 2:
            raise ValueError("no third reply")
        if index == 3:
            return None
        return reply(f"{index}: {request['messages'][-1]['content']}")

    with ScriptedModelServer(script) as server:
        c = client(server)
        assert ask(c).choices[0].message.content == f"0: {USER[0]['content']}"
        assert (
            ask(c, messages=[{"role": "user", "content": "again"}]).choices[0].message.content == "1: again"
        )
        with pytest.raises(openai.BadRequestError, match="script callable raised ValueError: no third reply"):
            ask(c)
        with pytest.raises(openai.BadRequestError, match="script exhausted after 3 replies"):
            ask(c)


def test_bad_items_fail_where_the_script_is_written() -> None:
    with pytest.raises(ScriptError):
        ScriptedModelServer([{"content": "x", "tool_call": []}])
    with pytest.raises(ScriptError):
        fault("teapot")
    with pytest.raises(ScriptError):
        fault("slow", dleay=1)


def test_models_endpoint_and_unknown_path() -> None:
    with ScriptedModelServer([], model="my-model") as server:
        assert [m.id for m in client(server).models.list()] == ["my-model"]
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.base_url + "/nope", timeout=10)
        assert info.value.code == 404
        assert "no route" in json.loads(info.value.read())["error"]["message"]


def test_keep_alive_pool_and_concurrent_requests() -> None:
    count = 8
    with ScriptedModelServer([reply(f"r{i}") for i in range(count * 2)]) as server:
        c = client(server)
        for _ in range(count):
            ask(c)
        assert server.connections == 1  # every request reused the pooled connection
        answers: list[str] = []
        threads = [
            threading.Thread(target=lambda: answers.append(ask(c).choices[0].message.content))
            for _ in range(count)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(answers) == sorted(f"r{i}" for i in range(count, count * 2))


def test_stop_closes_kept_alive_connections() -> None:
    server = ScriptedModelServer([reply("one"), reply("two")])
    with pytest.raises(RuntimeError):
        _ = server.base_url
    base_url = server.start()
    assert server.start() == base_url
    c = client(server)
    ask(c)
    server.stop()
    server.stop()
    with pytest.raises(openai.APIConnectionError):
        ask(c)
    assert server.base_url == base_url


def test_cli_main(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([reply("from the command line")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "toolmode.testing", "--script", str(script), "--usage-style", "openai"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = process.stdout.readline().strip()
        assert ask(client(base_url)).choices[0].message.content == "from the command line"
    finally:
        process.terminate()  # SIGTERM: SIGINT may be ignored when the test runs as a background job
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr

    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    assert main(["--script", str(tmp_path / "bad.json")]) == 2


def test_scripted_usage_extras_are_merged() -> None:
    from toolmode.models import ModelClient

    with ScriptedModelServer([reply("hi", usage={"cost": 0.0125}), {"content": "x", "usage": {"prompt_tokens": 7}}]) as s:
        client = ModelClient("m", base_url=s.base_url)
        first, second = client.chat([{"role": "user", "content": "a"}]), client.chat([{"role": "user", "content": "b"}])
        client.close()
    assert first.reported_cost == 0.0125 and first.usage.prompt_tokens > 0
    assert second.usage.prompt_tokens == 7
