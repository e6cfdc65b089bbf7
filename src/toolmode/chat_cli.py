"""`toolmode chat`: an interactive conversation in the terminal.

Enter sends a message; a line ending in `\\` continues on the next line. Ctrl-C during a turn stops
that turn (the conversation goes on; a second Ctrl-C in the same turn interrupts at once), Ctrl-C at
the prompt clears the input, Ctrl-D leaves. Commands: /reset, /cost, /mode react|code|hybrid, /help.
Each turn shows the same step view as `toolmode run`; the whole session is one trace file.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from toolmode.chat import Chat
from toolmode.textsafe import escape_control

HELP = ("Enter sends; end a line with \\ to continue it. Ctrl-C stops the current turn, Ctrl-D leaves. "
        "Commands: /reset (forget the conversation), /cost (tokens and cost so far), "
        "/mode react|code|hybrid (switch mode, keep the conversation), /help.")
MODES = ("react", "code", "hybrid")


def read_message(prompt: str = "you> ") -> str | None:
    """One message from stdin (continued over lines ending in a backslash); None at end of input."""
    tty = sys.stdin.isatty()
    if tty:
        with contextlib.suppress(ImportError):  # not on every platform
            import readline  # noqa: F401 - line editing and history for input()
    lines: list[str] = []
    while True:
        try:
            line = input((prompt if not lines else "...> ") if tty else "")
        except EOFError:
            return "\n".join(lines) if lines else None
        if line.endswith("\\"):
            lines.append(line[:-1])
            continue
        lines.append(line)
        return "\n".join(lines)


class _TurnInterrupt:
    """While a turn runs: the first SIGINT cancels the turn, a second one raises KeyboardInterrupt."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel = cancel
        self.hits = 0
        self.previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.hits += 1
        if self.hits > 1:
            raise KeyboardInterrupt
        print("\nstopping this turn (Ctrl-C again to interrupt at once)", file=sys.stderr, flush=True)
        self.cancel()

    def __enter__(self) -> _TurnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _fmt_cost(cost: float | None) -> str:
    return "unknown price" if cost is None else f"${cost:.6f}"


def chat_loop(make_agent: Callable[[str], Any], mode: str) -> int:
    """Run the session until end of input. `make_agent(mode)` builds an Agent (console and trace on)."""
    agent = make_agent(mode)
    session = Chat(agent)
    print(f"toolmode chat · mode {mode} · {HELP}", flush=True)
    try:
        while True:
            try:
                text = read_message()
            except KeyboardInterrupt:
                print("\n(input cleared; Ctrl-D leaves)", file=sys.stderr, flush=True)
                continue
            if text is None:
                return 0
            if not text.strip():
                continue
            command = text.strip()
            if command.startswith("/"):
                name, _, arg = command.partition(" ")
                if name == "/reset":
                    session.reset()
                    print("conversation cleared", flush=True)
                elif name == "/cost":
                    u = session.usage
                    print(f"{len(session.results)} turns · {u.requests} requests · prompt {u.prompt_tokens:,} "
                          f"(cached {u.cached_tokens:,}) · completion {u.completion_tokens:,} · "
                          f"cost {_fmt_cost(session.cost)}", flush=True)
                elif name == "/mode" and arg.strip() in MODES:
                    try:  # built first: a mode that cannot start leaves the old one in place
                        new = make_agent(arg.strip())
                    except Exception as exc:  # noqa: BLE001 - one line, the session goes on
                        # an MCP server's error text can carry terminal escapes
                        why = escape_control(f"{type(exc).__name__}: {exc}").replace("\n", " ")
                        print(f"cannot switch to {arg.strip()}: {why}", file=sys.stderr)
                        continue
                    agent.close()
                    agent = session.agent = new
                    mode = arg.strip()
                    if session.messages and session.messages[0]["role"] == "system":
                        session.messages = session.messages[1:]  # the new mode brings its own prompt
                    print(f"mode {mode}", flush=True)
                elif name == "/help":
                    print(HELP, flush=True)
                else:
                    print(f"unknown command {command[:40]!r}; {HELP}", file=sys.stderr, flush=True)
                continue
            try:
                with _TurnInterrupt(agent.cancel):
                    session.send(text)
            except KeyboardInterrupt:
                print("turn interrupted; it is not part of the conversation", file=sys.stderr, flush=True)
    finally:
        session.close()
        agent.close()
