"""Read JSON the way small models write it: strict JSON first, then Python literal syntax through `ast`.

Seen from Qwen2.5-Coder 0.5B/1.5B: `{"code": ''' ...python... '''}` (triple quotes), single quotes,
trailing commas, `True`/`None`, raw newlines inside strings. Nothing is ever evaluated: the `ast` tree
is walked and only literals (strings, numbers, booleans, null, lists, dicts) are accepted.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from toolmode.bounded import ParseLimitError, loads_json
from toolmode.errors import ToolmodeError

MAX_TEXT = 200_000  # a reply longer than this is not a call worth parsing
_MAX_DEPTH = 60
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")  # lines as Python's tokenizer counts them
_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class LenientError(ToolmodeError, ValueError):
    """The text is neither JSON nor a Python literal; the message says why in one line."""


def loads_lenient(text: str) -> Any:
    """Parse `text` as JSON (control characters allowed in strings), else as a Python literal.

    Triple-quoted strings keep their text as written (backslashes included): a model that puts a
    program in triple quotes means the program's own source, where `'\\n'` must stay two characters.
    """
    if len(text) > MAX_TEXT:
        raise LenientError(f"too long to be a call ({len(text):,} characters)")
    try:
        return loads_json(text, strict=False, max_chars=MAX_TEXT, max_depth=_MAX_DEPTH)
    except ParseLimitError as exc:
        raise LenientError(exc.msg) from None
    except json.JSONDecodeError as exc:
        first = f"{exc.msg} at position {exc.pos}"
    for source in _balanced(text.strip()):
        try:
            tree = ast.parse(source, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        try:
            return _literal(tree.body, Segments(source), 0)
        except RecursionError:
            raise LenientError("nested too deeply") from None
    raise LenientError(f"not valid JSON ({first})")


def _balanced(source: str, most: int = 2) -> list[str]:
    """The text, then with up to `most` surplus closing braces dropped (small models miscount them after a
    long string: `{"arguments": {"code": "..."}}}`). Missing ones are not added: the text may have been cut."""
    out = [source]
    if source.startswith("{"):
        trimmed = source
        for _ in range(most):
            if not trimmed.endswith("}"):
                break
            trimmed = trimmed[:-1].rstrip()
            out.append(trimmed)
    return out


class Segments:
    """`ast.get_source_segment` for many nodes of one source, in time linear in the source.

    (`ast.get_source_segment` splits the whole source into lines on every call: quadratic for a literal
    of many strings, e.g. 200 KB of `',',',',...`.) Lines are split once and encoded once each.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._lines = _LINE.findall(source)
        self._encoded: dict[int, bytes] = {}

    def _line(self, number: int) -> bytes:
        if number not in self._encoded:
            self._encoded[number] = self._lines[number - 1].encode() if 0 < number <= len(self._lines) else b""
        return self._encoded[number]

    def of(self, node: ast.AST) -> str | None:
        """The source text of `node` (offsets count UTF-8 bytes, as in `ast`), or None without positions."""
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        if line is None or col is None or end_line is None or end_col is None:
            return None
        if line == end_line:
            return self._line(line)[col:end_col].decode(errors="replace")
        parts = [self._line(line)[col:]] + [self._line(n) for n in range(line + 1, end_line)]
        parts.append(self._line(end_line)[:end_col])
        return b"".join(parts).decode(errors="replace")


def _literal(node: ast.AST, source: Segments, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise LenientError("nested too deeply")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return _string(node, source)
        if node.value is None or isinstance(node.value, bool | int | float):
            return node.value
        raise LenientError(f"{type(node.value).__name__} is not a JSON value")
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise LenientError("`**` is not allowed in a literal")
            k = _literal(key, source, depth + 1)
            if not isinstance(k, str):
                raise LenientError(f"object keys must be strings, got {k!r}")
            out[k] = _literal(value, source, depth + 1)
        return out
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, source, depth + 1) for e in node.elts]
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd)
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)):
        number: Any = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    raise LenientError(f"not a literal value: {type(node).__name__}")


def _string(node: ast.Constant, source: Segments) -> str:
    """The string's value; for a single triple-quoted piece, its text exactly as written."""
    segment = source.of(node) or ""
    for quote in ('"""', "'''"):
        if len(segment) >= 6 and segment.startswith(quote) and segment.endswith(quote):
            inner = segment[3:-3]
            if quote not in inner:  # one piece, not implicit concatenation of several
                return inner
    return str(node.value)
