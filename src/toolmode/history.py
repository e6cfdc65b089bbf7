"""Conversation history passed to `run(task, history=...)`: checked, so a wrong shape gets one clear line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ROLES = ("system", "user", "assistant", "tool")


def check_history(history: Any) -> list[dict[str, Any]]:
    """A new list holding the messages of `history` (chat messages, e.g. `result.messages`); ValueError
    naming the first problem otherwise. Tool results must answer a tool call made earlier in the history."""
    if isinstance(history, (str, bytes, dict)) or not isinstance(history, Sequence):
        raise ValueError(f"history must be a list of chat messages (e.g. result.messages), "
                         f"not {type(history).__name__}")
    calls: set[str] = set()
    pending: list[str] = []  # calls of the last assistant message not answered yet
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(history):
        if not isinstance(msg, dict):
            raise ValueError(f"history[{i}] must be a dict with 'role' and 'content', not {type(msg).__name__}")
        role = msg.get("role")
        if role not in ROLES:
            raise ValueError(f"history[{i}] has role {role!r}; expected one of: {', '.join(ROLES)}")
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise ValueError(f"history[{i}] content must be a string, a list of parts or None, "
                             f"not {type(content).__name__}")
        if role == "system" and i != 0:
            raise ValueError(f"history[{i}] is a system message; only the first message may be one")
        if role != "tool" and pending:
            raise ValueError(f"history[{i}]: the tool call(s) {', '.join(pending)} before it have no tool result")
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                    raise ValueError(f"history[{i}] has a tool call without an 'id'")
                calls.add(call["id"])
                pending.append(call["id"])
        if role == "tool" and msg.get("tool_call_id") not in calls:
            raise ValueError(f"history[{i}] is a tool result for {msg.get('tool_call_id')!r}, "
                             "which no earlier assistant message called")
        if role == "tool":
            pending = [c for c in pending if c != msg["tool_call_id"]]
        out.append(msg)  # the same objects: never changed by the loop, and the client reuses their encoding
    if pending:
        raise ValueError(f"history ends with tool call(s) {', '.join(pending)} that have no tool result")
    return out
