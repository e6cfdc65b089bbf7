"""Scripted players: deterministic stand-ins for a model, used to test the harness end to end.

A player is a generator written the way a model would work in one style ("react", "code", "hybrid"):
it yields a `Call`, a list of calls (parallel), or a `Code` program, receives the text the tools
returned, and finally returns the answer. It sees nothing but the request: the prompt, the tools offered
and the tool results, so a broken tool, mode or harness makes it fail.

`script_for(players, failing)` turns players into a `ScriptedModelServer` callable. The server calls it
once per request with the full conversation; the generator is replayed from the start, fed the recorded
results, and its next move becomes the reply. Tool search is handled here, by looking at what the request
offers: a tool not offered is found with `search_tools` first (react `load`), called through `call_tool`
(react `proxy`), or fetched as a handle inside the program (code modes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from toolmode.errors import ToolmodeError

Style = str  # "react" | "code" | "hybrid"


@dataclass(frozen=True)
class Call:
    """One tool call the player wants to make."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Code:
    """A `run_code` program; `uses` names the tools it calls (looked up through search when hidden)."""

    program: str
    uses: tuple[str, ...] = ()


Move = Call | list[Call] | Code
PlayerGen = Generator[Move, Any, str]


@dataclass
class Play:
    """What a player knows: the prompt, its style, and whether it should get the answer wrong."""

    prompt: str
    style: Style
    failing: bool = False


Player = Callable[[Play], PlayerGen]


class PlayerError(ToolmodeError, RuntimeError):
    """The conversation does not match what the player did: a harness or tool bug, reported as the answer."""


@dataclass
class _Request:
    prompt: str
    tools: list[str]
    run_code_doc: str
    batches: list[tuple[list[tuple[str, dict[str, Any]]], list[str]]]


def _read_request(body: dict[str, Any]) -> _Request:
    messages = body.get("messages", [])
    prompt = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    tools, run_code_doc = [], ""
    for t in body.get("tools") or []:
        fn = t.get("function", {})
        tools.append(fn.get("name", ""))
        if fn.get("name") == "run_code":
            run_code_doc = fn.get("description", "")
    results = {m.get("tool_call_id"): m.get("content") or "" for m in messages if m.get("role") == "tool"}
    batches = []
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                try:
                    args = json.loads(c["function"].get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = {}
                calls.append((c["function"]["name"], args))
            batches.append((calls, [results.get(c.get("id"), "") for c in m["tool_calls"]]))
    return _Request(prompt, tools, run_code_doc, batches)


def style_of(tools: list[str]) -> Style:
    """The style a request calls for: run_code alone is code, run_code and others is hybrid."""
    if "run_code" not in tools:
        return "react"
    meta = {"run_code", "search_tools", "describe_tool", "call_tool"}
    return "hybrid" if any(t not in meta for t in tools) else "code"


_HANDLE_HELPER = (
    "def _tool(name):\n    return next(h for h in search_tools(name) if repr(h).startswith(name + '('))\n"
)


class _Adapter:
    """Turns a player's moves into the raw tool calls this request's mode accepts."""

    def __init__(self, req: _Request) -> None:
        tools = req.tools
        cut = tools.index("search_tools") if "search_tools" in tools else len(tools)
        self.offered = set(tools[:cut])  # react: tools after search_tools were loaded by earlier searches
        self.proxy = "call_tool" in tools
        self.can_search = "search_tools" in tools
        self.quick_index = req.run_code_doc
        self.loaded: set[str] = set()

    def _callable(self, name: str) -> bool:
        return name in self.offered or name in self.loaded

    def search_batch(self, calls: list[Call]) -> list[tuple[str, dict[str, Any]]]:
        """The search_tools calls needed before `calls` can run (empty if none)."""
        missing = sorted({c.name for c in calls if not self._callable(c.name)})
        if missing and not self.can_search:
            raise PlayerError(f"tools {missing} are neither offered nor searchable")
        return [("search_tools", {"query": name}) for name in missing]

    def note_search(self, results: list[str]) -> None:
        """Remember the tools that search results revealed (one signature per line)."""
        for text in results:
            for line in text.splitlines():
                m = re.match(r"\s*([A-Za-z_]\w*)\(", line)
                if m:
                    self.loaded.add(m.group(1))

    def raw(self, calls: list[Call]) -> list[tuple[str, dict[str, Any]]]:
        """Calls as sent: direct, or through call_tool for found-but-not-loaded tools (proxy)."""
        out = []
        for c in calls:
            if self.proxy and c.name not in self.offered:
                out.append(("call_tool", {"name": c.name, "arguments": c.args}))
            else:
                out.append((c.name, c.args))
        return out

    def program(self, code: Code) -> str:
        """The program with handle look-ups for tools missing from run_code's quick index."""
        hidden = [n for n in code.uses if not re.search(rf"(?m)^{re.escape(n)}\(", self.quick_index)]
        if not hidden:
            return code.program
        lookups = "".join(f"{n} = _tool({n!r})\n" for n in hidden)
        return _HANDLE_HELPER + lookups + code.program


def _drive(player: Player, req: _Request, failing: bool) -> dict[str, Any]:
    """Replay the player over the recorded batches; return its next move as a script item."""
    gen = player(Play(req.prompt, style_of(req.tools), failing))
    adapter = _Adapter(req)
    batches = iter(req.batches)

    def emit(raw: list[tuple[str, dict[str, Any]]]) -> list[str] | dict[str, Any]:
        recorded = next(batches, None)
        if recorded is None:
            return {"tool_calls": [{"name": n, "arguments": a} for n, a in raw]}
        sent = [n for n, _ in recorded[0]]
        if sent != [n for n, _ in raw]:
            raise PlayerError(f"conversation has calls {sent}, player expected {[n for n, _ in raw]}")
        return recorded[1]

    try:
        move = next(gen)
        while True:
            if isinstance(move, Code):
                out = emit([("run_code", {"code": adapter.program(move)})])
                if isinstance(out, dict):
                    return out
                reply: Any = out[0]
            else:
                calls = move if isinstance(move, list) else [move]
                search = adapter.search_batch(calls)
                if search:
                    out = emit(search)
                    if isinstance(out, dict):
                        return out
                    adapter.note_search(out)
                out = emit(adapter.raw(calls))
                if isinstance(out, dict):
                    return out
                reply = out if isinstance(move, list) else out[0]
            move = gen.send(reply)
    except StopIteration as stop:
        return {"content": str(stop.value)}
    except PlayerError as exc:
        return {"content": f"[player error] {exc}"}


def script_for(player: Player, *, failing: bool = False) -> Callable[[dict[str, Any], int], dict[str, Any]]:
    """A `ScriptedModelServer` script callable that plays `player` (failing: gives a wrong answer)."""

    def script(body: dict[str, Any], index: int) -> dict[str, Any]:
        return _drive(player, _read_request(body), failing)

    return script


# Helpers players use to read tool results.


def last_json(text: str) -> Any:
    """The last line of `text` that parses as JSON (a program's printed result), else None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line[:1] in "{[":
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def program_result(out: str) -> Any:
    """The JSON a player's program printed last; PlayerError (the episode fails) if there is none."""
    data = last_json(out)
    if data is None:
        raise PlayerError(f"the program printed no JSON result: {out[:300]!r}")
    return data


def as_json(text: str) -> Any:
    """A tool result parsed as JSON, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def is_error(text: str) -> bool:
    """True when a tool result is an error message."""
    return text.startswith("Error:") or "Traceback" in text[:200]
