"""The field readers the viewer's list and run pages share: a trace's values taken as the types they should be."""

from __future__ import annotations

import json
import math
from typing import Any


def text(value: Any) -> str | None:
    """A string field: the string itself, None for null/missing, the JSON text of anything else."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "(a value too deeply nested to show)"


def number(value: Any) -> float | int | None:
    """A numeric field when it is a finite int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def pretty(value: Any) -> str:
    """Indented JSON text of a decoded value (its compact form if nesting is too deep to indent)."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except RecursionError:
        return text(value) or ""


def usage(value: Any) -> dict[str, float | int | None]:
    """Token counts of a `usage` field (each None unless a finite number)."""
    found = value if isinstance(value, dict) else {}
    return {key: number(found.get(key)) for key in ("prompt_tokens", "completion_tokens", "cached_tokens",
                                                       "reasoning_tokens")}
