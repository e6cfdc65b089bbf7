"""Reading JSONL files that a model may have filled: bounded line reads from either end, and safe decoding.

A trace's first line says what the run was and its last line how it ended, so the list of runs reads only
those: the head from the start, the tail by seeking back from the end in growing chunks. Every read is
bounded (`MAX_LINE`), so a planted multi-gigabyte line costs at most that much.

`decode` never raises: bytes that are not UTF-8 become U+FFFD (and say so), `NaN`/`Infinity` (which Python
accepts and a browser's `JSON.parse` does not) and nesting past `toolmode.bounded`'s limit make the line
unreadable, like any other line that is not JSON.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from toolmode.bounded import check_depth

MAX_LINE = 16 * 1024 * 1024  # bytes read for one line at most; a 1 MB answer fits many times over
_CHUNK = 64 * 1024
SESSION_SCAN = 512 * 1024  # files up to this size are scanned for the turns of a chat session
_RUN_START = re.compile(rb'^\{"kind": ?"run_start"', re.MULTILINE)
_RUN_END = re.compile(rb'^\{"kind": ?"run_end".*$', re.MULTILINE)


@dataclass
class Decoded:
    """One decoded line: the value (None when the line is not JSON), and whether bytes were replaced."""

    value: Any
    replaced: bool = False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(raw: bytes) -> Decoded:
    """The JSON value on one line (None if it is not JSON); invalid UTF-8 is replaced, never an error."""
    try:
        text = raw.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        replaced = True
    try:
        value = json.loads(text, parse_constant=_no_constant)
        check_depth(value)  # the bound every host-side parse keeps (toolmode.bounded)
    except (ValueError, RecursionError):  # ParseLimitError is a ValueError
        return Decoded(None, replaced)
    return Decoded(value, replaced)


def head_lines(fd: int, count: int, limit: int = MAX_LINE) -> list[bytes]:
    """The first `count` lines of the file (without their newlines), reading at most `count * limit` bytes.

    A line longer than `limit` comes back cut at `limit` (it will not decode); a last line without a
    newline comes back as it is.
    """
    lines: list[bytes] = []
    pending = b""
    offset = 0
    while len(lines) < count:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            if pending:
                lines.append(pending)
            break
        offset += len(chunk)
        pending += chunk
        while len(lines) < count and (cut := pending.find(b"\n")) >= 0:
            lines.append(pending[:cut])
            pending = pending[cut + 1 :]
        if len(pending) > limit:
            lines.append(pending[:limit])
            break
    return lines


def tail_lines(fd: int, size: int, count: int, limit: int = MAX_LINE) -> tuple[list[bytes], bool]:
    """The last `count` lines of a file of `size` bytes, oldest first, and whether the file ends in a newline.

    Reads back from the end in growing chunks until `count` whole lines are in hand (or the file's start);
    gives up on lines longer than `limit` (what was read of them is not returned).
    """
    if size <= 0:
        return [], True
    ends_with_newline = os.pread(fd, 1, size - 1) == b"\n"
    end = size - 1 if ends_with_newline else size  # the last line's own newline is not a separator
    buf = b""
    start = end
    step = _CHUNK
    while True:
        begin = max(0, start - step)
        buf = os.pread(fd, start - begin, begin) + buf
        start = begin
        pieces = buf.split(b"\n")
        whole = pieces[1:] if start > 0 else pieces  # the first piece may be the end of an earlier line
        if len(whole) >= count or start == 0:
            return whole[-count:], ends_with_newline
        if len(buf) > limit * count:
            return whole[-count:], ends_with_newline
        step = min(step * 2, 8 * 1024 * 1024)


def session_ends(fd: int, size: int) -> tuple[int | None, list[bytes]]:
    """How many runs a trace holds (a chat session writes one per turn) and the `run_end` lines of a session.

    Found by matching the writer's line starts, without decoding JSON; None for a file over SESSION_SCAN bytes
    (its list row then shows its first turn's task and its last turn's figures).
    """
    if size > SESSION_SCAN:
        return None, []
    data = os.pread(fd, size, 0)
    starts = data.count(b'\n{"kind": "run_start"') + data.startswith(b'{"kind": "run_start"')  # memchr speed
    if starts == 0:
        starts = len(_RUN_START.findall(data))  # another writer's spacing: look again, more slowly
    return starts, (_RUN_END.findall(data) if starts > 1 else [])
