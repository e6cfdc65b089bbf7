"""Conversation content in the conventions' JSON shapes (gen-ai-input-messages.json, -output-messages.json,
-system-instructions.json), serialised to strings for span attributes. Used only when content capture is on;
credentials are redacted as in the trace files (`toolmode.redact`), since telemetry leaves the host."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from toolmode.bounded import loads_json
from toolmode.otel.attributes import finish_reason
from toolmode.redact import redact


def dumps(value: Any) -> str:
    """JSON text for an attribute (non-ASCII kept readable; anything odd becomes its string form), credentials
    redacted (redaction keeps JSON valid)."""
    return redact(json.dumps(value, ensure_ascii=False, default=str))


def arguments(raw: str) -> Any:
    """Tool arguments as an object when the model sent valid JSON, else the raw text (as the conventions ask)."""
    try:
        return loads_json(raw) if raw.strip() else {}  # bounded: the model wrote it
    except ValueError:
        return raw


def _text_parts(content: Any) -> list[dict[str, Any]]:
    """Parts of an OpenAI `content`: a string, or a list of typed parts (text kept, others named by type)."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append({"type": "text", "content": item.get("text", "")})
        else:
            parts.append({"type": str(item.get("type", "unknown")) if isinstance(item, dict) else "unknown"})
    return parts


def _call_parts(calls: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tool_call` parts from OpenAI tool calls (wire form or toolmode's flat form)."""
    parts = []
    for c in calls:
        fn = c.get("function", c)
        parts.append({"type": "tool_call", "id": c.get("id"), "name": fn.get("name"),
                      "arguments": arguments(fn.get("arguments") or "")})
    return parts


def message(msg: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI chat message as a conventions ChatMessage."""
    role = msg.get("role", "user")
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": msg.get("tool_call_id"),
                                           "response": msg.get("content")}]}
    parts = []
    if msg.get("reasoning_content"):
        parts.append({"type": "reasoning", "content": msg["reasoning_content"]})
    parts += _text_parts(msg.get("content"))
    parts += _call_parts(msg.get("tool_calls") or [])
    return {"role": role, "parts": parts}


def input_messages(messages: Iterable[dict[str, Any]], cache: dict[int, tuple[Any, str]] | None = None) -> str:
    """`gen_ai.input.messages`: the conversation as sent, in order.

    Every request resends the whole conversation, so with a `cache` (one per run) each message is converted
    and redacted once: the cache keeps the message itself beside its text, so its id cannot be reused."""
    parts = []
    for m in messages:
        hit = cache.get(id(m)) if cache is not None else None
        if hit is None or hit[0] is not m:
            hit = (m, dumps(message(m)))
            if cache is not None:
                cache[id(m)] = hit
        parts.append(hit[1])
    return "[" + ", ".join(parts) + "]"


def output_message(content: str | None, reasoning: str | None, calls: list[dict[str, Any]],
                   reason: str | None) -> str:
    """`gen_ai.output.messages`: the one reply (choice) of a request."""
    parts: list[dict[str, Any]] = [{"type": "reasoning", "content": reasoning}] if reasoning else []
    parts += _text_parts(content) + _call_parts(calls)
    return dumps([{"role": "assistant", "parts": parts, "finish_reason": finish_reason(reason, bool(calls))}])


def system_instructions(messages: list[dict[str, Any]]) -> str | None:
    """`gen_ai.system_instructions` from the leading system message, if there is one."""
    if messages and messages[0].get("role") == "system":
        return dumps(_text_parts(messages[0].get("content")))
    return None


def tool_definitions(names: Iterable[str]) -> str:
    """`gen_ai.tool.definitions` with the required properties only (type and name), as the conventions
    recommend by default: the full schemas are in the JSONL trace."""
    return dumps([{"type": "function", "name": n} for n in names])
