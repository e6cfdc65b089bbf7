"""MCP specs, configs, schemas and results converted for toolmode; no server needed."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types
import pytest
from mcp import StdioServerParameters

from toolmode.mcp import load_config, parse_spec
from toolmode.mcp.convert import (
    clean_schema,
    content_text,
    output_schema,
    python_name,
    result_value,
    type_text,
)


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("uvx mcp-server-time", "time"),
        ("python -m mcp_server_time", "time"),
        ("npx -y @modelcontextprotocol/server-everything", "everything"),
        ("node /x/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio", "everything"),
        ("npx -y @playwright/mcp@latest", "playwright"),
        ("uvx --from git+https://example.org/x.git fetch-mcp", "fetch"),
        ("/usr/bin/python3 tests/mcp_servers/test_server.py", "test"),
        ("https://mcp.notion.com/mcp", "notion"),
        ("http://127.0.0.1:8123/mcp", "mcp_8123"),
    ],
)
def test_server_name_derived_from_spec(spec: str, name: str) -> None:
    assert parse_spec(spec).name == name


def test_command_line_spec() -> None:
    spec = parse_spec("npx -y 'some pkg' --flag", env={"K": "v"})
    assert (spec.command, spec.args, dict(spec.env), spec.url) == (
        "npx",
        ("-y", "some pkg", "--flag"),
        {"K": "v"},
        None,
    )
    assert spec.describe() == "npx -y 'some pkg' --flag"


def test_dict_and_sdk_params_specs() -> None:
    spec = parse_spec(
        {"command": "srv", "args": ["a", 1], "env": {"A": "1"}, "cwd": "/tmp"}, name="mine", env={"B": "2"}
    )
    assert (spec.name, spec.command, spec.args, dict(spec.env), spec.cwd) == (
        "mine",
        "srv",
        ("a", "1"),
        {"A": "1", "B": "2"},
        "/tmp",
    )
    sdk = parse_spec(StdioServerParameters(command="python", args=["-m", "mcp_server_time"]))
    assert (sdk.name, sdk.command, sdk.args) == ("time", "python", ("-m", "mcp_server_time"))


def test_url_spec_keeps_headers_out_of_descriptions() -> None:
    spec = parse_spec({"url": "https://h.example.com/mcp", "headers": {"Authorization": "Bearer s3cret"}})
    assert spec.url == "https://h.example.com/mcp" and spec.headers == {"Authorization": "Bearer s3cret"}
    assert "s3cret" not in spec.describe() and "s3cret" not in repr(spec.describe())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty MCP server command"),
        ({"args": ["x"]}, "needs a 'command' or a 'url'"),
        ({"url": "http://h/sse", "type": "sse"}, "SSE are not supported"),
        (42, "must be a command line, a URL or a mapping"),
    ],
)
def test_bad_specs(spec: object, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        parse_spec(spec)


def test_config_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "clock": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                    "remote": {"url": "https://h.example.com/mcp", "headers": {"X-Key": "k"}},
                    "off": {"command": "nothing", "disabled": True},
                }
            }
        )
    )
    specs = load_config(path)
    assert [s.name for s in specs] == ["clock", "remote"]
    assert (specs[0].command, specs[0].args, dict(specs[0].env)) == (
        "uvx",
        ("mcp-server-time",),
        {"TZ": "UTC"},
    )
    assert (specs[1].url, dict(specs[1].headers)) == ("https://h.example.com/mcp", {"X-Key": "k"})
    assert [s.name for s in load_config({"servers": {"x": {"command": "y"}}})] == ["x"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"other": {}}, '"mcpServers" object'),
        ({"mcpServers": {"bad": "uvx x"}}, "'bad' in config: expected an object"),
        ({"mcpServers": {"bad": {"args": []}}}, "'bad' in config: MCP server spec needs"),
    ],
)
def test_bad_configs(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_config(config)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("get-sum", "get_sum"),
        ("a.b c", "a_b_c"),
        ("2fa", "t_2fa"),
        ("import", "import_"),
        ("ok_name", "ok_name"),
    ],
)
def test_python_names(name: str, expected: str) -> None:
    assert python_name(name) == expected
    assert python_name(name).isidentifier()


def test_clean_schema_drops_generated_titles_but_keeps_properties_named_title() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "addArguments",
        "properties": {"title": {"title": "Title", "type": "string"}, "n": {"type": "integer", "title": "N"}},
    }
    assert clean_schema(schema) == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
    }
    assert clean_schema(None) == {"type": "object", "properties": {}}


def test_output_schema_unwraps_the_sdk_result_wrapper() -> None:
    wrapped = {
        "type": "object",
        "properties": {"result": {"type": "string", "title": "Result"}},
        "required": ["result"],
    }
    assert output_schema(wrapped) == ({"type": "string"}, True)
    plain = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    assert output_schema(plain) == (plain, False)
    assert output_schema(None) == (None, False)


def test_type_text_shows_keys_and_resolves_refs() -> None:
    schema = {
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}
        },
        "type": "object",
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"enum": ["a", "b"]},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert (
        type_text(schema)
        == "{at: {x: float, y: float}, tags: list[str], kind: Literal['a', 'b'], note: str | None}"
    )
    assert type_text({"type": "object"}) == "dict"
    assert type_text(None) == "Any"


def _result(*content: object, structured: dict | None = None) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(content), structured_content=structured)


def test_content_text_joins_text_and_summarises_the_rest() -> None:
    content = [
        mcp_types.TextContent(type="text", text="first"),
        mcp_types.TextContent(type="text", text="second"),
        mcp_types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
        mcp_types.AudioContent(type="audio", data="aGk=", mime_type="audio/wav"),
        mcp_types.ResourceLink(
            type="resource_link", name="readme", uri="file:///r.md", mime_type="text/markdown"
        ),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="inside")
        ),
        mcp_types.EmbeddedResource(
            type="resource",
            resource=mcp_types.BlobResourceContents(
                uri="file:///b.gz", blob="AAAA", mime_type="application/gzip"
            ),
        ),
    ]
    assert content_text(content).split("\n") == [
        "first",
        "second",
        "[image: image/png, 5 bytes]",
        "[audio: audio/wav, 2 bytes]",
        "[resource link: readme <file:///r.md>, text/markdown]",
        "[resource <file:///a.txt>]",
        "inside",
        "[resource <file:///b.gz>: application/gzip, 3 bytes]",
    ]


def test_result_value() -> None:
    text = mcp_types.TextContent(type="text", text='{"a": 1}')
    assert result_value(_result(text, structured={"a": 1}), structured=True, wrapped=False) == {"a": 1}
    assert result_value(_result(text, structured={"result": 7}), structured=True, wrapped=True) == 7
    # No output schema: text, even if the server also sent structured content.
    assert result_value(_result(text, structured={"a": 1}), structured=False, wrapped=False) == '{"a": 1}'
    # An output schema but no structured content: the text parsed as JSON when it is JSON.
    assert result_value(_result(text), structured=True, wrapped=False) == {"a": 1}
