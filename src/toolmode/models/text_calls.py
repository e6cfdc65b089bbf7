"""Recover tool calls that a model wrote as text instead of as native tool calls.

Small local models (seen with Qwen2.5-Coder 0.5B/1.5B behind llama.cpp) often answer with a fenced
```json {"name": ..., "arguments": {...}}``` block and `finish_reason: stop`, or with a fenced Python block
when they were offered `run_code`. These helpers turn such text into calls, only for tools that exist.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection
from typing import Any

from toolmode.models.reply import ToolCall

# The language tag counts only when whitespace follows it: "```json {...}```" on one line is valid too.
_FENCE = re.compile(r"```[ \t]*(?:([A-Za-z0-9_+-]+)(?=\s))?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_JSON_LANGS = {"", "json", "tool_call", "tool", "function"}
_PY_LANGS = {"python", "py", "python3"}


def recover_json_calls(content: str | None, tool_names: Collection[str]) -> list[ToolCall]:
    """Calls written as JSON (fenced, in `<tool_call>` tags, or the whole reply) that name a known tool."""
    if not content:
        return []
    candidates = [body for lang, body in _FENCE.findall(content) if lang.lower() in _JSON_LANGS]
    candidates += re.findall(r"<tool_call>(.*?)</tool_call>", content, flags=re.DOTALL)
    if not candidates and content.strip().startswith("{"):
        candidates = [content]
    calls: list[ToolCall] = []
    for body in candidates:
        for obj in _json_objects(body):
            call = _as_call(obj, tool_names, len(calls))
            if call:
                calls.append(call)
    return calls


def recover_code_call(content: str | None, code_tool: str = "run_code") -> list[ToolCall]:
    """A reply holding exactly one fenced Python block becomes one `run_code` call."""
    if not content:
        return []
    blocks = [body for lang, body in _FENCE.findall(content) if lang.lower() in _PY_LANGS]
    if len(blocks) != 1 or not blocks[0].strip():
        return []
    call_id = f"recovered_code_{uuid.uuid4().hex[:12]}"
    return [ToolCall(id=call_id, name=code_tool, arguments=json.dumps({"code": blocks[0]}))]


def _json_objects(text: str) -> list[Any]:
    text = text.strip()
    try:
        value = json.loads(text)
        return value if isinstance(value, list) else [value]
    except json.JSONDecodeError:
        pass
    # One object per line is a common variant for several calls.
    objects = []
    for line in text.splitlines():
        try:
            objects.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return objects


def _as_call(obj: Any, tool_names: Collection[str], index: int) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # {"function": {"name", "arguments"}} (the wire form)
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool")
    if not isinstance(name, str) or name not in tool_names:
        return None
    arguments = obj.get("arguments", obj.get("parameters")) or {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"recovered_{uuid.uuid4().hex[:12]}_{index}", name=name, arguments=text)
