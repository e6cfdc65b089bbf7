"""The live region under the step view on a terminal: a spinner with the elapsed time while a reply is
awaited, then the reply's text as it streams in (escaped like every console line).

It is transient: erased when the reply is complete, so the step view that follows reads exactly as it does
without it (and as it does in a pipe or a log, where there is no live region at all).
"""

from __future__ import annotations

import threading
import time

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from toolmode.textsafe import escape_control

REFRESHES_PER_SECOND = 8
KEPT_CHARS = 20_000  # of the streamed text: more than a screen holds; the rest is dropped as it scrolls away


class LiveReply:
    """What the model is doing now: `waiting(model)` shows a spinner and the seconds waited, `add(text)`
    shows the streamed text (its last lines, as many as fit), `stop()` erases it all."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._spinner = Spinner("dots", style="cyan")
        self._live: Live | None = None
        self._model = "the model"
        self._since = 0.0
        self._text = Text()
        self._lock = threading.Lock()  # `add` runs on the run's thread, rendering on rich's refresh thread

    @property
    def active(self) -> bool:
        """Whether the region is on screen."""
        return self._live is not None

    def waiting(self, model: str | None = None) -> None:
        """Show the spinner and the time from now, waiting for `model` (the last one named if None); text
        streamed so far is dropped (a retry starts the reply again)."""
        self._model = model or self._model
        with self._lock:
            self._since, self._text = time.monotonic(), Text()
        if self._live is None:
            self._live = Live(self, console=self.console, transient=True,
                              refresh_per_second=REFRESHES_PER_SECOND, redirect_stdout=False,
                              redirect_stderr=False)
            self._live.start(refresh=True)
        else:
            self._live.refresh()

    def add(self, text: str, *, reasoning: bool = False) -> None:
        """Show a streamed piece (reasoning in italics); starts the region if it is not on screen."""
        if self._live is None:
            self.waiting()
        with self._lock:
            self._text.append(escape_control(text), style="dim italic" if reasoning else "dim")
            if len(self._text) > 2 * KEPT_CHARS:
                self._text = self._text[-KEPT_CHARS:]
        assert self._live is not None
        self._live.refresh()

    def stop(self) -> None:
        """Erase the region (idempotent)."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def __rich__(self) -> RenderableType:
        with self._lock:
            text = self._text.copy()
            seconds = time.monotonic() - self._since
        label = f"{self._model} is replying" if text else f"waiting for {self._model}"
        self._spinner.update(text=Text(f" {escape_control(label)} · {seconds:.1f} s", style="dim"))
        if not text:
            return self._spinner
        room = max(3, self.console.height - 4)
        lines = text.wrap(self.console, max(20, self.console.width - 1))
        return Group(*lines[-room:], self._spinner)
