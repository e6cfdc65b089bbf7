"""RequestEncoder: bodies equal to json.dumps of the whole request, with unchanged parts reused."""

from __future__ import annotations

import json

from toolmode.models.encoding import RequestEncoder


def test_body_is_the_request_as_json() -> None:
    enc = RequestEncoder()
    user = {"role": "user", "content": "你好 \u2028 \"quoted\""}
    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    body = enc.encode({"model": "x", "temperature": 0}, [user], tools)
    assert json.loads(body) == {"model": "x", "temperature": 0, "messages": [user], "tools": tools}
    assert "你好".encode() in body  # UTF-8, not \\u escapes: fewer bytes on the wire


def test_no_tools_key_without_tools_and_an_empty_head() -> None:
    enc = RequestEncoder()
    msg = {"role": "user", "content": "hi"}
    assert json.loads(enc.encode({"model": "x"}, [msg], [])) == {"model": "x", "messages": [msg]}
    assert json.loads(enc.encode({}, [msg], [])) == {"messages": [msg]}


def test_growing_conversation_and_a_replaced_history() -> None:
    enc = RequestEncoder()
    first, second = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
    enc.encode({"model": "x"}, [first], [])
    assert json.loads(enc.encode({"model": "x"}, [first, second], []))["messages"] == [first, second]
    other = {"role": "user", "content": "a new run"}  # a different conversation: nothing stale is reused
    assert json.loads(enc.encode({"model": "x"}, [other], []))["messages"] == [other]


def test_a_new_tool_list_is_encoded_again() -> None:
    enc = RequestEncoder()
    msg = {"role": "user", "content": "hi"}
    one = [{"type": "function", "function": {"name": "a"}}]
    two = [*one, {"type": "function", "function": {"name": "b"}}]
    enc.encode({"model": "x"}, [msg], one)
    names = [t["function"]["name"] for t in json.loads(enc.encode({"model": "x"}, [msg], two))["tools"]]
    assert names == ["a", "b"]
