"""`toolmode chat`: an interactive conversation in the terminal.

Enter sends a message; a line ending in `\\` continues on the next line. Ctrl-C during a turn stops
that turn (the conversation goes on; a second Ctrl-C in the same turn interrupts at once), Ctrl-C at
the prompt clears the input, Ctrl-D leaves. Commands: /reset, /cost, /mode <any registered mode>, /help.
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
from toolmode.modes.registry import mode_names
from toolmode.textsafe import escape_control


def help_text() -> str:
    """The one-paragraph help, naming the modes one can switch to."""
    return ("Enter sends; end a line with \\ to continue it. Ctrl-C stops the current turn, Ctrl-D leaves. "
            "Commands: /reset (forget the conversation), /cost (tokens and cost so far), "
            f"/mode {'|'.join(mode_names())} (switch mode, keep the conversation), /help.")


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
    session: Chat[Any] = Chat(make_agent(mode))
    print(f"toolmode chat · mode {mode} · {help_text()}", flush=True)
    try:
        while (text := _next_message()) is not None:
            command = text.strip()
            if not command:
                continue
            if command.startswith("/"):
                _command(session, command, make_agent)
                continue
            try:
                with _TurnInterrupt(session.agent.cancel):
                    session.send(text)
            except KeyboardInterrupt:
                print("turn interrupted; it is not part of the conversation", file=sys.stderr, flush=True)
        return 0
    finally:
        session.close()
        session.agent.close()


def _next_message() -> str | None:
    """The next message, or None at end of input (Ctrl-C at the prompt clears the input)."""
    while True:
        try:
            return read_message()
        except KeyboardInterrupt:
            print("\n(input cleared; Ctrl-D leaves)", file=sys.stderr, flush=True)


def _command(session: Chat[Any], command: str, make_agent: Callable[[str], Any]) -> None:
    """Carry out one /command."""
    name, _, arg = command.partition(" ")
    if name == "/reset":
        session.reset()
        print("conversation cleared", flush=True)
    elif name == "/cost":
        u = session.usage
        print(f"{len(session.results)} turns · {u.requests} requests · prompt {u.prompt_tokens:,} "
              f"(cached {u.cached_tokens:,}) · completion {u.completion_tokens:,} · "
              f"cost {_fmt_cost(session.cost)}", flush=True)
    elif name == "/mode" and arg.strip() in mode_names():
        _switch(session, arg.strip(), make_agent)
    elif name == "/help":
        print(help_text(), flush=True)
    else:
        print(f"unknown command {command[:40]!r}; {help_text()}", file=sys.stderr, flush=True)


def _switch(session: Chat[Any], mode: str, make_agent: Callable[[str], Any]) -> None:
    """Switch the session to `mode`, keeping the conversation (the new mode's system prompt replaces the
    old one: the library does that for any history)."""
    try:  # built first: a mode that cannot start leaves the old one in place
        new = make_agent(mode)
    except Exception as exc:  # noqa: BLE001 - one line, the session goes on
        why = escape_control(f"{type(exc).__name__}: {exc}").replace("\n", " ")  # an MCP server's text may hold escapes
        print(f"cannot switch to {mode}: {why}", file=sys.stderr)
        return
    session.agent.close()
    session.agent = new
    print(f"mode {mode}", flush=True)
