"""Turn M3ToolEval tools (`ToolType(name, description, function, fn_signature)`) into toolmode Tools.

The parameters come from the function itself (that is what gets called); their types come from the
function's hints, else from the suite's `fn_signature` text (by name, or by position when the names
differ). Arguments are checked against those types and passed on unconverted. `*args` parameters become
an array parameter that code collects positionally (`find_minimum(3, 1, 2)`), as in the suite.

The functions run in the host process. A suite function that evaluates its argument with `eval` (the
suites' `calculator`) is run through toolmode's own arithmetic evaluator instead, so model-written text
is never `eval`ed in the host. The suite's `eval` sees its module's functions, so the evaluator may call
the task's tools that take only numbers (`find_maximum(3, 5)`, `convert_currency(100, 1.5)`); an
expression it cannot evaluate is a failed call (the suite returned its failure text as a result, which
made it look like an answer).
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Callable, Mapping
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


def convert_tool(name: str, description: str, fn: Callable[..., Any], fn_signature: str,
                 helpers: Mapping[str, Callable[..., Any]] | None = None) -> Tool:
    """A toolmode Tool that calls `fn` in the host with the suite's name, description and signature types
    (`helpers`: the functions an `eval`-ing tool may call by name, see `numeric_tools`)."""
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
    call = _guarded(fn, name, helpers)

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


def evaluates(fn: Callable[..., Any]) -> bool:
    """Whether `fn` runs `eval`/`exec` (on its model-written argument, in the suites)."""
    code = getattr(fn, "__code__", None)
    return code is not None and bool({"eval", "exec"} & set(code.co_names))


def numeric_tools(tools: Mapping[str, Any]) -> dict[str, Callable[..., Any]]:
    """The suite tools (`ToolType`s by name) whose declared parameters are all numbers, builtins and `eval`-ing
    tools left out: what the safe evaluator lets an expression call, as the suite's `eval` could."""
    out = {}
    for name, t in tools.items():
        params, _ = _parse_signature(t.fn_signature)
        if (params and all(p.type in ("number", "integer") for p in params)
                and not is_builtin_alias(name, t.function) and not evaluates(t.function)):
            out[name] = t.function
    return out


def _guarded(fn: Callable[..., Any], name: str, helpers: Mapping[str, Callable[..., Any]] | None) -> Callable[..., Any]:
    """`fn`, or toolmode's safe evaluator when `fn` would `eval` its (model-written) argument."""
    if not evaluates(fn):
        return fn
    from toolmode.tools.calculator import evaluate

    table = dict(helpers or {})

    def safe(expression: Any) -> Any:
        try:
            return evaluate(str(expression), table)
        except Exception as exc:  # noqa: BLE001 - any refusal is the suite's failure, now a failed call
            raise ValueError(f"Failed to evaluate expression: {expression} ({exc})") from None

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
