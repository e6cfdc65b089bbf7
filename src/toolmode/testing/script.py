"""Script items for the scripted model server: what to answer, one item per request.

Items are plain JSON-able dicts (so a script can live in a JSON file); the helpers `reply`, `call`,
`calls` and `fault` build them. `parse_item` turns a dict into a checked, immutable spec, and `Script`
hands out one spec per request, from a list or from a callable.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]
ScriptFn = Callable[[dict[str, Any], int], "Item | str | None"]

FAULT_KINDS = ("429", "500", "slow", "cut_stream", "bad_body", "status", "keepalive", "trickle", "stall")
_REPLY_KEYS = {"content", "tool_calls", "reasoning_content", "finish_reason", "usage"}
_FAULT_KEYS = {
    "429": {"retry_after", "message"},
    "500": {"message"},
    "slow": {"delay", "then"},
    "cut_stream": {"then"},
    "bad_body": {"body", "content_type"},
    "status": {"status", "message", "type", "code"},
    "keepalive": {"interval"},
    "trickle": {"interval", "then"},
    "stall": {"interval", "then"},
}


class ScriptError(ValueError):
    """A script item is malformed, the script ran out, or a script callable failed."""


def reply(content: str | None, reasoning: str | None = None, usage: dict[str, Any] | None = None) -> Item:
    """A plain assistant reply, optionally with `reasoning_content` (as DeepSeek's reasoner sends).

    `usage` is merged over the counted usage, e.g. `{"cost": 0.0012}` as OpenRouter reports it.
    """
    item: Item = {"content": content}
    if reasoning is not None:
        item["reasoning_content"] = reasoning
    if usage is not None:
        item["usage"] = usage
    return item


def call(name: str, /, **arguments: Any) -> Item:
    """A reply holding one tool call `name(**arguments)` and no content."""
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


def calls(*pairs: tuple[str, dict[str, Any] | str]) -> Item:
    """A reply holding parallel tool calls, one per `(name, arguments)` pair.

    `arguments` is a dict (sent as JSON) or a str sent verbatim, e.g. to inject invalid JSON.
    """
    return {"content": None, "tool_calls": [{"name": name, "arguments": args} for name, args in pairs]}


def fault(kind: str, /, **params: Any) -> Item:
    """A fault item: `"429"` (retry_after), `"500"`, `"slow"` (delay, then), `"cut_stream"` (then),
    `"bad_body"` (body, content_type), `"status"` (status, message, type, code), or one of the faults
    that hold a connection open: `"keepalive"` (a 200 that never ends: an SSE `: ping` comment, or a space
    of a JSON body, every `interval` seconds), `"trickle"` (the `then` reply one byte every `interval`
    seconds) and `"stall"` (the first half of the `then` reply, then nothing, or a `: ping` comment every
    `interval` seconds when it is set, until the client leaves).

    Each fault consumes one script item; a retrying client gets the next item on its retry.
    """
    item: Item = {"fault": kind, **params}
    parse_item(item)  # fail at the call site, not when the request arrives
    return item


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call; `arguments` is the exact string sent on the wire."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True)
class ReplySpec:
    """An assistant message to send back."""

    content: str | None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = field(default=None, hash=False, compare=False)  # merged over the counted usage

    @property
    def finish(self) -> str:
        """The finish reason to report: the given one, else `tool_calls` or `stop`."""
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True)
class FaultSpec:
    """A misbehaviour to inject instead of (or before) a reply."""

    kind: str
    retry_after: float = 1.0
    delay: float = 1.0
    then: ReplySpec | None = None
    status: int = 500
    message: str | None = None
    type: str | None = None
    code: str | None = None
    body: str = "this is not JSON {"
    content_type: str = "application/json"
    interval: float = 0.0  # keepalive / trickle: seconds between pieces; stall: between pings (0: silent)


Spec = ReplySpec | FaultSpec
_DEFAULT_INTERVAL = {"keepalive": 0.2, "trickle": 0.01}


def parse_item(item: Any) -> Spec:
    """Check one script item and turn it into a spec. A bare string is a plain reply."""
    if isinstance(item, str):
        return ReplySpec(content=item)
    if not isinstance(item, dict):
        raise ScriptError(f"script item must be a dict or a str, got {type(item).__name__}: {item!r}")
    if "fault" in item:
        return _parse_fault(item)
    unknown = set(item) - _REPLY_KEYS
    if unknown:
        raise ScriptError(f"unknown keys {sorted(unknown)} in script item {item!r}")
    content = item.get("content")
    reasoning = item.get("reasoning_content")
    finish = item.get("finish_reason")
    for key, value in (("content", content), ("reasoning_content", reasoning), ("finish_reason", finish)):
        if value is not None and not isinstance(value, str):
            raise ScriptError(f"{key} must be a str or None in script item {item!r}")
    usage = item.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise ScriptError(f"usage must be a dict in script item {item!r}")
    raw_calls = item.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ScriptError(f"tool_calls must be a list in script item {item!r}")
    return ReplySpec(
        content=content,
        tool_calls=tuple(_parse_tool_call(c) for c in raw_calls),
        reasoning=reasoning,
        finish_reason=finish,
        usage=usage,
    )


def _parse_tool_call(raw: Any) -> ToolCallSpec:
    if not isinstance(raw, dict):
        raise ScriptError(f"tool call must be a dict, got {raw!r}")
    # Also accept the wire shape {"id", "type", "function": {"name", "arguments"}}.
    wire = raw.get("function")
    fn: dict[str, Any] = wire if isinstance(wire, dict) else raw
    name, args = fn.get("name"), fn.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise ScriptError(f"tool call needs a non-empty str name: {raw!r}")
    if not isinstance(args, str):
        try:
            args = json.dumps(args, ensure_ascii=False)
        except TypeError as exc:
            raise ScriptError(f"tool call arguments are not JSON-serialisable: {raw!r}") from exc
    call_id = raw.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise ScriptError(f"tool call id must be a str: {raw!r}")
    return ToolCallSpec(name=name, arguments=args, id=call_id)


def _parse_fault(item: dict[str, Any]) -> FaultSpec:
    kind = str(item["fault"])
    if kind not in FAULT_KINDS:
        raise ScriptError(f"unknown fault {kind!r}; expected one of {', '.join(FAULT_KINDS)}")
    unknown = set(item) - {"fault"} - _FAULT_KEYS[kind]
    if unknown:
        raise ScriptError(f"unknown keys {sorted(unknown)} for fault {kind!r}")
    then = item.get("then")
    then_spec = parse_item(then) if then is not None else None
    if isinstance(then_spec, FaultSpec):
        raise ScriptError(f"fault {kind!r}: 'then' must be a reply, not another fault")
    try:
        spec = FaultSpec(
            kind=kind,
            retry_after=float(item.get("retry_after", 1.0)),
            delay=float(item.get("delay", 1.0)),
            then=then_spec,
            status=int(item.get("status", 500)),
            message=item.get("message"),
            type=item.get("type"),
            code=item.get("code"),
            body=str(item.get("body", FaultSpec.body)),
            content_type=str(item.get("content_type", FaultSpec.content_type)),
            interval=float(item.get("interval", _DEFAULT_INTERVAL.get(kind, 0.0))),
        )
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"bad parameter in fault item {item!r}: {exc}") from exc
    if spec.retry_after < 0 or spec.delay < 0 or spec.interval < 0 or not 100 <= spec.status <= 599:
        raise ScriptError(f"out-of-range parameter in fault item {item!r}")
    if kind == "keepalive" and spec.interval <= 0:
        raise ScriptError(f"fault 'keepalive' needs an interval above 0 seconds: {item!r}")
    return spec


class Script:
    """Hands out one spec per request, in order. Thread-safe.

    `items` is a sequence of items (checked now, so a typo fails where the script is written) or a
    callable `(request_body, index) -> item` (index = 0-based request number); the callable returning
    None means the script is over.
    """

    def __init__(self, items: Sequence[Any] | ScriptFn) -> None:
        self._fn: ScriptFn | None = None
        self._specs: list[Spec] = []
        if callable(items):
            self._fn = items
        elif isinstance(items, str | bytes | dict):
            raise ScriptError("script must be a list of items or a callable, not a single item")
        else:
            self._specs = [parse_item(item) for item in items]
        self._taken = 0
        self._lock = threading.Lock()

    @property
    def taken(self) -> int:
        """How many items have been handed out (for a callable: how many times it was called)."""
        return self._taken

    def take(self, request: dict[str, Any]) -> Spec:
        """The spec for the next request; raises `ScriptError` if the script is over or broken."""
        with self._lock:
            index = self._taken
            if self._fn is None:
                if index >= len(self._specs):
                    raise ScriptError(f"script exhausted after {index} replies")
                self._taken += 1
                return self._specs[index]
            self._taken += 1  # a callable sees every request's index, even after it failed or ended
            try:
                item = self._fn(request, index)
            except Exception as exc:
                raise ScriptError(f"script callable raised {type(exc).__name__}: {exc}") from exc
            if item is None:
                raise ScriptError(
                    f"script exhausted after {index} replies (the script callable returned None)"
                )
            return parse_item(item)
