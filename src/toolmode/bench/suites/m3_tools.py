"""Turn M3ToolEval tools (`ToolType(name, description, function, fn_signature)`) into toolmode Tools.

The parameters come from the function itself (that is what gets called); their types come from the
function's hints, else from the suite's `fn_signature` text (by name, or by position when the names
differ). Arguments are checked against those types and passed on unconverted. `*args` parameters become
an array parameter that code collects positionally (`find_minimum(3, 1, 2)`), as in the suite.

The functions run in the host process. A suite function that evaluates its argument with `eval` (the
suites' `calculator`) is run through toolmode's own arithmetic evaluator instead, so model-written text
is never `eval`ed in the host.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolmode.tools.base import Tool, ToolArgumentError

_PY_TO_JSON = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "Dict": "object",
    "list": "array",
    "List": "array",
    "tuple": "array",
    "Tuple": "array",
}
_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def is_builtin_alias(name: str, fn: Any) -> bool:
    """True for a suite tool that is just Python's builtin of the same name (`max`, `min`)."""
    return getattr(builtins, name, None) is fn


@dataclass(frozen=True)
class _Param:
    name: str
    var: bool  # *args
    has_default: bool
    type: str | None  # JSON schema type, when known


def convert_tool(name: str, description: str, fn: Callable[..., Any], fn_signature: str) -> Tool:
    """A toolmode Tool that calls `fn` in the host with the suite's name, description and signature types."""
    declared, returns = _parse_signature(fn_signature)
    params = _function_params(fn) or declared
    hints = _hint_types(fn)
    by_name = {p.name: p.type for p in declared}
    by_position = len(declared) == len(params)
    properties: dict[str, Any] = {}
    required: list[str] = []
    varargs = None
    positional: list[str] = []
    for i, p in enumerate(params):
        json_type = hints.get(p.name) or by_name.get(p.name) or (declared[i].type if by_position else None)
        if p.var:
            varargs = p.name
            properties[p.name] = {"type": "array", "items": {"type": json_type} if json_type else {}}
            continue
        properties[p.name] = {"type": json_type} if json_type else {}
        positional.append(p.name)
        if not p.has_default:
            required.append(p.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    call = _guarded(fn, name)

    def run(**arguments: Any) -> Any:
        _check_types(name, fn_signature, properties, arguments, varargs)
        given = [p for p in positional if p in arguments]
        extra = list(arguments.get(varargs) or []) if varargs else []
        if given == positional[: len(given)]:
            # Positionally, as the suite calls them: some suite functions are builtins or `*args` lambdas.
            return call(*(arguments[p] for p in given), *extra)
        if extra:
            raise ToolArgumentError(f"{name}: give every argument before {varargs}; expected: {fn_signature}")
        return call(**{p: arguments[p] for p in given})

    run.__name__ = name
    return Tool(
        name=name,
        description=description.strip(),
        parameters=schema,
        fn=run,
        returns=returns,
        source="m3tooleval",
        varargs=varargs,
    )


def _check_types(
    name: str, signature: str, properties: dict[str, Any], arguments: dict[str, Any], varargs: str | None
) -> None:
    for key, value in arguments.items():
        prop = properties.get(key)
        if prop is None:
            raise ToolArgumentError(f"{name}: unknown argument {key!r}; expected: {signature}")
        if key == varargs:
            if not isinstance(value, list):
                raise ToolArgumentError(f"{name}: {key} must be a list of arguments; expected: {signature}")
            kind = prop["items"].get("type")
            values = value
        else:
            kind = prop.get("type")
            values = [value]
        check = _CHECKS.get(kind or "")
        for v in values:
            if check is not None and not check(v):
                raise ToolArgumentError(
                    f"{name}: {key} must be {kind}, got {type(v).__name__} {v!r:.60}; expected: {signature}"
                )


def _guarded(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn`, or toolmode's safe evaluator when `fn` would `eval` its (model-written) argument."""
    code = getattr(fn, "__code__", None)
    if code is None or not ({"eval", "exec"} & set(code.co_names)):
        return fn
    from toolmode.tools.calculator import calculator

    def safe(expression: Any) -> Any:
        try:
            return calculator(str(expression))
        except Exception:  # noqa: BLE001 - the suite's own failure text for any bad expression
            return f"Failed to evaluate expression: {expression}"

    safe.__name__ = name
    return safe


def _function_params(fn: Callable[..., Any]) -> list[_Param]:
    """The parameters of the function itself; [] if it has no signature (builtins such as max())."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [
        _Param(p.name, p.kind is p.VAR_POSITIONAL, p.default is not p.empty, None)
        for p in sig.parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]


def _hint_types(fn: Callable[..., Any]) -> dict[str, str]:
    annotations = getattr(fn, "__annotations__", None) or {}
    out = {}
    for pname, hint in annotations.items():
        text = hint if isinstance(hint, str) else getattr(hint, "__name__", "")
        if pname != "return" and _PY_TO_JSON.get(text):
            out[pname] = _PY_TO_JSON[text]
    return out


def _parse_signature(text: str) -> tuple[list[_Param], str | None]:
    """Parameters and return text of a signature such as `f(a: str, *b: float) -> int` ([], None if unparsable)."""
    try:
        fn = ast.parse(f"def {text.strip()}: pass").body[0]
    except (SyntaxError, IndexError):
        return [], None
    if not isinstance(fn, ast.FunctionDef):
        return [], None
    plain = [*fn.args.posonlyargs, *fn.args.args]
    first_default = len(plain) - len(fn.args.defaults)
    params = [_Param(a.arg, False, i >= first_default, _json_type(a.annotation)) for i, a in enumerate(plain)]
    if fn.args.vararg is not None:
        params.append(_Param(fn.args.vararg.arg, True, True, _json_type(fn.args.vararg.annotation)))
    return params, text.rsplit("->", 1)[1].strip() if fn.returns is not None else None


def _json_type(annotation: ast.expr | None) -> str | None:
    if annotation is None:
        return None
    base = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return _PY_TO_JSON.get(ast.unparse(base))
