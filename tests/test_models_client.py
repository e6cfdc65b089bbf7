"""ModelClient over real HTTP against the scripted server: replies, usage, streaming, retries, errors, keys."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from toolmode.models import MissingApiKey, ModelClient, ModelError, Reply, ToolCall
from toolmode.testing import ScriptedModelServer, call, calls, fault, reply
from toolmode.usage import Usage

USER = [{"role": "user", "content": "What is in a.txt?"}]
READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a text file and return its content.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
RUN_CODE = {
    "type": "function",
    "function": {
        "name": "run_code",
        "description": "Run Python code.",
        "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
    },
}


def client(server: ScriptedModelServer, **kwargs: Any) -> ModelClient:
    kwargs.setdefault("deadline", 20.0)
    return ModelClient("m", base_url=server.base_url, **kwargs)


def raw_completion(message: dict[str, Any], usage: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A hand-made chat.completion body, served verbatim by the scripted server's `bad_body` fault."""
    body = {
        "id": "chatcmpl-raw",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": usage,
    }
    return fault("bad_body", body=json.dumps(body))


# ----------------------------------------------------------------------------- replies


def test_plain_reply_content_and_request(scripted) -> None:
    server = scripted([reply("The file says hello.")])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert r.content == "The file says hello."
    assert r.tool_calls == []
    assert r.finish_reason == "stop"
    assert r.attempts == 1
    assert r.recovered is None
    assert r.usage.requests == 1 and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    sent = server.requests[0]
    assert sent["model"] == "m"
    assert sent["messages"] == USER
    assert "tools" not in sent  # no tools, no empty list


def test_null_content_with_tool_calls(scripted) -> None:
    server = scripted([calls(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"}))])
    model = client(server)
    r = model.chat(USER, [READ_FILE])
    model.close()
    assert r.content is None
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [
        ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "b.txt"}),
    ]
    assert all(c.id for c in r.tool_calls) and len({c.id for c in r.tool_calls}) == 2
    assert r.finish_reason == "tool_calls"
    assert server.requests[0]["tools"] == [READ_FILE]
    msg = r.message()
    assert msg["role"] == "assistant" and msg["content"] is None
    assert [c["function"]["name"] for c in msg["tool_calls"]] == ["read_file", "read_file"]


def test_reasoning_content_is_kept_and_sent_back_on_tool_call_turns(scripted) -> None:
    """DeepSeek / Kimi reject a follow-up unless reasoning_content of a tool-call turn is sent back."""
    server = scripted(
        [
            {
                "content": None,
                "reasoning_content": "I should read the file first.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
            },
            reply("hello", reasoning="The file says hello."),
        ]
    )
    model = client(server)
    first = model.chat(USER, [READ_FILE])
    assert first.reasoning == "I should read the file first."
    assert first.usage.reasoning_tokens > 0
    messages = [*USER, first.message()]
    messages.append({"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "hello"})
    second = model.chat(messages, [READ_FILE])
    model.close()
    assistant = server.requests[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["reasoning_content"] == "I should read the file first."
    assert assistant["tool_calls"][0]["function"]["name"] == "read_file"
    assert second.reasoning == "The file says hello."
    # A final answer's reasoning is not replayed (nothing needs it, and it costs tokens).
    assert "reasoning_content" not in second.message()


def test_reasoning_not_sent_back_for_turns_without_tool_calls() -> None:
    r = Reply(content="hi", reasoning="thinking")
    assert r.message() == {"role": "assistant", "content": "hi"}
    r = Reply(content=None, tool_calls=[ToolCall("c1", "f", "{}")], reasoning="thinking")
    assert r.message()["reasoning_content"] == "thinking"


# ----------------------------------------------------------------------------- usage


def test_usage_from_api_deepseek_shape() -> None:
    u = Usage.from_api(
        {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "prompt_cache_hit_tokens": 64,
            "prompt_cache_miss_tokens": 36,
            "completion_tokens_details": {"reasoning_tokens": 7},
        }
    )
    assert (u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.reasoning_tokens, u.requests) == (
        100,
        20,
        64,
        7,
        1,
    )


def test_usage_from_api_openai_shape_and_missing_usage() -> None:
    u = Usage.from_api(
        {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 32}}
    )
    assert (u.prompt_tokens, u.cached_tokens, u.reasoning_tokens) == (50, 32, 0)
    # llama.cpp and friends may send null details, or no usage at all: the request still counts.
    u = Usage.from_api({"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": None})
    assert u.cached_tokens == 0
    assert Usage.from_api(None) == Usage(requests=1)


@pytest.mark.parametrize(
    "usage, cached",
    [
        ({"prompt_tokens": 90, "completion_tokens": 9, "prompt_cache_hit_tokens": 80,
          "prompt_cache_miss_tokens": 10, "prompt_tokens_details": {"cached_tokens": 80}}, 80),
        ({"prompt_tokens": 90, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 48},
          "completion_tokens_details": {"reasoning_tokens": 3}}, 48),
    ],
    ids=["deepseek", "openai"],
)
def test_usage_normalised_from_a_real_http_reply(scripted, usage: dict, cached: int) -> None:
    server = scripted([raw_completion({"content": "ok"}, usage)])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert r.content == "ok"
    assert r.usage.prompt_tokens == 90 and r.usage.completion_tokens == 9
    assert r.usage.cached_tokens == cached
    assert r.usage.reasoning_tokens == usage.get("completion_tokens_details", {}).get("reasoning_tokens", 0)


@pytest.mark.parametrize("style", ["deepseek", "openai"])
def test_cached_tokens_from_scripted_prefix_cache(scripted, style: str) -> None:
    """Second request extends the first: the server's simulated cache reports the shared prefix as cached."""
    server = scripted([reply("one"), reply("two")], usage_style=style)
    model = client(server)
    first = model.chat(USER, [READ_FILE])
    second = model.chat([*USER, first.message(), {"role": "user", "content": "and b.txt?"}], [READ_FILE])
    model.close()
    assert first.usage.cached_tokens == 0
    assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens
    assert second.usage.cached_tokens >= first.usage.prompt_tokens - 2  # the whole first prompt, about


def test_openrouter_reported_cost_is_read(scripted) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "cost": 0.00123}
    server = scripted([raw_completion({"content": "ok"}, usage)])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert r.reported_cost == pytest.approx(0.00123)


# ----------------------------------------------------------------------------- streaming


def _script_with_everything() -> list[dict]:
    return [
        {
            "content": "Let me look.",
            "reasoning_content": "Two files to read.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "read_file", "arguments": {"path": "日本.txt"}},
            ],
        },
        reply("All done: 3 lines."),
    ]


def test_streaming_gives_the_same_reply(scripted) -> None:
    results = {}
    for stream in (False, True):
        server = scripted(_script_with_everything())
        model = client(server, stream=stream)
        results[stream] = [model.chat(USER, [READ_FILE]), model.chat(USER, [READ_FILE])]
        model.close()
        assert server.requests[0].get("stream", False) is stream
    plain, streamed = results[False], results[True]
    for a, b in zip(plain, streamed, strict=True):
        assert (a.content, a.reasoning, a.finish_reason) == (b.content, b.reasoning, b.finish_reason)
        assert [(c.id, c.name, c.arguments) for c in a.tool_calls] == [
            (c.id, c.name, c.arguments) for c in b.tool_calls
        ]
        assert a.usage == b.usage
    assert streamed[0].tool_calls[1].arguments == json.dumps({"path": "日本.txt"}, ensure_ascii=False)
    assert streamed[0].usage.prompt_tokens > 0  # include_usage was asked for


# ----------------------------------------------------------------------------- retries


def test_429_with_retry_after_then_success(scripted) -> None:
    retries = []
    server = scripted([fault("429", retry_after=0.3), reply("after the wait")])
    model = client(server, on_retry=lambda attempt, wait, reason: retries.append((attempt, wait, reason)))
    started = time.monotonic()
    r = model.chat(USER)
    elapsed = time.monotonic() - started
    model.close()
    assert r.content == "after the wait"
    assert r.attempts == 2
    assert len(server.requests) == 2
    assert elapsed >= 0.27  # Retry-After honoured (generous lower bound only)
    assert retries == [(1, pytest.approx(0.3), retries[0][2])]
    assert "429" in retries[0][2]


def test_500_then_success(scripted) -> None:
    server = scripted([fault("500", message="boom"), reply("ok")])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts, len(server.requests)) == ("ok", 2, 2)


def test_slow_reply_within_timeout_is_waited_for(scripted) -> None:
    server = scripted([fault("slow", delay=0.3, then=reply("slow but fine"))])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts) == ("slow but fine", 1)
    assert server.delay_seconds >= 0.25


def test_slow_reply_beyond_request_timeout_is_retried(scripted) -> None:
    server = scripted([fault("slow", delay=5, then=reply("too late")), reply("second try")])
    model = client(server, request_timeout=0.3)
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts) == ("second try", 2)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_cut_reply_then_success_on_retry(scripted, stream: bool) -> None:
    server = scripted([fault("cut_stream", then=reply("this one is cut " * 5)), reply("whole reply")])
    model = client(server, stream=stream)
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts, len(server.requests)) == ("whole reply", 2, 2)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_bad_body_then_success(scripted, stream: bool) -> None:
    server = scripted([fault("bad_body"), reply("fine now")])
    model = client(server, stream=stream)
    r = model.chat(USER)
    model.close()
    assert (r.content, r.attempts) == ("fine now", 2)


@pytest.mark.parametrize(
    "status, hint",
    [(400, ""), (401, "check the API key"), (402, "top up"), (422, "")],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_client_errors_are_one_line_and_not_retried(scripted, status: int, hint: str, stream: bool) -> None:
    message = f"Scripted refusal number {status}: the request was not accepted"
    server = scripted([fault("status", status=status, message=message), reply("never sent")])
    model = client(server, stream=stream)
    with pytest.raises(ModelError) as info:
        model.chat(USER)
    model.close()
    text = str(info.value)
    assert message in text
    assert str(status) in text
    assert hint in text
    assert "\n" not in text
    assert len(server.requests) == 1
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained traceback


def test_deadline_exhausted_gives_up_with_the_reason(scripted) -> None:
    server = scripted([fault("429", retry_after=5, message="slow down please"), reply("never")])
    model = client(server, deadline=1.0)
    with pytest.raises(ModelError) as info:
        model.chat(USER)
    model.close()
    text = str(info.value)
    assert "gave up" in text
    assert "slow down please" in text
    assert "\n" not in text
    assert len(server.requests) == 1


def test_deadline_with_repeated_500s_stops_retrying(scripted) -> None:
    server = scripted([fault("500")] * 10)
    model = client(server, deadline=1.2)
    with pytest.raises(ModelError, match=r"gave up after \d+ attempt"):
        model.chat(USER)
    model.close()
    assert 2 <= len(server.requests) < 10


# ----------------------------------------------------------------------------- API keys


def test_missing_api_key_names_the_env_var(monkeypatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(MissingApiKey) as info:
        ModelClient()  # the default: DeepSeek
    text = str(info.value)
    assert "DEEPSEEK_API_KEY" in text
    assert "export DEEPSEEK_API_KEY=" in text
    assert "\n" not in text
    assert isinstance(info.value, ModelError)


def test_missing_custom_api_key_env(monkeypatch, scripted) -> None:
    monkeypatch.delenv("TOOLMODE_TEST_KEY", raising=False)
    server = scripted([reply("x")])
    with pytest.raises(MissingApiKey, match="TOOLMODE_TEST_KEY"):
        ModelClient("m", base_url=server.base_url, api_key_env="TOOLMODE_TEST_KEY")


def test_api_key_from_env_is_used(monkeypatch, scripted) -> None:
    monkeypatch.setenv("TOOLMODE_TEST_KEY", "sk-test-123")
    server = scripted([reply("x")])
    model = ModelClient("m", base_url=server.base_url, api_key_env="TOOLMODE_TEST_KEY")
    assert model.chat(USER).content == "x"
    model.close()


def test_local_base_url_needs_no_key(monkeypatch, scripted) -> None:
    for name in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server = scripted([reply("x")])
    model = ModelClient("m", base_url=server.base_url)
    assert model.chat(USER).content == "x"
    model.close()


# ----------------------------------------------------------------------------- text-call recovery


JSON_CALL = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```\n'


def test_json_block_naming_a_known_tool_is_recovered(scripted) -> None:
    server = scripted([reply(JSON_CALL)])
    model = client(server)
    r = model.chat(USER, [READ_FILE])
    model.close()
    assert r.recovered == "json"
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert r.finish_reason == "stop"  # the server said stop; the call was recovered anyway


def test_json_recovery_can_be_switched_off(scripted) -> None:
    server = scripted([reply(JSON_CALL)])
    model = client(server, recover_text_calls=False)
    r = model.chat(USER, [READ_FILE])
    model.close()
    assert r.tool_calls == [] and r.recovered is None
    assert r.content == JSON_CALL


def test_json_block_naming_an_unknown_tool_is_not_recovered(scripted) -> None:
    content = '```json\n{"name": "delete_everything", "arguments": {}}\n```'
    server = scripted([reply(content)])
    model = client(server)
    r = model.chat(USER, [READ_FILE])
    model.close()
    assert r.tool_calls == [] and r.recovered is None and r.content == content


def test_json_block_without_tools_offered_is_not_recovered(scripted) -> None:
    server = scripted([reply(JSON_CALL)])
    model = client(server)
    r = model.chat(USER)
    model.close()
    assert r.tool_calls == []


CODE_REPLY = "Here is the code:\n```python\nprint(open('a.txt').read())\n```"


def test_python_block_becomes_run_code_only_when_enabled_and_offered(scripted) -> None:
    server = scripted([reply(CODE_REPLY), reply(CODE_REPLY), reply(CODE_REPLY)])
    on = client(server, recover_code_blocks=True)
    r = on.chat(USER, [RUN_CODE])
    assert r.recovered == "code"
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [
        ("run_code", {"code": "print(open('a.txt').read())\n"})
    ]
    r = on.chat(USER, [READ_FILE])  # run_code not offered
    assert r.tool_calls == [] and r.recovered is None
    on.close()
    off = client(server)  # a non-local endpoint: off by default
    assert off.recover_code_blocks is False
    r = off.chat(USER, [RUN_CODE])
    off.close()
    assert r.tool_calls == [] and r.recovered is None


def test_native_tool_calls_are_never_marked_recovered(scripted) -> None:
    server = scripted([call("read_file", path="a.txt")])
    model = client(server)
    r = model.chat(USER, [READ_FILE])
    model.close()
    assert r.recovered is None and r.tool_calls[0].name == "read_file"
