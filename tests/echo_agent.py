"""The echo tool and a react Agent on the scripted server: shared by the conversation and event-stream tests."""

from __future__ import annotations

from typing import Any

from toolmode import Agent, tool


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def make(server: Any, **kwargs: Any) -> Agent:
    """A react Agent on `server` with the echo tool (unless `tools=` says otherwise)."""
    kwargs.setdefault("tools", [echo])
    return Agent(mode="react", model="m", base_url=server.base_url, **kwargs)
