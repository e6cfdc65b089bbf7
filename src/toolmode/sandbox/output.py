"""What the model sees of a program: output capped with a visible marker, control characters escaped."""

from __future__ import annotations

import unicodedata

MAX_ERROR_CHARS = 2000
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # controls, format (bidi, zero-width), surrogates, separators


class _EscapeTable(dict[int, str]):
    """str.translate table built on demand: each code point is classified once, then looked up."""

    def __missing__(self, c: int) -> str:
        ch = chr(c)
        if c in (0x09, 0x0A) or unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
            out = ch
        elif c == 0x0D:
            out = "\\r"
        elif c <= 0xFF:
            out = f"\\x{c:02x}"
        elif c <= 0xFFFF:
            out = f"\\u{c:04x}"
        else:
            out = f"\\U{c:08x}"
        if len(self) < 65536:  # bounded: the table only ever holds characters actually seen
            self[c] = out
        return out


_ESCAPES = _EscapeTable()


def escape_control(text: str) -> str:
    """Escape what can hide or reorder text: C0/C1 controls and DEL (terminal escapes, carriage returns),
    Unicode format characters (bidi overrides such as U+202E, isolates U+2066..2069, zero-width ones),
    line/paragraph separators (U+2028/2029) and lone surrogates (so the text is always valid UTF-8).
    Keeps \\n and \\t."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_ESCAPES)


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
