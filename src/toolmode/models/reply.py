"""What one model request returns, in a provider-neutral shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolmode.usage import Usage


@dataclass
class ToolCall:
    """One tool call as the model wrote it; `arguments` is the raw JSON text (it may be invalid)."""

    id: str
    name: str
    arguments: str

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire form, for the assistant message replayed in later requests."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Reply:
    """The assistant's reply: text and/or tool calls, usage, and how the calls were obtained.

    `recovered` is None for native tool calls, "json" when a call written as a JSON block in the text was
    recovered, "code" when a fenced Python block was turned into a `run_code` call.
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

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation.

        Thinking models (DeepSeek, Kimi) reject a follow-up request unless the `reasoning_content` of an
        assistant turn that made tool calls is sent back, so it is kept on such turns.
        """
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
            if self.reasoning:
                msg["reasoning_content"] = self.reasoning
        return msg
