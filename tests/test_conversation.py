"""Conversations: run(task, history=result.messages) and Chat keep earlier turns, tool results and
reasoning; the prompt cache stays warm (cached tokens grow turn over turn); code mode with
persistent=True keeps its namespace across turns; wrong history shapes get one clear line."""

from __future__ import annotations

from typing import Any

import pytest

from echo_agent import make
from toolmode import Agent, Chat
from toolmode.testing import call, reply


def test_history_continues_the_conversation_byte_for_byte(scripted) -> None:
    server = scripted([
        {"content": None, "reasoning_content": "I should echo.",
         "tool_calls": [{"name": "echo", "arguments": {"text": "first"}}]},
        reply("The echo said first."),
        reply("You asked me to echo."),
    ])
    with make(server, system_prompt="Be brief.") as agent:
        one = agent.run("Echo first")
        two = agent.run("What did you do?", history=one.messages)
    sent = server.requests[2]["messages"]
    assert sent[:len(one.messages)] == one.messages  # the earlier turn is the unchanged prefix
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[2]["reasoning_content"] == "I should echo."  # reasoning kept on the tool-call turn
    assert sent[3]["content"] == "first"
    assert sent[-1] == {"role": "user", "content": "What did you do?"}
    assert two.answer == "You asked me to echo."
    assert two.messages[: len(sent)] == sent
    assert one.messages == two.messages[: len(one.messages)]  # the first result was not changed


def test_cached_tokens_grow_turn_over_turn(scripted) -> None:
    server = scripted([reply(f"answer {i} " + "words " * 30) for i in range(5)])
    cached = []
    with make(server) as agent, Chat(agent) as chat:
        for i in range(5):
            result = chat.send(f"question {i}")
            cached.append(result.usage.cached_tokens)
    assert cached[0] == 0
    assert all(b > a for a, b in zip(cached, cached[1:], strict=False)), cached
    # each turn's prompt is cached up to the previous answer: only that answer and the new question are new
    for i in range(1, 5):
        new = chat.results[i].usage.prompt_tokens - cached[i]
        assert new <= chat.results[i - 1].usage.completion_tokens + 15, (i, new)
    assert chat.usage.requests == 5 and chat.usage.cached_tokens == sum(cached)


def test_chat_reset_starts_a_new_conversation_in_the_same_trace(scripted, tmp_path) -> None:
    server = scripted([reply("one"), reply("two"), reply("three")])
    with make(server, runs_dir=tmp_path) as agent, agent.chat() as chat:
        chat.send("a")
        chat.send("b")
        chat.reset()
        chat.send("c")
    assert [m["role"] for m in server.requests[1]["messages"]] == ["user", "assistant", "user"]
    assert server.requests[2]["messages"] == [{"role": "user", "content": "c"}]
    [trace] = list(tmp_path.iterdir())  # one trace for the session
    assert trace.read_text().count('"kind": "run_start"') == 3


def test_a_turn_stopped_by_a_budget_stays_a_valid_conversation(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("next turn works")])
    with make(server) as agent, agent.chat() as chat:
        first = chat.send("go", max_total_tokens=1)
        second = chat.send("again")
    assert first.stopped == "budget"
    assert second.answer == "next turn works"


def test_code_mode_persistent_keeps_its_namespace_across_turns(scripted, workspace) -> None:
    server = scripted([
        call("run_code", code="total = 40 + 2\nprint('stored')"), reply("stored it"),
        call("run_code", code="print(total)"), reply("it is 42"),
    ])
    with Agent([], mode="code", model="m", base_url=server.base_url, workspace=workspace,
               persistent=True) as agent, agent.chat() as chat:
        chat.send("store a number")
        second = chat.send("what was it?")
    assert second.records[0].calls[0].result.strip() == "42"


GOOD_CALL = {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]}


@pytest.mark.parametrize("history, message", [
    ("hello", "history must be a list of chat messages (e.g. result.messages), not str"),
    ({"role": "user"}, "history must be a list of chat messages (e.g. result.messages), not dict"),
    ([("user", "hi")], "history[0] must be a dict with 'role' and 'content', not tuple"),
    ([{"role": "human", "content": "hi"}], "history[0] has role 'human'; expected one of: system, user, assistant, tool"),
    ([{"role": "user", "content": 3}], "history[0] content must be a string, a list of parts or None, not int"),
    ([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}],
     "history[1] is a system message; only the first message may be one"),
    ([{"role": "tool", "tool_call_id": "x", "content": "r"}],
     "history[0] is a tool result for 'x', which no earlier assistant message called"),
    ([{"role": "user", "content": "a"}, GOOD_CALL],
     "history ends with tool call(s) c1 that have no tool result"),
    ([{"role": "user", "content": "a"}, GOOD_CALL, {"role": "user", "content": "b"}],
     "history[2]: the tool call(s) c1 before it have no tool result"),
])
def test_a_wrong_history_shape_gets_one_clear_line(scripted, history: Any, message: str) -> None:
    server = scripted([reply("never")])
    with make(server) as agent, pytest.raises(ValueError) as err:
        agent.run("next", history=history)
    assert str(err.value) == message
    assert server.requests == []


def test_history_continues_under_this_agents_system_prompt(scripted) -> None:
    server = scripted([reply("ok"), reply("ok")])
    history = [{"role": "system", "content": "Old rules."}, {"role": "user", "content": "a"},
               {"role": "assistant", "content": "b"}]
    with make(server, system_prompt="New rules.") as agent:
        agent.run("c", history=history)
    with make(server) as agent:  # no system prompt of its own: the old one is not sent either
        agent.run("c", history=history)
    assert server.requests[0]["messages"][:2] == [{"role": "system", "content": "New rules."}, history[1]]
    assert server.requests[1]["messages"][0] == history[1]
