"""What one model request returns, in a provider-neutral shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from toolmode.bounded import loads_json
from toolmode.usage import Usage


@dataclass
class ToolCall:
    """One tool call as the model wrote it; `arguments` is the raw JSON text (it may be invalid).

    `recovered` says how a call written as text was read ("json", "python", "code", "arguments" for
    native arguments repaired, "...->code" for a function that exists only inside run_code); None if native.
    """

    id: str
    name: str
    arguments: str
    recovered: str | None = None
    _parsed: tuple[str, Any, ValueError | None] | None = field(default=None, init=False, repr=False, compare=False)

    def decoded(self) -> Any:
        """The arguments as JSON, parsed once and within bounds of size and nesting (empty text: `{}`);
        raises json.JSONDecodeError when they are not JSON. The one place a call's arguments are parsed."""
        text = self.arguments
        parsed = self._parsed
        if parsed is None or parsed[0] is not text:
            try:
                parsed = (text, loads_json(text) if text.strip() else {}, None)
            except json.JSONDecodeError as exc:
                parsed = (text, None, exc)
            self._parsed = parsed
        if parsed[2] is not None:
            raise parsed[2]
        return parsed[1]

    def to_event(self) -> dict[str, Any]:
        """The call as the trace's `reply` event lists it."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "recovered": self.recovered}

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire form, for the assistant message replayed in later requests.

        Arguments that are not a JSON object are replayed re-serialised (`{"_unparsed": "<text>"}`):
        servers that render the conversation through a chat template (llama.cpp) parse them and answer
        HTTP 500 to every later request otherwise.
        """
        arguments = self.arguments if self.arguments.strip() else "{}"
        try:
            ok = isinstance(self.decoded(), dict)
        except ValueError:
            ok = False
        if not ok:
            arguments = json.dumps({"_unparsed": arguments}, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": arguments}}


@dataclass
class Reply:
    """The assistant's reply: text and/or tool calls, usage, and how the calls were obtained.

    `recovered` is None for native tool calls, "json" when a call written as a JSON block in the text was
    recovered, "python" for Python call syntax, "code" when a fenced Python block was turned into a
    `run_code` call (each call also carries its own mark). `problem` is set when the text looks like a tool
    call that could not be read: such a reply is not an answer (the loop asks the model again).
    """

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    recovered: str | None = None
    model_seconds: float = 0.0
    reported_cost: float | None = None
    attempts: int = 1
    model: str | None = None  # which model answered, when it is not the one asked (FallbackModel)
    problem: str | None = None
    wire_calls: list[ToolCall] | None = None  # the native calls as the server sent them, when recovery changed them

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation.

        Thinking models (DeepSeek, Kimi) reject a follow-up request unless the `reasoning_content` of an
        assistant turn that made tool calls is sent back, so it is kept on such turns.

        Calls read from the text are replayed as native calls only (the text that held them is dropped):
        the server's chat template renders them in the model's own call format, so the history teaches
        that format instead of showing each call twice (a small model copies its earlier replies).
        """
        written = any(c.recovered not in (None, "arguments") for c in self.tool_calls)
        msg: dict[str, Any] = {"role": "assistant", "content": None if written else self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
            if self.reasoning:
                msg["reasoning_content"] = self.reasoning
        return msg
