"""Tools with plain JSON hints get their schema written directly and their pydantic validator on first use.

The direct schema must be exactly what pydantic gives (same keys, same order: it is sent to the model, and
prompt caching needs the same bytes), and validation must behave as before.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import typing
from typing import Any, Optional

import pytest

from toolmode.tools import base
from toolmode.tools.base import Tool, ToolArgumentError

PLAIN = [str, int, float, bool, type(None), Any, list, dict, list[str], list[int], list[dict], list[Any],
         list[list[float]], dict[str, int], dict[str, Any], dict[str, list[str]], typing.List[str],  # noqa: UP006
         typing.Dict[str, float], str | None, int | None, Optional[float], list[str] | None,  # noqa: UP006, UP045
         dict | None, int | str, str | int | None, bool | float]
NOT_PLAIN = [tuple[int, int], set[str], dict[int, str], typing.Literal["a", "b"], Any | None, list[Any] | Any,
             typing.Annotated[int, "x"], bytes, frozenset, typing.Sequence[str]]
DEFAULTS = [..., None, 0, 3, -1.5, True, False, "", "UTF-8 文本", 10**30]


def _pydantic_schema(params: list[base._Param]) -> dict[str, Any]:
    schema = base._clean_schema(base._arguments_model("f", params).model_json_schema())
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


@pytest.mark.parametrize("annotation", PLAIN, ids=str)
def test_plain_schema_is_pydantics_byte_for_byte(annotation: Any) -> None:
    for default, description in itertools.product(DEFAULTS, [None, "what it is"]):
        params = [base._Param("x", annotation, default, description), base._Param("y", str, ..., None)]
        direct = base._plain_arguments_schema(params)
        assert direct is not None, (annotation, default)
        assert json.dumps(direct) == json.dumps(_pydantic_schema(params)), (annotation, default, description)


@pytest.mark.parametrize("annotation", PLAIN, ids=str)
def test_plain_return_schema_is_pydantics(annotation: Any) -> None:
    import pydantic

    direct = base._plain_schema(annotation)
    assert json.dumps(direct) == json.dumps(base._clean_schema(pydantic.TypeAdapter(annotation).json_schema()))


@pytest.mark.parametrize("annotation", NOT_PLAIN, ids=str)
def test_other_hints_are_left_to_pydantic(annotation: Any) -> None:
    assert base._plain_arguments_schema([base._Param("x", annotation, ..., None)]) is None


@pytest.mark.parametrize("default", [float("nan"), float("inf"), (1, 2), [1], {"a": 1}, b"x", object()], ids=repr)
def test_defaults_that_are_not_plain_json_are_left_to_pydantic(default: Any) -> None:
    assert base._plain_arguments_schema([base._Param("x", Any, default, None)]) is None


def test_plain_tool_validates_on_first_call_as_before() -> None:
    def read(path: str, start_line: int = 1, max_lines: int | None = None) -> str:
        """Read.

        Args:
            path: the file
        """
        return f"{path}:{start_line}:{max_lines}"

    t = Tool.from_function(read)
    assert t._validator is None and t._pending_params is not None  # not built yet
    assert t(path="a", start_line="2") == "a:2:None"  # pydantic's lax coercion, as before
    assert t._validator is not None
    with pytest.raises(ToolArgumentError, match=r"start_line: Input should be a valid integer.*expected: read\("):
        t(path="a", start_line="two")
    with pytest.raises(ToolArgumentError, match="missing|Field required"):
        t()
    with pytest.raises(ToolArgumentError, match="unknown argument"):
        t(path="a", lines=3)


def test_non_plain_tool_builds_its_validator_up_front() -> None:
    def pick(choice: typing.Literal["a", "b"]) -> str:
        """Pick."""
        return choice

    t = Tool.from_function(pick)
    assert t._validator is not None
    assert t.parameters["properties"]["choice"] == {"enum": ["a", "b"], "type": "string"}
    with pytest.raises(ToolArgumentError):
        t(choice="c")


def test_listing_the_builtin_tools_does_not_import_pydantic(tmp_path: Any) -> None:
    code = ("import sys; from toolmode.tools.builtin import builtin_tools; "
            f"tools = builtin_tools({str(tmp_path)!r}); [t.signature() for t in tools]; "
            "print(len(tools), 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["7", "False"]
