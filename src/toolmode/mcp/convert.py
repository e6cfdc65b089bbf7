"""MCP tool definitions and results converted to what toolmode's `Tool` expects."""

from __future__ import annotations

import base64
import keyword
import re
from collections.abc import Mapping
from typing import Any

import mcp_types

from toolmode.bounded import loads_json
from toolmode.tools.base import schema_type_text

_MAX_KEYS = 12  # keys shown in a return type before "..."
_MAX_DEPTH = 3


def python_name(name: str) -> str:
    """A valid Python identifier for a tool name (`get-sum` -> `get_sum`): code mode calls tools by name."""
    text = re.sub(r"\W", "_", name, flags=re.ASCII) or "tool"
    if text[0].isdigit():
        text = "t_" + text
    return text + "_" if keyword.iskeyword(text) else text


def clean_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """An input schema as an object schema, without `$schema` and generated `title`s (tokens paid per request)."""
    out = _drop_titles(dict(schema or {}))
    out.pop("$schema", None)
    out["type"] = "object"
    out.setdefault("properties", {})
    return out


def _drop_titles(value: Any, *, in_properties: bool = False) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_titles(v, in_properties=k in ("properties", "$defs", "definitions"))
            for k, v in value.items()
            if not (k == "title" and not in_properties and isinstance(v, str))
        }
    if isinstance(value, list):
        return [_drop_titles(v) for v in value]
    return value


def output_schema(schema: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The cleaned output schema and whether results are wrapped as `{"result": value}`.

    The Python SDK wraps a non-object return value (`-> str`, `-> list[int]`) in an object with one
    required `result` key; such results are unwrapped so the value and the signature match the tool's
    own return type.
    """
    if not schema:
        return None, False
    cleaned = _drop_titles(dict(schema))
    cleaned.pop("$schema", None)
    props = cleaned.get("properties") or {}
    if (
        cleaned.get("type") == "object"
        and list(props) == ["result"]
        and cleaned.get("required") == ["result"]
    ):
        inner = dict(props["result"])
        if "$defs" in cleaned:
            inner["$defs"] = cleaned["$defs"]
        return inner, True
    return cleaned, False


def type_text(schema: Mapping[str, Any] | None, defs: Mapping[str, Any] | None = None, depth: int = 0) -> str:
    """A short Python-like type for a JSON schema, showing object keys: `{sum: int, inputs: list[int]}`."""
    if not schema:
        return "Any"
    defs = {**(defs or {}), **schema.get("$defs", {})}
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1])
        if target is None or depth >= _MAX_DEPTH:
            return schema_type_text(schema)
        return type_text(target, defs, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(type_text(s, defs, depth) for s in schema[key])
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list[{type_text(schema['items'], defs, depth + 1)}]"
    props = schema.get("properties")
    if kind == "object" and props and depth < _MAX_DEPTH:
        parts = [f"{k}: {type_text(v, defs, depth + 1)}" for k, v in list(props.items())[:_MAX_KEYS]]
        if len(props) > _MAX_KEYS:
            parts.append("...")
        return "{" + ", ".join(parts) + "}"
    return schema_type_text(schema, defs)


def result_value(result: mcp_types.CallToolResult, *, structured: bool, wrapped: bool) -> Any:
    """The value a tool call returns: structured content (for tools with an output schema) or text.

    Call only for results that are not errors.
    """
    data = result.structured_content
    if structured and data is not None:
        return data.get("result") if wrapped else data
    text = content_text(result.content)
    if structured:  # an output schema but no structured content: the text is often that JSON
        try:
            return loads_json(text)  # the server's text: bounded in size and nesting
        except ValueError:
            return text
    return text


def content_text(content: list[Any]) -> str:
    """Text items joined by newlines; images, audio and resources summarised as one line each."""
    return "\n".join(_item_text(item) for item in content)


def _item_text(item: Any) -> str:
    if isinstance(item, mcp_types.TextContent):
        return item.text
    if isinstance(item, mcp_types.ImageContent | mcp_types.AudioContent):
        return f"[{item.type}: {item.mime_type}, {_decoded_size(item.data)} bytes]"
    if isinstance(item, mcp_types.ResourceLink):
        mime = f", {item.mime_type}" if item.mime_type else ""
        return f"[resource link: {item.name} <{item.uri}>{mime}]"
    if isinstance(item, mcp_types.EmbeddedResource):
        res = item.resource
        if isinstance(res, mcp_types.TextResourceContents):
            return f"[resource <{res.uri}>]\n{res.text}"
        mime = f"{res.mime_type}, " if res.mime_type else ""
        return f"[resource <{res.uri}>: {mime}{_decoded_size(res.blob)} bytes]"
    return f"[{getattr(item, 'type', type(item).__name__)} content]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data)
