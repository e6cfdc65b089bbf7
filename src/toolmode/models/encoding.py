"""Request bodies encoded once per part: the conversation only grows, so earlier messages keep their JSON.

An agent resends the whole conversation and every tool schema on each step. Encoding those from scratch
was the largest single cost of a step on our side (about 0.6 ms at 50 tools); reusing the encoding of the
unchanged prefix makes each step pay only for what is new.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from toolmode.textsafe import encodable_json


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RequestEncoder:
    """Encodes chat-completions bodies, reusing the JSON of messages and tool lists seen before.

    Messages are matched by identity, so a message must not be changed after it was sent (the loop never
    does). A tool list is reused when the very same list object comes again (modes cache theirs).
    """

    def __init__(self) -> None:
        self._messages: list[tuple[dict[str, Any], str]] = []
        self._tools: tuple[Sequence[dict[str, Any]], str] | None = None
        self._lock = threading.Lock()

    def encode(self, head: dict[str, Any], messages: Sequence[dict[str, Any]],
               tools: Sequence[dict[str, Any]]) -> bytes:
        """The body `{**head, "messages": messages, "tools": tools}` as UTF-8 JSON (no "tools" key when empty).

        Text that cannot be UTF-8 (a lone surrogate: an undecodable file name or argv) is sent escaped, `\\xe9`.
        """
        with self._lock:
            cache = self._messages
            same = 0
            while same < len(cache) and same < len(messages) and cache[same][0] is messages[same]:
                same += 1
            del cache[same:]
            cache.extend((m, _dumps(m)) for m in messages[same:])
            opening = _dumps(head)[:-1] + ("," if head else "")  # '{"model":"x",' without its closing brace
            parts = [opening, '"messages":[', ",".join(text for _, text in cache), "]"]
            if tools:
                if self._tools is None or self._tools[0] is not tools:
                    self._tools = (tools, _dumps(list(tools)))
                parts += [',"tools":', self._tools[1]]
            parts.append("}")
        body = "".join(parts)
        try:
            return body.encode("utf-8")
        except UnicodeEncodeError:
            return encodable_json(body).encode("utf-8")
