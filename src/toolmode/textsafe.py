"""Text made safe to show: control and format characters escaped (for the model and for the terminal).

One function, used for program output sent to the model (`sandbox/output.py`) and for every console line
(`console.py`); a module of its own, with no imports beyond `unicodedata`, so the CLI can use it cheaply.
"""

from __future__ import annotations

import unicodedata

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


def needs_escape(ch: str) -> bool:
    """Whether `escape_control` escapes the character `ch` (a control, format, surrogate or separator)."""
    return ch not in "\t\n" and unicodedata.category(ch) in _ESCAPED_CATEGORIES


def escape_control(text: str) -> str:
    """Escape what can hide or reorder text: C0/C1 controls and DEL (terminal escapes, carriage returns),
    Unicode format characters (bidi overrides such as U+202E, isolates U+2066..2069, zero-width ones),
    line/paragraph separators (U+2028/2029) and lone surrogates (so the text is always valid UTF-8).
    Keeps \\n and \\t."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_ESCAPES)
