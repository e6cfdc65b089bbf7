"""OpenAI wire shapes: chat completions, streaming chunks and error bodies, as plain dicts."""

from __future__ import annotations

import math
from typing import Any

from toolmode.testing.script import ReplySpec

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    402: ("insufficient_quota", "insufficient_balance"),
    403: ("permission_error", None),
    404: ("not_found_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def error_body(status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error object; type and code default to what the status usually carries."""
    default_type, default_code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "api_error", None)
    )
    return {
        "error": {
            "message": message,
            "type": type or default_type,
            "param": None,
            "code": code if code is not None else default_code,
        }
    }


def split(text: str, parts: int) -> list[str]:
    """`text` cut into at most `parts` non-empty, nearly equal pieces ([] for an empty text)."""
    if not text:
        return []
    size = math.ceil(len(text) / min(parts, len(text)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _tool_calls(reply: ReplySpec) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in reply.tool_calls
    ]


def completion(
    reply: ReplySpec, *, id: str, model: str, created: int, usage: dict[str, Any]
) -> dict[str, Any]:
    """A `chat.completion` object carrying `reply` (tool call ids must already be set)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish}],
        "usage": usage,
    }


def stream_chunks(
    reply: ReplySpec, *, id: str, model: str, created: int, usage: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects streaming `reply`, in order, without the `[DONE]` marker.

    Reasoning deltas come first, then content in a few deltas, then each tool call: id, type and name
    first, its arguments in two or more pieces after. The last choice chunk has the finish reason; a
    final chunk with `choices: []` carries `usage` when it is given (the client asked for it).
    """
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None if reply.content is None else ""}]
    deltas += [{"reasoning_content": piece} for piece in split(reply.reasoning or "", 3)]
    deltas += [{"content": piece} for piece in split(reply.content or "", 4)]
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in split(call.arguments, 3)
        ]

    base: dict[str, Any] = {"id": id, "object": "chat.completion.chunk", "created": created, "model": model}
    base["system_fingerprint"] = "fp_scripted"
    if usage is not None:
        base["usage"] = None  # as OpenAI: every chunk has usage null except the last one

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    chunks = [chunk(d) for d in deltas]
    chunks.append(chunk({}, reply.finish))
    if usage is not None:
        chunks.append({**base, "choices": [], "usage": usage})
    return chunks
