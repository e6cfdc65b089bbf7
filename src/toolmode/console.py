"""The terminal view of a run (rich): one block per step with tokens, calls and shortened results.

Everything a model or a tool controls (answers, arguments, results, errors, tool names, notes) is printed
through `safe` / `safe_line`: control and format characters are escaped (no terminal escape sequence,
clipboard write or bidi trick reaches the screen) and rich markup is shown literally.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from toolmode.events import BaseEvent
from toolmode.textsafe import escape_control

if TYPE_CHECKING:
    from toolmode.console_live import LiveReply

CALL_ARGS_IN_RESULT = 48  # characters of a call's arguments repeated on its result line


def plain(text: Any) -> str:
    """Model-controlled text made safe to print without markup: control and format characters escaped."""
    return escape_control(str(text))


def safe(text: Any) -> str:
    """Model-controlled text made safe inside a rich markup string: controls escaped, `[...]` printed literally."""
    return escape(escape_control(str(text)))


def _short(text: Any, limit: int) -> str:
    text = str(text).replace("\n", "⏎ ")
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit:,} chars)"


def safe_line(text: Any, limit: int) -> str:
    """One line of model-controlled text for markup: newlines as ⏎, cut at `limit`, then made `safe`."""
    return safe(_short(text, limit))


def _fmt_cost(cost: float | None) -> str:
    return "unknown price" if cost is None else f"${cost:.6f}"


def _on_a_tty(console: Console) -> bool:
    """Whether `console` writes to a real terminal (a console forced to act as one, in tests, does not)."""
    isatty = getattr(console.file, "isatty", None)
    return console.is_terminal and not console.is_dumb_terminal and isatty is not None and bool(isatty())


class ConsoleSink:
    """Prints the step view as the run goes. `quiet=True` prints only the final answer.

    When a reply makes several calls (they run concurrently and finish in any order), each call and its
    result carry the call's number in the reply, `→ #2 read_file(...)` / `← #2 read_file(...): ...`.

    On a terminal (not with `quiet`), a live region under the step view shows a spinner and the seconds
    waited for each reply, then the reply's text as it streams (`console_live`); it is erased when the
    reply is complete. In a pipe there is none: the output is the step view alone.
    """

    def __init__(self, console: Console | None = None, *, quiet: bool = False, width: int = 160) -> None:
        # soft_wrap: piped output keeps one line per item instead of rich's 80-column wrapping.
        self.console = console or Console(highlight=False, soft_wrap=True, emoji=False)
        self.errors = Console(highlight=False, soft_wrap=True, stderr=True, emoji=False)
        self.quiet = quiet
        self.width = width
        self._call_numbers: dict[str, int] = {}  # call id -> its number in a reply with several calls
        self._live: LiveReply | None = None
        if not quiet and _on_a_tty(self.console):
            from toolmode.console_live import LiveReply

            self._live = LiveReply(self.console)
        self._calls_running = 0

    def emit(self, event: BaseEvent) -> None:
        """Render one event."""
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event.data)

    def close(self) -> None:
        """Erase the live region, if it is on screen."""
        if self._live is not None:
            self._live.stop()

    def _wait_for_reply(self, model: str | None = None) -> None:
        if self._live is not None:
            self._live.waiting(model)

    def _reply_done(self) -> None:
        if self._live is not None:
            self._live.stop()

    def _on_text_delta(self, d: dict[str, Any]) -> None:
        if self._live is not None:
            self._live.add(d["text"])

    def _on_reasoning_delta(self, d: dict[str, Any]) -> None:
        if self._live is not None:
            self._live.add(d["text"], reasoning=True)

    def _print(self, text: str, console: Console | None = None) -> None:
        if not self.quiet or console is not None:
            # emoji=False: a model writing ":smile:" sees it printed as written.
            (console or self.console).print(text, emoji=False, highlight=False)

    def _on_run_start(self, d: dict[str, Any]) -> None:
        self._print(
            f"[bold]toolmode[/] · mode [cyan]{safe(d['mode'])}[/] · {safe(d['model'])} @ {safe(d['base_url'])}"
            f" · tools sent: {safe(', '.join(d['tools_sent']) or '(none)')}"
        )
        for line in d.get("notes", []):
            self._print(f"[dim]{safe(line)}[/]")
        self._wait_for_reply(str(d["model"]))

    def _on_reply(self, d: dict[str, Any]) -> None:
        self._reply_done()
        u = d["usage"]
        tokens = (
            f"prompt {u['prompt_tokens']:,} · completion {u['completion_tokens']:,} · cached {u['cached_tokens']:,}"
        )
        if u.get("reasoning_tokens"):
            tokens += f" · reasoning {u['reasoning_tokens']:,}"
        cost = "" if d.get("cost") is None else f" · ${d['cost']:.6f}"
        self._print(f"[bold]step {d['step']}[/] [dim]{tokens}{cost} · {d['seconds']:.2f} s[/]")
        if d.get("recovered"):
            self._print(f"  [yellow]recovered a tool call written as text ({safe(d['recovered'])})[/]")
        if d.get("content") and d.get("tool_calls"):
            self._print(f"  [dim]{safe_line(d['content'], self.width)}[/]")
        calls = d.get("tool_calls", [])
        self._call_numbers = {c["id"]: i for i, c in enumerate(calls, 1)} if len(calls) > 1 else {}
        for call in calls:
            self._print(f"  [green]→ {self._number(call)}{safe(call['name'])}[/]"
                        f"({safe_line(call['arguments'], self.width)})")
        self._calls_running = len(calls)

    def _number(self, call: dict[str, Any]) -> str:
        n = self._call_numbers.get(call.get("id", ""))
        return "" if n is None else f"#{n} "

    def _on_tool_result(self, d: dict[str, Any]) -> None:
        style = "red" if d.get("error") else "blue"
        number = self._number(d)
        call = safe(d["name"])
        if number:  # results of concurrent calls arrive in finishing order: say which call this is
            call += f"({safe_line(d.get('arguments', ''), CALL_ARGS_IN_RESULT)})"
        self._print(f"  [{style}]← {number}{call}[/]: {safe_line(d['result'], self.width)}")
        self._calls_running -= 1
        if self._calls_running == 0:  # the results go back to the model
            self._wait_for_reply()

    def _on_approval_request(self, d: dict[str, Any]) -> None:
        if d.get("waits_for") == "terminal":
            return  # the terminal's own prompt shows the call
        where = " (from run_code)" if d.get("where") == "run_code" else ""
        who = {"resume": "the run stops here; resume it with a decision", "rule": "no one can decide it here"}.get(
            str(d.get("waits_for")), f"waits for the {safe(d.get('waits_for'))}")
        self._print(f"  [magenta]? {safe(d['tool'])}{where} needs approval: {who}[/]")

    def _on_approval(self, d: dict[str, Any]) -> None:
        by = safe(d["by"])
        if d["decision"] == "approved":
            edited = d.get("arguments")
            note = "" if edited is None else f" with edited arguments {safe_line(json.dumps(edited), self.width)}"
            self._print(f"  [magenta]✓ {safe(d['tool'])} approved ({by}){note}[/]")
        else:
            reason = f": {safe_line(d['reason'], self.width)}" if d.get("reason") else ""
            self._print(f"  [magenta]✗ {safe(d['tool'])} refused ({by}){reason}[/]")

    def _on_retry(self, d: dict[str, Any]) -> None:
        self._print(f"  [yellow]retry {d['attempt']} in {d['wait']:.1f} s: {safe(d['reason'])}[/]")
        self._wait_for_reply()  # a streamed attempt's text is void

    def _on_notice(self, d: dict[str, Any]) -> None:
        self._print(f"  [yellow]{safe(d['message'])}[/]")
        if self._live is not None and not self._live.active and self._calls_running == 0:
            self._wait_for_reply()  # a reply that was not the answer (a correction): the model is asked again

    def _on_run_end(self, d: dict[str, Any]) -> None:
        self._reply_done()
        u = d["usage"]
        if d["stopped"] == "answer":
            if not self.quiet:
                self.console.print("[bold]answer[/]")
            self.console.print(plain(d["answer"] or ""), markup=False, highlight=False, emoji=False)
        else:
            error = d.get("error") or ""
            detail = error.removeprefix("stopped: ")
            line = f"stopped: {d['stopped']}" + (f" - {detail}" if detail and detail != d["stopped"] else "")
            self._print(f"[bold red]{safe(line)}[/]", self.errors if self.quiet else None)
        reasoning = f" (reasoning {u['reasoning_tokens']:,})" if u.get("reasoning_tokens") else ""
        self._print(
            f"[bold]total[/] {u['requests']} requests · prompt {u['prompt_tokens']:,} (cached {u['cached_tokens']:,})"
            f" · completion {u['completion_tokens']:,}{reasoning} · cost {_fmt_cost(d['cost'])}"
            f" · {d['wall_time']:.2f} s"
        )
        if d.get("trace_path"):
            self._print(f"[dim]trace: {safe(d['trace_path'])}[/]")
