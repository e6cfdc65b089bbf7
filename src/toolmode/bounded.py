"""JSON from the model or the web, parsed within bounds of size and nesting.

`json.loads` is linear in its input, but unbounded text costs unbounded memory and time, deep nesting
raises RecursionError (not a JSONDecodeError: callers that catch only the latter crash), a number of
more than 4,300 digits raises a plain ValueError, and a deeply nested value breaks whatever walks it
next (the trace's `json.dumps`, schema validation). `loads_json` turns all of these into one error,
`ParseLimitError`, a `json.JSONDecodeError`, so code that already handles bad JSON handles them too.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_CHARS = 8_000_000  # far more than any tool call's arguments or a tool's result
MAX_JSON_DEPTH = 100  # objects and arrays inside one another
# Built once: `json.loads(text, strict=...)` builds a new decoder (and its scanner) on every call, which cost
# more than parsing a tool call's arguments.
_DECODERS = {True: json.JSONDecoder(), False: json.JSONDecoder(strict=False)}


class ParseLimitError(json.JSONDecodeError):
    """The text is over a bound (size, nesting, digits); `msg` says which, in a few words."""

    def __init__(self, msg: str, doc: str, pos: int = 0) -> None:
        super().__init__(msg, doc[:200], min(pos, 200))
        self.msg = msg

    def __str__(self) -> str:
        return self.msg


def loads_json(text: str | bytes, *, max_chars: int = MAX_JSON_CHARS, max_depth: int = MAX_JSON_DEPTH,
               strict: bool = True) -> Any:  # fmt: skip
    """`json.loads(text)` within bounds: ParseLimitError past `max_chars` characters or `max_depth` levels.

    Raises `json.JSONDecodeError` for text that is not JSON, as `json.loads` does (ParseLimitError is one).
    """
    if isinstance(text, bytes | bytearray):
        if len(text) > max_chars * 4:
            raise ParseLimitError(f"too large to parse ({len(text):,} bytes; at most {max_chars:,} characters)", "")
        text = text.decode("utf-8", errors="replace")
    if len(text) > max_chars:
        raise ParseLimitError(f"too large to parse ({len(text):,} characters; at most {max_chars:,})", text)
    try:
        value = _DECODERS[strict].decode(text)
    except RecursionError:
        raise ParseLimitError(f"nested more than {max_depth} levels deep", text) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise ParseLimitError(f"not parsed: {exc}", text) from None
    check_depth(value, max_depth, text)
    return value


def check_depth(value: Any, max_depth: int = MAX_JSON_DEPTH, doc: str = "") -> None:
    """ParseLimitError when lists and dicts in `value` nest more than `max_depth` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise ParseLimitError(f"nested more than {max_depth} levels deep", doc)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
