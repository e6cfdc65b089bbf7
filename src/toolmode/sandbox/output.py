"""What the model sees of a program: output capped with a visible marker, control characters escaped."""

from __future__ import annotations

from toolmode.textsafe import escape_control

__all__ = ["cap_output", "escape_control", "format_error", "truncation_marker"]

MAX_ERROR_CHARS = 2000


def truncation_marker(more: int) -> str:
    """The line appended to cut output."""
    return f"... [output truncated: {more:,} more characters; print a summary instead of raw data]"


def cap_output(text: str, max_output: int, dropped: int = 0) -> tuple[str, bool]:
    """Keep the first `max_output` characters; `dropped` = characters the worker already discarded."""
    more = max(0, len(text) - max_output) + max(0, dropped)
    text = escape_control(text[:max_output])
    if more:
        sep = "" if text.endswith("\n") or not text else "\n"
        return f"{text}{sep}{truncation_marker(more)}", True
    return text, False


def format_error(code: str, line: int | None, exc_type: str, message: str) -> str:
    """`Error at line N: <source line>` then `<Type>: <message>` (message capped, control chars escaped)."""
    if len(message) > MAX_ERROR_CHARS:
        message = message[:MAX_ERROR_CHARS] + f"... [{len(message) - MAX_ERROR_CHARS:,} more characters]"
    summary = escape_control(f"{exc_type}: {message}" if message else exc_type)
    lines = code.splitlines()
    if line is not None and 1 <= line <= len(lines):
        return f"Error at line {line}: {escape_control(lines[line - 1].strip())}\n{summary}"
    return f"Error: {summary}"
