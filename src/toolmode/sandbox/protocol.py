"""Frames between host and worker: a 4-byte big-endian length, then a UTF-8 JSON object. Never pickle.

Stdlib only: also loaded by the bare worker interpreter.
"""

from __future__ import annotations

import json
import socket
import struct
import time
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
    """One frame for `obj` (`default` converts what JSON cannot encode, as in json.dumps)."""
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=default).encode("utf-8", "surrogatepass")
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

    def __init__(self, sock: socket.socket, max_in: int) -> None:
        self.sock = sock
        self.max_in = max_in

    def _remaining(self, deadline: float | None) -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise FrameTimeout("deadline passed")
        return left

    def _recv_exact(self, n: int, deadline: float | None) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            self.sock.settimeout(self._remaining(deadline))
            try:
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except TimeoutError:
                raise FrameTimeout("deadline passed") from None
            except OSError as exc:
                raise ChannelClosed(f"channel error: {exc}") from None
            if not chunk:
                raise ChannelClosed("channel closed")
            buf += chunk
        return bytes(buf)

    def recv(self, deadline: float | None = None) -> dict[str, Any]:
        """The next frame; ProtocolError if it is larger than `max_in` or not a JSON object."""
        (size,) = HEADER.unpack(self._recv_exact(HEADER.size, deadline))
        if size > self.max_in:
            raise ProtocolError(f"frame of {size:,} bytes exceeds the {self.max_in:,}-byte limit")
        return decode(self._recv_exact(size, deadline))

    def send(self, obj: dict[str, Any], deadline: float | None = None,
             default: Callable[[Any], Any] | None = None) -> None:
        """Send one frame (FrameTimeout if the peer does not read it before the deadline)."""
        data = encode(obj, default)
        self.sock.settimeout(self._remaining(deadline))
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise FrameTimeout("deadline passed while sending") from None
        except OSError as exc:
            raise ChannelClosed(f"channel error: {exc}") from None
