"""Tool.from_function: JSON schema from type hints, docs from docstrings, signature(), validate(), calls."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import warnings
from typing import Literal, Optional, TypedDict

import pydantic
import pytest

from toolmode import Tool, tool
from toolmode.tools.base import ToolArgumentError, result_text


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    width: float
    height: float = 1.0


class User(pydantic.BaseModel):
    name: str
    age: int = 0


def _props(t: Tool) -> dict:
    return t.parameters["properties"]


def _resolve(t: Tool, schema: dict) -> dict:
    """Follow a `$ref` into the tool's `$defs`."""
    if "$ref" in schema:
        return t.parameters["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _non_null(schema: dict) -> dict:
    """The non-null branch of an `anyOf: [X, null]` schema."""
    options = [s for s in schema["anyOf"] if s != {"type": "null"}]
    assert len(options) == 1, schema
    assert {"type": "null"} in schema["anyOf"]
    return options[0]


# ----------------------------------------------------------------------------- schema from type hints


def test_scalar_types_map_to_json_schema_types() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None:
        """Scalars."""

    t = Tool.from_function(f)
    assert t.parameters["type"] == "object"
    assert {k: v["type"] for k, v in _props(t).items()} == {
        "s": "string",
        "i": "integer",
        "x": "number",
        "b": "boolean",
    }
    assert sorted(t.parameters["required"]) == ["b", "i", "s", "x"]


def test_list_and_dict_types_carry_their_item_types() -> None:
    def f(names: list[str], counts: dict[str, int], matrix: list[list[float]]) -> None:
        """Containers."""

    p = _props(Tool.from_function(f))
    assert p["names"] == {"type": "array", "items": {"type": "string"}}
    assert p["counts"]["type"] == "object"
    assert p["counts"]["additionalProperties"] == {"type": "integer"}
    assert p["matrix"]["items"] == {"type": "array", "items": {"type": "number"}}


def test_optional_and_pipe_none_are_nullable() -> None:
    def f(a: Optional[int], b: str | None = None) -> None:  # noqa: UP045 - Optional on purpose
        """Nullables."""

    t = Tool.from_function(f)
    assert _non_null(_props(t)["a"]) == {"type": "integer"}
    assert _non_null(_props(t)["b"]) == {"type": "string"}
    # Optional without a default is still required (it may be null, but must be given).
    assert t.parameters["required"] == ["a"]


def test_literal_becomes_enum() -> None:
    def f(unit: Literal["c", "f"]) -> None:
        """Literal."""

    p = _props(Tool.from_function(f))["unit"]
    assert p["enum"] == ["c", "f"]
    assert p["type"] == "string"


def test_enum_becomes_enum_of_values_and_calls_get_the_member() -> None:
    seen = []

    @tool
    def paint(color: Color) -> str:
        """Paint."""
        seen.append(color)
        return color.value

    assert _resolve(paint, _props(paint)["color"])["enum"] == ["red", "blue"]
    assert paint(color="blue") == "blue"
    assert seen == [Color.BLUE]


def test_typeddict_dataclass_and_pydantic_model_params_are_object_schemas() -> None:
    got = {}

    @tool
    def place(point: Point, box: Box, user: User) -> str:
        """Place things."""
        got.update(point=point, box=box, user=user)
        return "ok"

    p = _props(place)
    point = _resolve(place, p["point"])
    assert point["type"] == "object"
    assert point["properties"] == {"x": {"type": "integer"}, "y": {"type": "integer"}}
    assert sorted(point["required"]) == ["x", "y"]
    box = _resolve(place, p["box"])
    assert box["properties"]["width"] == {"type": "number"}
    assert box["required"] == ["width"]  # height has a default
    user = _resolve(place, p["user"])
    assert user["required"] == ["name"]
    assert user["properties"]["age"]["type"] == "integer"

    assert place(point={"x": 1, "y": 2}, box={"width": 2.5}, user={"name": "ann"}) == "ok"
    # The function gets the real types, not dicts.
    assert got["point"] == {"x": 1, "y": 2}
    assert got["box"] == Box(width=2.5, height=1.0)
    assert isinstance(got["user"], User) and got["user"].name == "ann"


def test_defaults_make_params_optional_and_are_in_the_schema() -> None:
    def f(url: str, timeout: float = 10.0, retries: int = 2, verbose: bool = False) -> dict:
        """Fetch."""
        return {}

    t = Tool.from_function(f)
    assert t.parameters["required"] == ["url"]
    assert _props(t)["timeout"]["default"] == 10.0
    assert _props(t)["verbose"]["default"] is False


def test_no_params_gives_empty_object_schema() -> None:
    def now() -> str:
        """The time."""
        return "noon"

    t = Tool.from_function(now)
    assert t.parameters["type"] == "object"
    assert t.parameters["properties"] == {}
    assert not t.parameters.get("required")
    assert t() == "noon"


def test_schema_has_no_pydantic_titles() -> None:
    def f(path: str, box: Box) -> None:
        """X."""

    t = Tool.from_function(f)
    text = repr(t.parameters)
    assert "'title'" not in text


def test_schema_is_an_openai_function_definition() -> None:
    @tool
    def read_file(path: str) -> str:
        """Read a UTF-8 text file and return its content."""
        return ""

    s = read_file.schema()
    assert s["type"] == "function"
    assert s["function"]["name"] == "read_file"
    assert s["function"]["description"] == "Read a UTF-8 text file and return its content."
    assert s["function"]["parameters"]["properties"]["path"]["type"] == "string"


# ----------------------------------------------------------------------------- docstrings


def test_google_docstring_gives_description_and_param_docs() -> None:
    def f(path: str, limit: int = 5) -> str:
        """Read a file.

        Longer explanation of what happens.

        Args:
            path: Path inside the workspace.
            limit: At most this many lines.

        Returns:
            The text of the file.
        """
        return ""

    t = Tool.from_function(f)
    assert t.summary() == "Read a file."
    assert "Longer explanation" in t.description
    assert "The text of the file." in t.description
    assert _props(t)["path"]["description"] == "Path inside the workspace."
    assert _props(t)["limit"]["description"] == "At most this many lines."
    assert "Args:" not in t.description


def test_numpy_docstring_gives_param_docs() -> None:
    def f(path: str, limit: int = 5) -> str:
        """Read a file.

        Parameters
        ----------
        path : str
            Path inside the workspace.
        limit : int
            At most this many lines.
        """
        return ""

    t = Tool.from_function(f)
    assert t.summary() == "Read a file."
    assert _props(t)["path"]["description"] == "Path inside the workspace."
    assert _props(t)["limit"]["description"] == "At most this many lines."
    assert "----------" not in t.description


def test_rest_docstring_gives_param_docs() -> None:
    def f(path: str, limit: int = 5) -> str:
        """Read a file.

        :param path: Path inside the workspace.
        :param limit: At most this many lines.
        :returns: The text.
        """
        return ""

    t = Tool.from_function(f)
    assert t.summary() == "Read a file."
    assert _props(t)["path"]["description"] == "Path inside the workspace."
    assert _props(t)["limit"]["description"] == "At most this many lines."
    assert ":param" not in t.description


def test_undocumented_param_has_no_description_key() -> None:
    def f(a: int, b: int) -> int:
        """Add.

        Args:
            a: First.
        """
        return a + b

    p = _props(Tool.from_function(f))
    assert p["a"]["description"] == "First."
    assert "description" not in p["b"]


# ----------------------------------------------------------------------------- signature


def test_signature_renders_params_and_return_type() -> None:
    def fetch_url(url: str) -> dict:
        """Fetch a web page; return a dict with status, final URL, content type, title and text."""
        return {}

    t = Tool.from_function(fetch_url)
    assert t.signature() == "fetch_url(url: str) -> dict"
    assert t.summary() == "Fetch a web page; return a dict with status, final URL, content type, title and text."


def test_signature_with_defaults_containers_and_optionals() -> None:
    def search(query: str, k: int = 5, tags: list[str] | None = None, mode: Literal["a", "b"] = "a") -> list[str]:
        """Search."""
        return []

    sig = Tool.from_function(search).signature()
    assert sig == "search(query: str, k: int = 5, tags: list[str] | None = None, mode: Literal['a', 'b'] = 'a') -> list[str]"


def test_signature_without_return_annotation_says_any() -> None:
    def f(x: int):  # noqa: ANN202 - no return annotation on purpose
        """X."""

    assert Tool.from_function(f).signature() == "f(x: int) -> Any"


def test_signature_of_none_return() -> None:
    def f(x: int) -> None:
        """X."""

    assert Tool.from_function(f).signature() == "f(x: int) -> None"


# ----------------------------------------------------------------------------- validate


@pytest.fixture
def add() -> Tool:
    @tool
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    return add


def test_validate_missing_argument_names_it(add: Tool) -> None:
    with pytest.raises(ToolArgumentError) as info:
        add.validate({})
    message = str(info.value)
    assert message.startswith("add: ")
    assert "a:" in message and "required" in message.lower()
    assert "add(a: int, b: int = 1) -> int" in message  # shows what was expected


def test_validate_wrong_type_names_argument_and_problem(add: Tool) -> None:
    with pytest.raises(ToolArgumentError) as info:
        add.validate({"a": "seven"})
    message = str(info.value)
    assert "a:" in message and "integer" in message
    assert "\n" not in message


def test_validate_unknown_argument_is_refused(add: Tool) -> None:
    with pytest.raises(ToolArgumentError, match=r"unknown argument\(s\) c\b.*expected: add\(a: int"):
        add.validate({"a": 1, "c": 2})


def test_validate_non_mapping_is_refused(add: Tool) -> None:
    with pytest.raises(ToolArgumentError, match="must be a JSON object, got list"):
        add.validate([1, 2])  # type: ignore[arg-type]


def test_validate_fills_defaults_and_call_runs(add: Tool) -> None:
    assert add.validate({"a": 2}) == {"a": 2, "b": 1}
    assert add(a=2) == 3
    assert add(a=2, b=5) == 7


def test_call_validates_before_running() -> None:
    ran = []

    @tool
    def f(n: int) -> int:
        """N."""
        ran.append(n)
        return n

    with pytest.raises(ToolArgumentError):
        f(n=[1])
    assert ran == []


# ----------------------------------------------------------------------------- async, decorator options


def test_async_function_is_awaited() -> None:
    async def slow_double(n: int) -> int:
        """Double n, asynchronously."""
        await asyncio.sleep(0)
        return 2 * n

    t = Tool.from_function(slow_double)
    assert t.signature() == "slow_double(n: int) -> int"
    assert t(n=21) == 42


def test_async_tool_can_run_from_a_worker_thread() -> None:
    # The loop runs parallel calls in a thread pool; an async tool must work there too.
    from concurrent.futures import ThreadPoolExecutor

    @tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(lambda s: echo(text=s), ["a", "b"])) == ["a", "b"]


def test_tool_decorator_with_name_and_deferred() -> None:
    @tool(name="web_get", deferred=True)
    def fetch(url: str) -> str:
        """Get a URL."""
        return url

    assert isinstance(fetch, Tool)
    assert fetch.name == "web_get"
    assert fetch.deferred is True
    assert fetch.schema()["function"]["name"] == "web_get"
    assert fetch.signature().startswith("web_get(url: str)")
    assert fetch(url="u") == "u"


def test_bare_tool_decorator_defaults() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert ping.name == "ping" and ping.deferred is False and ping.source == "python"


def test_from_function_description_override() -> None:
    def f() -> None:
        """Original."""

    assert Tool.from_function(f, description="Replaced.").description == "Replaced."


def test_result_text_renders_values_for_the_model() -> None:
    assert result_text("plain ünïcode") == "plain ünïcode"
    assert result_text({"a": "北京", "n": 1}) == '{"a": "北京", "n": 1}'
    assert result_text([1, 2]) == "[1, 2]"


# ----------------------------------------------------------------------------- parameter names


def test_parameter_names_that_shadow_basemodel_attributes_still_work() -> None:
    def query(sql: str, schema: str = "public", json: bool = False) -> str:
        """Run SQL."""
        return f"{sql}@{schema}:{json}"

    with warnings.catch_warnings():  # the warning itself is the xfail below
        warnings.simplefilter("ignore")
        t = Tool.from_function(query)
    assert t.signature() == "query(sql: str, schema: str = 'public', json: bool = False) -> str"
    assert t(sql="select 1", schema="s", json=True) == "select 1@s:True"


def test_parameter_names_that_shadow_basemodel_attributes_do_not_warn() -> None:
    def query(sql: str, schema: str = "public") -> str:
        """Run SQL."""
        return sql

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Tool.from_function(query)


def test_parameter_named_model_config() -> None:
    def configure(model_config: str) -> str:
        """Configure."""
        return model_config

    t = Tool.from_function(configure)
    assert t(model_config="x") == "x"
