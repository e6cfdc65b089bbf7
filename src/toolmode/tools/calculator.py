"""Safe arithmetic: the expression is parsed with `ast` and walked node by node; nothing is ever `eval`ed."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

MAX_EXPRESSION_CHARS = 10_000
MAX_DEPTH = 50
# About 3,000 decimal digits: far beyond everyday use, and below Python's int-to-text limit (4,300 digits),
# so every result can still be shown to the model.
MAX_INT_BITS = 10_000
# Every operand and result is an int of at most MAX_INT_BITS bits or a float, so each operation costs
# microseconds, except those whose work grows with an operand's *value*: `**` (the exponent) and
# round(x, ndigits) (computes 10 ** -ndigits). Those are bounded before they run (_check_power,
# _check_round); no other allowed operation (shifts, factorial, comb, three-argument pow) is offered.
MAX_ROUND_DIGITS = 4_000

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "log": math.log,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.UAdd: "+",
    ast.USub: "-",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
    ast.Invert: "~",
    ast.Not: "not",
}
# Symbols people (and models) often type that Python spells differently.
_TRANSLATE = str.maketrans({"×": "*", "÷": "/", "−": "-", "（": "(", "）": ")", "，": ","})


def calculator(expression: str) -> float | int:
    """Evaluate an arithmetic expression exactly like Python would, without running any code.

    Supports numbers, + - * / // % ** (use ** for powers, not ^), unary minus, parentheses, the
    constants pi and e, and the functions sqrt, log (natural, or log(x, base)), exp, sin, cos, tan
    (radians), abs, round, min and max. Anything else (names, attributes, other calls) is refused.

    Args:
        expression: The expression, e.g. "2 * (3 + 4) ** 2 / sqrt(16)".

    Returns:
        The result as a number: an int when integer arithmetic gives one (e.g. 7 // 2 -> 3), else a float
        (e.g. 7 / 2 -> 3.5).
    """
    return evaluate(expression)


def evaluate(expression: str, functions: Mapping[str, Callable[..., Any]] | None = None) -> float | int:
    """`calculator(expression)`, with `functions` callable by name too (numbers in, a number out: each result
    is checked as the builtin functions' are). ValueError (or ZeroDivisionError) for anything refused."""
    if not isinstance(expression, str):
        raise ValueError(f"expression must be a string, got {type(expression).__name__}")
    text = expression.translate(_TRANSLATE).strip()
    if not text:
        raise ValueError("empty expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression too long ({len(text)} characters; the limit is {MAX_EXPRESSION_CHARS})")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"invalid expression {expression!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"expression nested too deeply (the limit is {MAX_DEPTH} levels)") from None
    result = _eval(tree.body, 0, {**_FUNCTIONS, **(functions or {})})
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError(f"the result of {expression!r} is not a finite number ({result})")
    return result


def _eval(node: ast.AST, depth: int, table: Mapping[str, Callable[..., Any]]) -> Number:
    if depth > MAX_DEPTH:
        raise ValueError(f"expression nested too deeply (the limit is {MAX_DEPTH} levels)")
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"only numbers are allowed, not {value!r}")
        return _checked(value)
    if isinstance(node, ast.BinOp):
        return _binary_chain(node, depth, table)
    if isinstance(node, ast.UnaryOp):
        unary = _UNARY.get(type(node.op))
        if unary is None:
            raise ValueError(f"operator {_op_text(node.op)} is not allowed")
        return unary(_eval(node.operand, depth + 1, table))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in table:
            raise ValueError(f"{node.id} is a function: call it, e.g. {node.id}(2)")
        raise ValueError(f"unknown name {node.id!r}; allowed constants: {', '.join(_CONSTANTS)}")
    if isinstance(node, ast.Call):
        return _call(node, depth, table)
    raise ValueError(f"{_node_text(node)} is not allowed in an arithmetic expression")


def _binary_chain(node: ast.BinOp, depth: int, table: Mapping[str, Callable[..., Any]]) -> Number:
    """Evaluate a left-leaning chain like `1 + 2 + ... + 500` iteratively.

    Such a chain is one level of nesting for a person (a long sum) but hundreds of levels in the AST;
    walking it without recursion keeps long sums legal while the depth limit still bounds real nesting.
    """
    chain: list[ast.BinOp] = []
    current: ast.AST = node
    while isinstance(current, ast.BinOp):
        chain.append(current)
        current = current.left
    value = _eval(current, depth + 1, table)
    for link in reversed(chain):
        op = _BINARY.get(type(link.op))
        if op is None:
            hint = " (use ** for powers)" if isinstance(link.op, ast.BitXor) else ""
            raise ValueError(f"operator {_op_text(link.op)} is not allowed{hint}")
        right = _eval(link.right, depth + 1, table)
        if isinstance(link.op, ast.Pow):
            _check_power(value, right)
        value = _checked(_apply(op, value, right, label=f"{_short(value)} {_op_text(link.op)} {_short(right)}"))
    return value


def _call(node: ast.Call, depth: int, table: Mapping[str, Callable[..., Any]]) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in table:
        name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise ValueError(f"function {name!r} is not allowed; allowed functions: {', '.join(table)}")
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise ValueError(f"{node.func.id}() takes plain positional arguments only")
    args = [_eval(a, depth + 1, table) for a in node.args]
    name = node.func.id
    if name == "round" and len(args) == 2:
        _check_round(args[1])
    label = f"{name}({', '.join(_short(a) for a in args)})"
    result = _apply(table[name], *args, label=label)
    if isinstance(result, bool) or not isinstance(result, int | float):  # a caller's function may return anything
        raise ValueError(f"{label} returned {type(result).__name__}, not a number")
    return _checked(result)


def _apply(fn: Callable[..., Any], *args: Any, label: str) -> Any:
    try:
        return fn(*args)
    except ZeroDivisionError:
        raise ZeroDivisionError(f"division by zero in {label}") from None
    except OverflowError:
        raise ValueError(f"{label}: result too large") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label}: {exc}") from None


def _check_power(base: Number, exponent: Number) -> None:
    """Refuse integer powers whose result would be enormous before Python spends time computing them."""
    if not (isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1):
        return
    if (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
        raise ValueError(f"{_short(base)} ** {_short(exponent)} is too large (results are limited to {MAX_INT_BITS} bits)")


def _check_round(ndigits: Number) -> None:
    """round(x, n) computes 10 ** -n for a negative n: refuse an n that would take seconds to minutes."""
    if not isinstance(ndigits, int):
        raise ValueError("round(x, ndigits): ndigits must be an integer")
    if abs(ndigits) > MAX_ROUND_DIGITS:
        raise ValueError(f"round(x, ndigits): ndigits must be between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}")


def _short(value: Number) -> str:
    if isinstance(value, int) and value.bit_length() > 64:
        return f"<{value.bit_length()}-bit integer>"
    return repr(value)


def _checked(value: Any) -> Number:
    if isinstance(value, complex):
        raise ValueError("the result is a complex number; only real arithmetic is supported")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ValueError(f"result too large (integers are limited to {MAX_INT_BITS} bits)")
    return value


def _op_text(op: ast.AST) -> str:
    return _SYMBOLS.get(type(op), type(op).__name__)


def _node_text(node: ast.AST) -> str:
    try:
        return repr(ast.unparse(node))
    except Exception:  # unparse can fail on odd nodes; the type name is enough then
        return type(node).__name__
