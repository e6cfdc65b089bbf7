"""Frames between host and worker: a 4-byte big-endian length, then an ASCII JSON object. Never pickle.

Stdlib only: also loaded by the bare worker interpreter, where start-up time counts: no `typing`, and the
JSON is written and read with the C functions of `_json` that the `json` package itself uses (same
output, same parser), so the worker never imports `json` and `re`. The channel needs only the methods of
`_socket.socket`, the base of `socket.socket`.
"""

from __future__ import annotations

import _socket
import struct
import time

try:
    from _json import encode_basestring_ascii as _ascii_string
    from _json import make_encoder as _make_encoder
    from _json import make_scanner as _make_scanner
except ImportError:  # an interpreter without the C accelerator
    _make_encoder = _make_scanner = None  # type: ignore[assignment,misc]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The peer broke the framing (oversized frame, not JSON, not an object) or closed the channel."""


class ChannelClosed(ProtocolError):
    """End of stream."""


class FrameTimeout(ProtocolError):
    """The deadline passed while waiting for or sending a frame."""


def _not_serializable(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class _ScanContext:
    """The settings `_json.make_scanner` reads from a `json.JSONDecoder` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self) -> None:
        self.parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


_scan = _make_scanner(_ScanContext()) if _make_scanner is not None else None  # type: ignore[arg-type]  # duck-typed
_WHITESPACE = " \t\n\r"


def _dumps(obj: Any, default: Callable[[Any], Any] | None) -> str:
    """json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=default), for a dict or list."""
    if _make_encoder is None:
        import json

        return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=default)
    encoder = _make_encoder({}, default or _not_serializable, _ascii_string, None, ":", ",", False, False, True)
    return "".join(encoder(obj, 0))


def _loads(text: str) -> Any:
    """json.loads(text): one JSON value, optionally surrounded by whitespace; ValueError otherwise."""
    if _scan is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return obj


def encode(obj: dict[str, Any], default: Callable[[Any], Any] | None = None) -> bytes:
    """One frame for `obj` (`default` converts what JSON cannot encode, as in json.dumps).

    Pure ASCII (`ensure_ascii`): lone surrogates (an undecodable file name, `print("\\ud800")`) travel as
    `\\udXXX` escapes instead of making the frame invalid UTF-8.
    """
    body = _dumps(obj, default).encode("ascii")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    """Parse a frame body; anything but a JSON object raises ProtocolError."""
    try:
        obj = _loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ProtocolError(f"frame is not valid UTF-8 JSON: {str(exc)[:200]}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"frame is a JSON {type(obj).__name__}, not an object")
    return obj


class Channel:
    """Frame I/O on a connected stream socket, with an optional absolute deadline (time.monotonic())."""

    def __init__(self, sock: _socket.socket, max_in: int) -> None:
        self.sock = sock
        self.max_in = max_in
        self._buf = bytearray()

    def _remaining(self, deadline: float | None) -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise FrameTimeout("deadline passed")
        return left

    def _fill(self, n: int, deadline: float | None) -> None:
        """Read until the buffer holds `n` bytes. A FrameTimeout keeps what was read: recv() can resume."""
        while len(self._buf) < n:
            self.sock.settimeout(self._remaining(deadline))
            try:
                chunk = self.sock.recv(min(n - len(self._buf), 1 << 20))
            except TimeoutError:
                raise FrameTimeout("deadline passed") from None
            except OSError as exc:
                raise ChannelClosed(f"channel error: {exc}") from None
            if not chunk:
                raise ChannelClosed("channel closed")
            self._buf += chunk

    def recv(self, deadline: float | None = None) -> dict[str, Any]:
        """The next frame; ProtocolError if it is larger than `max_in` or not a JSON object.

        On FrameTimeout nothing is lost: a partly received frame stays buffered for the next call.
        """
        self._fill(HEADER.size, deadline)
        (size,) = HEADER.unpack_from(self._buf)
        if size > self.max_in:
            raise ProtocolError(f"frame of {size:,} bytes exceeds the {self.max_in:,}-byte limit")
        self._fill(HEADER.size + size, deadline)
        body = bytes(self._buf[HEADER.size:])
        self._buf = bytearray()
        return decode(body)

    def pending(self) -> bool:
        """True when bytes are waiting: buffered, or readable on the socket (never blocks)."""
        if self._buf:
            return True
        try:
            self.sock.settimeout(0)  # with a timeout set, Python would wait for readability first
            return bool(self.sock.recv(1, _socket.MSG_PEEK))  # b"" (EOF) counts as nothing pending
        except OSError:  # BlockingIOError: nothing there
            return False

    def send(self, obj: dict[str, Any], deadline: float | None = None,
             default: Callable[[Any], Any] | None = None) -> None:
        """Send one frame (FrameTimeout if the peer does not read it before the deadline)."""
        self.send_bytes(encode(obj, default), deadline)

    def send_bytes(self, data: bytes, deadline: float | None = None) -> None:
        """Send an already encoded frame."""
        self.sock.settimeout(self._remaining(deadline))
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise FrameTimeout("deadline passed while sending") from None
        except OSError as exc:
            raise ChannelClosed(f"channel error: {exc}") from None
