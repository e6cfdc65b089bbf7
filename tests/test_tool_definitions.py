"""A function that cannot be offered as a tool is refused when the tool is made, in one line that names the
tool and the parameter and says what to change; what works today (name=, hidden _params) keeps working."""

from __future__ import annotations

import functools
import socket
from enum import Enum
from typing import Literal

import pytest

from toolmode import Agent, Tool, tool
from toolmode.tools import ToolDefinitionError
from toolmode.tools.base import prefix_colliding_mcp_tools


def refusal(fn, **kwargs) -> str:
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_function(fn, **kwargs)
    text = str(info.value)
    assert "\n" not in text
    return text


def uses_an_unknown_type(path: Nowhere) -> str:  # noqa: F821 - the point of the test
    """Read a file."""
    return str(path)


def returns_an_unknown_type(path: str) -> Nowhere:  # noqa: F821
    """Read a file."""
    return path


def takes_a_socket(host: str, conn: socket.socket) -> str:
    """Send something."""
    return host


def takes_args(first: str, *rest: str) -> str:
    """Join words."""
    return first


def takes_kwargs(first: str, **options: str) -> str:
    """Configure."""
    return first


class Color(Enum):
    RED = "red"


def paint(color: Color) -> str:
    """Paint."""
    return color.value


def good(path: str, mode: Literal["r", "w"] = "r", _cache: dict | None = None) -> str:
    """A tool as it should be."""
    return path


def test_an_unresolvable_hint_names_the_tool_and_the_parameter() -> None:
    text = refusal(uses_an_unknown_type)
    assert text.startswith("tool uses_an_unknown_type: the type of parameter 'path', 'Nowhere', cannot be resolved")
    assert "NameError" in text and "module level" in text
    assert "return type, 'Nowhere'" in refusal(returns_an_unknown_type)


def test_a_type_that_is_not_json_names_the_tool_and_the_parameter() -> None:
    text = refusal(takes_a_socket)
    assert text.startswith("tool takes_a_socket: the type of parameter 'conn', socket.socket, cannot be sent")
    assert "hide it as _conn=default" in text and "arbitrary_types_allowed" not in text


@pytest.mark.parametrize("fn, part", [(takes_args, "parameter *rest"), (takes_kwargs, "parameter **options")])
def test_star_parameters_are_refused_not_dropped(fn, part: str) -> None:
    text = refusal(fn)
    assert text.startswith(f"tool {fn.__name__}: {part} cannot be filled by a model")


def test_a_lambda_or_a_partial_needs_a_name() -> None:
    assert refusal(lambda text: text).startswith("a lambda has no name to show the model as a tool")
    assert "partial object" in refusal(functools.partial(good, "a.txt"))
    echo = Tool.from_function(lambda text: text, name="echo", description="Echo.")
    assert echo.name == "echo" and echo(text="hi") == "hi"


@pytest.mark.parametrize("name", ["read file", "read.file", "", "x" * 65, "读文件"])
def test_names_the_api_refuses_are_refused(name: str) -> None:
    assert refusal(good, name=name) == (f"tool name {name!r} is refused by OpenAI-compatible APIs: use 1 to 64 "
                                        "letters, digits, '_' or '-' (name=\"...\" sets another)")


def test_what_works_keeps_working() -> None:
    t = tool(name="read-file_2")(good)
    assert t.name == "read-file_2" and list(t.parameters["properties"]) == ["path", "mode"]  # _cache hidden
    assert t(path="a") == "a"
    assert Tool.from_function(good, name="x" * 64).name == "x" * 64
    assert Tool.from_function(paint)(color="red") == "red"  # a type pydantic describes


def test_mcp_style_names_made_directly_are_kept() -> None:
    """MCP tools are made as Tool objects from the server's list (names are the server's), not from functions."""
    a = Tool("now", "Time.", {"type": "object", "properties": {}}, fn=lambda: "t", source="mcp:time")
    b = Tool("now", "Clock.", {"type": "object", "properties": {}}, fn=lambda: "c", source="mcp:clock")
    assert [t.name for t in prefix_colliding_mcp_tools([a, b])] == ["time__now", "clock__now"]


def test_an_agent_refuses_a_bad_tool_before_anything_starts(tmp_path) -> None:
    with pytest.raises(ToolDefinitionError, match="tool takes_args: parameter \\*rest"):
        Agent(tools=[takes_args], base_url="http://127.0.0.1:9/v1", model="m", workspace=tmp_path)


def test_the_refusal_is_a_toolmode_error_and_still_a_type_error() -> None:
    import toolmode

    for catch in (toolmode.ToolmodeError, TypeError):
        with pytest.raises(catch, match="a lambda has no name"):
            Tool.from_function(lambda text: text)
