"""What the model sees of a program: output capped with a visible marker, control characters escaped."""

from __future__ import annotations

from toolmode.textsafe import escape_control

__all__ = ["cap_output", "escape_control", "format_error", "truncation_marker"]

MAX_ERROR_CHARS = 2000
NEAR_CHARS = 30  # characters of the source quoted from a syntax error's column


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


def format_error(code: str, line: int | None, exc_type: str, message: str, column: int | None = None) -> str:
    """`Error at line N: <source line>` then `<Type>: <message>` (message capped, control chars escaped). With a
    `column` (a SyntaxError's offset, 1-based): `Error at line N, column C: ...`, and the message names the text
    from that column, so a long one-line program's error says where and what (issue 18, hybrid shortest_caesar)."""
    if len(message) > MAX_ERROR_CHARS:
        message = message[:MAX_ERROR_CHARS] + f"... [{len(message) - MAX_ERROR_CHARS:,} more characters]"
    lines = code.splitlines()
    source = lines[line - 1] if line is not None and 1 <= line <= len(lines) else None
    where = f"line {line}"
    if source is not None and column is not None and 1 <= column <= len(source) + 1:
        where += f", column {column}"
        at = source[column - 1:column - 1 + NEAR_CHARS].rstrip()
        if at:
            message = f"{message} at {at!r}" + ("..." if len(source) - column + 1 > NEAR_CHARS else "")
    summary = escape_control(f"{exc_type}: {message}" if message else exc_type)
    if source is not None:
        return f"Error at {where}: {escape_control(source.strip())}\n{summary}"
    return f"Error: {summary}"
