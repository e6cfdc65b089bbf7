"""Frames between host and worker: a 4-byte big-endian length, then an ASCII JSON object. Never pickle.

Stdlib only: also loaded by the bare worker interpreter, which imports neither `socket` nor `typing`
(start-up time): the channel needs only the methods of `_socket.socket`, the base of `socket.socket`.
"""

from __future__ import annotations

import _socket
import json
import struct
import time

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


def encode(obj: dict[str, Any], default: Callable[[Any], Any] | None = None) -> bytes:
    """One frame for `obj` (`default` converts what JSON cannot encode, as in json.dumps).

    Pure ASCII (`ensure_ascii`): lone surrogates (an undecodable file name, `print("\\ud800")`) travel as
    `\\udXXX` escapes instead of making the frame invalid UTF-8.
    """
    body = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=default).encode("ascii")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    """Parse a frame body; anything but a JSON object raises ProtocolError."""
    try:
        obj = json.loads(body.decode("utf-8"))
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
