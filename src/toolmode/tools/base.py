"""A tool is a Python callable with a name, a description and a JSON schema for its arguments.

`Tool.from_function` builds all three from a plain function: the docstring gives the description and
the parameter descriptions (Google, NumPy or reST style, parsed by `docstring_parser`), the type hints
give the JSON schema (built by pydantic, which knows Optional, Literal, Enum, TypedDict, dataclasses and
models), and the return annotation is kept so `signature()` can show the model what comes back.

Tools whose hints are all plain JSON types (str, int, float, bool, None, Any, list/dict of those, unions
with None) get the same schema written directly, byte for byte what pydantic gives (tests compare the
two), and their pydantic validator is built on the first call: importing pydantic and building its
models cost ~60 ms, most of `toolmode tools`' start-up.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import operator
import re
import sys
import types
import typing
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, get_args, get_origin, get_type_hints, is_typeddict

import docstring_parser

from toolmode import runctx
from toolmode.errors import ToolmodeError

if TYPE_CHECKING:
    import pydantic


class ToolArgumentError(ValueError):
    """The arguments given to a tool do not match its schema."""


class ToolDefinitionError(ToolmodeError, TypeError):
    """A function cannot be offered as a tool as it is written; the message (one line) names the tool and
    the parameter, and says what to change."""


TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # what OpenAI-compatible APIs accept as a function name


@dataclass
class Tool:
    """A callable the model can use.

    `fn` receives keyword arguments. `parameters` is the JSON schema of those arguments (an object
    schema). `returns` is the return type as text (`"dict"`, `"list[str]"`), or None if unknown.
    `deferred` tools are hidden from the prompt and found through tool search. `varargs` names the
    array parameter that collects extra positional arguments when code calls the tool (`f(*args)`).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    returns: str | None = None
    return_schema: dict[str, Any] | None = None
    deferred: bool = False
    source: str = "python"
    returns_doc: str | None = None
    varargs: str | None = None
    _validator: type[pydantic.BaseModel] | None = field(default=None, repr=False, compare=False)
    # The parameters to build `_validator` from on first use (tools whose schema was written directly).
    _pending_params: tuple[_Param, ...] | None = field(default=None, repr=False, compare=False)
    context_param: str | None = None  # the first parameter, when it asks for the run's `RunContext`
    approval: str | None = None  # "allow", "ask" or "deny": the tool's own approval policy (toolmode.approval)

    def __post_init__(self) -> None:
        if self.approval is not None and self.approval not in ("allow", "ask", "deny"):
            raise ToolDefinitionError(f"tool {self.name}: approval must be 'allow', 'ask' or 'deny', "
                                      f"not {self.approval!r:.100}")

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        deferred: bool = False,
        approval: str | None = None,
    ) -> Tool:
        """Build a tool from a plain (sync or async) function with type hints and a docstring; `approval`
        ("allow", "ask", "deny") is its own approval policy (see toolmode.approval).

        Raises `ToolDefinitionError` (one line naming the tool and the parameter) for what the model could
        not call: a name the API refuses (a lambda's `<lambda>`, spaces), `*args` / `**kwargs`, a type hint
        that cannot be resolved, or a type that cannot be described as JSON.
        """
        tool_name = _tool_name(fn, name)
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
        hints = _type_hints(fn, tool_name)
        params: list[_Param] = []
        context_param = None
        for i, (pname, param) in enumerate(inspect.signature(fn).parameters.items()):
            if i == 0 and runctx.is_context_annotation(hints.get(pname)):
                context_param = pname  # the run's context: passed by the loop, never shown to the model
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                star, kind = ("*", "list") if param.kind is param.VAR_POSITIONAL else ("**", "dict")
                raise ToolDefinitionError(
                    f"tool {tool_name}: parameter {star}{pname} cannot be filled by a model, which sends one JSON "
                    f"object of named arguments; take a {kind} parameter instead ({pname}: {kind}[...])")
            if pname.startswith("_"):
                # `_name=default` is the idiom for a parameter the model must not see or set.
                if param.default is inspect.Parameter.empty:
                    raise ToolDefinitionError(f"tool {tool_name}: parameter {pname!r} starts with '_' (hidden from "
                                              "the model) but has no default to use instead")
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            params.append(_Param(pname, hints.get(pname, Any), default, param_docs.get(pname) or None))
        model = None
        schema = _plain_arguments_schema(params)
        if schema is None:
            model, schema = _pydantic_arguments(tool_name, params)
        text = description if description is not None else _description_from_doc(doc)
        return_hint = hints.get("return", inspect.Signature.empty)
        returns = None if return_hint is inspect.Signature.empty else _annotation_text(return_hint)
        return_schema = None
        if return_hint not in (inspect.Signature.empty, None, type(None), Any):
            return_schema = _plain_schema(return_hint)
            if return_schema is None:
                import pydantic

                try:
                    return_schema = _clean_schema(pydantic.TypeAdapter(return_hint).json_schema())
                except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError):
                    return_schema = None
        return cls(
            name=tool_name,
            description=text,
            parameters=schema,
            fn=fn,
            returns=returns,
            return_schema=return_schema,
            deferred=deferred,
            returns_doc=(doc.returns.description or "").strip() or None if doc.returns else None,
            _validator=model,
            _pending_params=None if model is not None else tuple(params),
            context_param=context_param,
            approval=approval,
        )

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling definition of this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def summary(self) -> str:
        """The first line of the description."""
        return self.description.strip().split("\n", 1)[0].strip()

    def signature(self) -> str:
        """Python-like signature with return type, e.g. `fetch_url(url: str, timeout: float = 10) -> dict`."""
        props = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        parts = []
        for pname, pschema in props.items():
            if pname == self.varargs:
                items = pschema.get("items")
                parts.append(f"*{pname}: {schema_type_text(items)}" if items else f"*{pname}")
                continue
            text = f"{pname}: {schema_type_text(pschema, self.parameters.get('$defs', {}))}"
            if pname not in required:
                text += f" = {_default_text(pschema)}"
            parts.append(text)
        returns = self.returns or (schema_type_text(self.return_schema) if self.return_schema else "Any")
        return f"{self.name}({', '.join(parts)}) -> {returns}"

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check arguments against the schema; return the keyword arguments to call `fn` with.

        Raises ToolArgumentError with a message the model can act on.
        """
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(f"arguments for {self.name} must be a JSON object, got {type(arguments).__name__}")
        if self._validator is None and self._pending_params is not None:
            self._validator = _arguments_model(self.name, list(self._pending_params))
        if self._validator is None:
            missing = [p for p in self.parameters.get("required", []) if p not in arguments]
            if missing:
                raise ToolArgumentError(f"{self.name}: missing required argument(s): {', '.join(missing)}")
            return dict(arguments)
        known = set(self.parameters.get("properties", {}))
        unknown = [k for k in arguments if k not in known]
        if unknown:
            raise ToolArgumentError(
                f"{self.name}: unknown argument(s) {', '.join(unknown)}; expected: {self.signature()}"
            )
        import pydantic  # loaded by now: the validator is a pydantic model

        try:
            validated = self._validator.model_validate(dict(arguments))
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolArgumentError(f"{self.name}: {problems}; expected: {self.signature()}") from None
        # Keep validated objects (dataclass instances, enums) rather than a dump back to dicts.
        return {f.alias or k: getattr(validated, k) for k, f in type(validated).model_fields.items()}

    def __call__(self, *args: Any, **arguments: Any) -> Any:
        """Validate the arguments and call the function; awaitables are run to completion.

        Positional arguments fill the parameters in the order of the signature (`read_file("a.txt")`).
        """
        if args:
            names = list(self.parameters.get("properties", {}))
            if len(args) > len(names):
                raise TypeError(f"{self.name}() takes {len(names)} positional argument(s) but {len(args)} were given")
            for pname, value in zip(names, args, strict=False):
                if pname in arguments:
                    raise TypeError(f"{self.name}() got multiple values for argument {pname!r}")
                arguments[pname] = value
        kwargs = self.validate(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = runctx.current()  # None when called outside a run
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            from toolmode.aio import resolve

            result = resolve(result)  # on the caller's event loop (arun) or toolmode's background loop
        return result


def tool(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, deferred: bool = False,
    approval: str | None = None,
) -> Any:
    """Decorator: turn a function into a `Tool`. Use as `@tool` or `@tool(name=..., deferred=True,
    approval="ask")` (`approval`: the tool's own policy, "allow", "ask" or "deny")."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, name=name, deferred=deferred, approval=approval)

    return wrap(fn) if fn is not None else wrap


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    """Accept a Tool or a plain function and return a Tool."""
    return obj if isinstance(obj, Tool) else Tool.from_function(obj)


def prefix_colliding_mcp_tools(tools: list[Tool]) -> list[Tool]:
    """MCP tools whose names collide with another tool's get their server's name as prefix: `time__now`.

    Returns renamed copies; the callable's `__name__` (the label MCP errors use) follows the new name.
    """
    counts = Counter(t.name for t in tools)
    out = []
    for t in tools:
        if counts[t.name] > 1 and t.source.startswith("mcp:"):
            t = dataclasses.replace(t, name=f"{t.source.removeprefix('mcp:')}__{t.name}")
            t.fn.__name__ = t.name
        out.append(t)
    return out


def result_text(value: Any) -> str:
    """Render a tool's return value as text for the model: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


class _Param(NamedTuple):
    name: str
    annotation: Any
    default: Any  # `...` when the parameter is required
    description: str | None


def _tool_name(fn: Callable[..., Any], name: str | None) -> str:
    """The name the model will call: `name`, else the function's; refused unless the API accepts it."""
    given = name if name is not None else getattr(fn, "__name__", None)
    if given is None or given == "<lambda>":
        what = "a lambda" if given == "<lambda>" else f"{type(fn).__name__} object {fn!r}"
        raise ToolDefinitionError(f"{what} has no name to show the model as a tool: give one, "
                                  "Tool.from_function(fn, name=\"...\") or @tool(name=\"...\"), or use a def")
    if not isinstance(given, str) or not TOOL_NAME.fullmatch(given):
        raise ToolDefinitionError(f"tool name {given!r} is refused by OpenAI-compatible APIs: use 1 to 64 letters, "
                                  "digits, '_' or '-' (name=\"...\" sets another)")
    return given


def _type_hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    """The function's resolved type hints; a hint that cannot be resolved is refused, naming its parameter."""
    try:
        return get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - NameError, AttributeError, SyntaxError in a string hint, ...
        failure = exc
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})
    for pname, hint in getattr(fn, "__annotations__", {}).items():
        probe = types.SimpleNamespace(__annotations__={pname: hint}, __globals__=namespace)
        try:
            get_type_hints(probe, include_extras=True)
        except Exception as exc:  # noqa: BLE001 - as above
            what = "the return type" if pname == "return" else f"the type of parameter {pname!r}"
            raise ToolDefinitionError(
                f"tool {tool_name}: {what}, {hint!r}, cannot be resolved ({type(exc).__name__}: "
                f"{exc}); define or import it at module level, where the function is defined") from None
    raise ToolDefinitionError(f"tool {tool_name}: its type hints cannot be resolved ({type(failure).__name__}: "
                              f"{failure})") from None


def _pydantic_arguments(tool_name: str, params: list[_Param]) -> tuple[type[pydantic.BaseModel], dict[str, Any]]:
    """The validator and JSON schema of arguments that need pydantic; a type it cannot describe is refused,
    naming its parameter."""
    import pydantic

    failures = (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError, ValueError)
    try:
        model = _arguments_model(tool_name, params)
        schema = _clean_schema(model.model_json_schema())
    except failures as exc:
        for p in params:
            try:
                _arguments_model(tool_name, [p]).model_json_schema()
            except failures as one:
                reason = str(one).strip().split(". ")[0].splitlines()[0] if str(one).strip() else type(one).__name__
                raise ToolDefinitionError(
                    f"tool {tool_name}: the type of parameter {p.name!r}, {_annotation_text(p.annotation)}, cannot "
                    f"be sent to a model as JSON ({reason}); use str, int, float, bool, list, dict, Literal, an "
                    f"Enum, a dataclass, a TypedDict or a pydantic model, or hide it as _{p.name}=default") from None
        raise ToolDefinitionError(f"tool {tool_name}: its arguments cannot be described as JSON ({exc})") from None
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return model, schema


def _arguments_model(fn_name: str, params: list[_Param]) -> type[pydantic.BaseModel]:
    """The pydantic model that validates a tool's arguments."""
    import pydantic

    # Fields get neutral names and the parameter name as alias, so parameters called `schema`,
    # `json` or `model_config` cannot clash with pydantic's own attributes.
    fields = {
        f"p{i}": (_typeddict_compat(p.annotation),
                  pydantic.Field(default=p.default, alias=p.name, description=p.description))
        for i, p in enumerate(params)
    }
    return pydantic.create_model(f"{fn_name}_arguments", **fields)  # type: ignore[call-overload,no-any-return]


_PLAIN_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
    bool: {"type": "boolean"}, type(None): {"type": "null"}, None: {"type": "null"},
    list: {"items": {}, "type": "array"}, dict: {"additionalProperties": True, "type": "object"},
}
_PLAIN_DEFAULTS = (type(None), bool, int, float, str)


def _plain_schema(annotation: Any) -> dict[str, Any] | None:
    """The JSON schema pydantic gives `annotation` (titles dropped, keys sorted as pydantic sorts them) when
    it is a plain JSON type; None for anything else (pydantic builds those)."""
    if annotation is Any:
        return {}
    try:
        plain = _PLAIN_TYPES.get(annotation)
    except TypeError:  # an unhashable annotation
        return None
    if plain is not None:
        return dict(plain)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is list and len(args) == 1:
        items = _plain_schema(args[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = _plain_schema(args[1])
        return None if values is None else {"additionalProperties": values or True, "type": "object"}
    if origin is typing.Union or origin is types.UnionType:
        members = [_plain_schema(a) for a in args]
        if any(m is None or not m for m in members):  # pydantic simplifies unions with Any: leave them to it
            return None
        return {"anyOf": members}
    return None


def _plain_arguments_schema(params: list[_Param]) -> dict[str, Any] | None:
    """The arguments' object schema written directly, or None when a parameter needs pydantic."""
    properties: dict[str, Any] = {}
    for p in params:
        prop = _plain_schema(p.annotation)
        if prop is None:
            return None
        if p.default is not ...:
            if type(p.default) not in _PLAIN_DEFAULTS or p.default != p.default or p.default in (
                    float("inf"), float("-inf")):
                return None
            prop["default"] = p.default
        if p.description:
            prop["description"] = p.description
        properties[p.name] = dict(sorted(prop.items()))
    schema: dict[str, Any] = {"properties": properties}
    required = [p.name for p in params if p.default is ...]
    if required:
        schema["required"] = required
    schema["type"] = "object"
    return schema


def _typeddict_compat(annotation: Any) -> Any:
    """Swap `typing.TypedDict` classes for `typing_extensions` ones: pydantic needs that on Python 3.11."""
    if sys.version_info >= (3, 12):
        return annotation
    import typing_extensions

    if is_typeddict(annotation) and not isinstance(annotation, typing_extensions._TypedDictMeta):  # type: ignore[attr-defined]
        hints = get_type_hints(annotation, include_extras=True)
        fields = {k: _typeddict_compat(v) for k, v in hints.items()}
        required = getattr(annotation, "__required_keys__", frozenset(fields))
        fields = {k: v if k in required else typing_extensions.NotRequired[v] for k, v in fields.items()}
        new = typing_extensions.TypedDict(annotation.__name__, fields)  # type: ignore[operator,misc]
        new.__doc__ = annotation.__doc__
        return new
    args = get_args(annotation)
    if not args:
        return annotation
    new_args = tuple(_typeddict_compat(a) for a in args)
    if new_args == args:
        return annotation
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return functools.reduce(operator.or_, new_args)
    try:
        return annotation.copy_with(new_args)  # typing generics such as List[X], Annotated
    except AttributeError:
        return origin[new_args]


def _description_from_doc(doc: docstring_parser.Docstring) -> str:
    parts = [doc.short_description or "", doc.long_description or ""]
    text = "\n\n".join(p.strip() for p in parts if p and p.strip())
    if doc.returns and doc.returns.description:
        text += f"\n\nReturns: {doc.returns.description.strip()}"
    return text


def _annotation_text(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "None"
    text = inspect.formatannotation(annotation)
    return text.replace("typing.", "")


_JSON_TO_PY = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def schema_type_text(schema: Mapping[str, Any] | None, defs: Mapping[str, Any] | None = None) -> str:
    """Render a JSON schema as a short Python type, e.g. `list[str]`, `dict`, `Literal['a', 'b']`."""
    if not schema:
        return "Any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(schema_type_text(s, defs) for s in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(schema_type_text({**schema, "type": k}, defs) for k in kind)
    if kind == "array":
        return f"list[{schema_type_text(schema.get('items'), defs)}]" if schema.get("items") else "list"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra and not schema.get("properties"):
            return f"dict[str, {schema_type_text(extra, defs)}]"
        return "dict"
    return _JSON_TO_PY.get(str(kind), "Any")


def _default_text(schema: Mapping[str, Any]) -> str:
    return repr(schema["default"]) if "default" in schema else "None"


def _clean_schema(schema: Any, *, in_properties: bool = False) -> Any:
    """Drop pydantic's auto-generated `title` keys (tokens the model pays for on every request)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and not in_properties and isinstance(value, str):
                continue
            out[key] = _clean_schema(value, in_properties=key in ("properties", "$defs"))
        return out
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema
