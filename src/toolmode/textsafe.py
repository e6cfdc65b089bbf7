"""Text made safe to show: control and format characters escaped (for the model and for the terminal).

`escape_control` is used for program output sent to the model (`sandbox/output.py`) and for every console
line (`console.py`); `encodable` / `encodable_json` make text that must be written as UTF-8 (a request body,
a trace line) writable. A module of its own, with no imports beyond `re` and `unicodedata`, so the CLI can
use it cheaply.

Lone surrogates come from undecodable bytes (a Latin-1 file name, a Latin-1 argv: Python keeps each bad
byte as U+DC80..U+DCFF, "surrogateescape"); everywhere they are shown as the byte they stand for, `\\xe9`,
and any other lone surrogate as `\\ud800`.
"""

from __future__ import annotations

import re
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
        elif 0xD800 <= c <= 0xDFFF:
            out = _surrogate_text(ch)
        elif c <= 0xFFFF:
            out = f"\\u{c:04x}"
        else:
            out = f"\\U{c:08x}"
        if len(self) < 65536:  # bounded: the table only ever holds characters actually seen
            self[c] = out
        return out


_ESCAPES = _EscapeTable()
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_text(ch: str) -> str:
    """A lone surrogate as text: `\\xNN` for a byte kept by surrogateescape, else `\\uXXXX`."""
    c = ord(ch)
    return f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"\\u{c:04x}"


def encodable(text: str) -> str:
    """`text` with every lone surrogate written out as an escape (see the module docstring), so that it
    encodes as UTF-8; text without one is returned as it is."""
    return _LONE_SURROGATE.sub(lambda m: _surrogate_text(m.group()), text)


def encodable_json(text: str) -> str:
    """`encodable` for JSON text made with `ensure_ascii=False`: a lone surrogate can only sit inside a
    string there, so it becomes the same escape with its backslash doubled (the decoded string reads
    `\\xe9`, as `encodable` writes it)."""
    return _LONE_SURROGATE.sub(lambda m: "\\" + _surrogate_text(m.group()), text)


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
