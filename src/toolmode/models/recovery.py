"""A reply post-processor: reads tool calls a model wrote as text, knowing the tools it was sent.

It runs after the HTTP client has built a `Reply` and before the loop sees it:
- no native calls: calls written as text become calls (each marked `recovered`); text that looks like a
  call but cannot be read sets `reply.problem`, so it is never taken as the final answer;
- native calls: arguments written as Python-style JSON are repaired, and a call to a function that
  exists only inside `run_code` (sent only run_code, the model called `current_time`) becomes a program.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolmode.bounded import loads_json
from toolmode.models.lenient_json import LenientError, loads_lenient
from toolmode.models.reply import Reply, ToolCall
from toolmode.models.text_calls import RUN_CODE, Tools, find_text_calls, recover_code_call


class TextCallRecovery:
    """`recover(reply, tools)` in place. `text_calls`: read calls written as text (JSON, Python call
    syntax, tags); `code_blocks`: one fenced Python program becomes a `run_code` call."""

    def __init__(self, *, text_calls: bool = True, code_blocks: bool = False) -> None:
        self.text_calls = text_calls
        self.code_blocks = code_blocks
        self._known: tuple[Sequence[dict[str, Any]], Tools] | None = None  # the last tool list read, by identity

    def _tools(self, tools: Sequence[dict[str, Any]], code_tool: str | None) -> Tools:
        """`Tools.from_schemas(tools, code_tool)`, kept while the same list object comes again (modes reuse theirs)."""
        known = self._known
        if known is None or known[0] is not tools or known[1].code_tool != code_tool:
            known = self._known = (tools, Tools.from_schemas(tools, code_tool))
        return known[1]

    def recover(self, reply: Reply, tools: Sequence[dict[str, Any]], code_tool: str | None = RUN_CODE) -> Reply:
        """Fill `reply.tool_calls` / `reply.recovered` / `reply.problem` from what the model wrote; `code_tool`
        is the tool that takes a whole program (the mode's; None: no program is read from the text)."""
        if not tools or not (self.text_calls or self.code_blocks):
            return reply
        known = self._tools(tools, code_tool)
        if reply.tool_calls:
            if self.text_calls:
                sent = reply.tool_calls
                reply.tool_calls = [_repair(c, known) for c in sent]
                if any(a is not b for a, b in zip(sent, reply.tool_calls, strict=True)):
                    reply.wire_calls = sent  # kept for the trace: what the server really sent
                marks = {c.recovered for c in reply.tool_calls} - {None}
                reply.recovered = next(iter(sorted(m for m in marks if m is not None)), None)
            return reply
        if not reply.content:
            return reply
        if not self.text_calls:  # only fenced programs are read, so nothing else is judged either
            calls = recover_code_call(reply.content, code_tool) if code_tool and code_tool in known.params else []
            if calls:
                reply.tool_calls, reply.recovered = calls, "code"
            return reply
        found = find_text_calls(reply.content, known, code_blocks=self.code_blocks)
        if found.calls:
            reply.tool_calls, reply.recovered = found.calls, found.kind
        elif found.problem:
            reply.problem = found.problem
        return reply


def _repair(call: ToolCall, known: Tools) -> ToolCall:
    """A native call with Python-style arguments, or to a function that lives inside run_code."""
    arguments = call.arguments
    mark = None
    try:
        call.decoded()
    except ValueError:
        try:
            value = loads_lenient(arguments)
        except LenientError:
            return call  # left for the loop, which tells the model what was wrong
        if not isinstance(value, dict):
            return call
        arguments, mark = json.dumps(value, ensure_ascii=False), "arguments"
    if call.name not in known.params and call.name in known.code_functions:
        try:
            value = loads_json(arguments or "{}")
        except ValueError:
            return call
        if isinstance(value, dict):
            text = json.dumps({"name": call.name, "arguments": value}, ensure_ascii=False)
            converted = find_text_calls(text, known).calls
            if len(converted) == 1:
                converted[0].id = call.id
                return converted[0]
    if mark is None:
        return call
    return ToolCall(call.id, call.name, arguments, mark)
