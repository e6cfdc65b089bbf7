"""The terminal view of a run (rich): one block per step with tokens, calls and shortened results."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from toolmode.trace import Event


def _short(text: Any, limit: int) -> str:
    text = str(text).replace("\n", "⏎ ")
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit:,} chars)"


def _fmt_cost(cost: float | None) -> str:
    return "unknown price" if cost is None else f"${cost:.6f}"


class ConsoleSink:
    """Prints the step view as the run goes. `quiet=True` prints only the final answer."""

    def __init__(self, console: Console | None = None, *, quiet: bool = False, width: int = 160) -> None:
        # soft_wrap: piped output keeps one line per item instead of rich's 80-column wrapping.
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.errors = Console(highlight=False, soft_wrap=True, stderr=True)
        self.quiet = quiet
        self.width = width

    def emit(self, event: Event) -> None:
        """Render one event."""
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event.data)

    def close(self) -> None:
        """Nothing to release."""

    def _print(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text)

    def _on_run_start(self, d: dict[str, Any]) -> None:
        self._print(
            f"[bold]toolmode[/] · mode [cyan]{escape(d['mode'])}[/] · {escape(d['model'])} @ {escape(d['base_url'])}"
            f" · tools sent: {escape(', '.join(d['tools_sent']) or '(none)')}"
        )
        for line in d.get("notes", []):
            self._print(f"[dim]{escape(line)}[/]")

    def _on_reply(self, d: dict[str, Any]) -> None:
        u = d["usage"]
        tokens = (
            f"prompt {u['prompt_tokens']:,} · completion {u['completion_tokens']:,} · cached {u['cached_tokens']:,}"
        )
        if u.get("reasoning_tokens"):
            tokens += f" · reasoning {u['reasoning_tokens']:,}"
        cost = "" if d.get("cost") is None else f" · ${d['cost']:.6f}"
        self._print(f"[bold]step {d['step']}[/] [dim]{tokens}{cost} · {d['seconds']:.2f} s[/]")
        if d.get("recovered"):
            self._print(f"  [yellow]recovered a tool call written as text ({escape(d['recovered'])})[/]")
        if d.get("content") and d.get("tool_calls"):
            self._print(f"  [dim]{escape(_short(d['content'], self.width))}[/]")
        for call in d.get("tool_calls", []):
            self._print(f"  [green]→ {escape(call['name'])}[/]({escape(_short(call['arguments'], self.width))})")

    def _on_tool_result(self, d: dict[str, Any]) -> None:
        style = "red" if d.get("error") else "blue"
        self._print(f"  [{style}]← {escape(d['name'])}[/]: {escape(_short(d['result'], self.width))}")

    def _on_retry(self, d: dict[str, Any]) -> None:
        self._print(f"  [yellow]retry {d['attempt']} in {d['wait']:.1f} s: {escape(d['reason'])}[/]")

    def _on_notice(self, d: dict[str, Any]) -> None:
        self._print(f"  [yellow]{escape(d['message'])}[/]")

    def _on_run_end(self, d: dict[str, Any]) -> None:
        u = d["usage"]
        if d["stopped"] == "answer":
            if self.quiet:
                self.console.print(d["answer"] or "", markup=False, highlight=False)
            else:
                self.console.print("[bold]answer[/]")
                self.console.print(d["answer"] or "", markup=False, highlight=False)
        else:
            error = d.get("error") or ""
            line = f"stopped: {d['stopped']} - {error.removeprefix('stopped: ')}"
            (self.errors if self.quiet else self.console).print(f"[bold red]{escape(line)}[/]")
        reasoning = f" (reasoning {u['reasoning_tokens']:,})" if u.get("reasoning_tokens") else ""
        self._print(
            f"[bold]total[/] {u['requests']} requests · prompt {u['prompt_tokens']:,} (cached {u['cached_tokens']:,})"
            f" · completion {u['completion_tokens']:,}{reasoning} · cost {_fmt_cost(d['cost'])}"
            f" · {d['wall_time']:.2f} s"
        )
        if d.get("trace_path"):
            self._print(f"[dim]trace: {escape(str(d['trace_path']))}[/]")
