"""The seam the loop talks to: a `Model` is anything with `chat(messages, tools) -> Reply` and a `model`
name (for pricing). `ModelClient` (OpenAI-compatible HTTP) is one; `FallbackModel` chains several."""

from __future__ import annotations

import contextvars
import functools
import inspect
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from toolmode import runctx, workers
from toolmode.budget import RunStopped
from toolmode.events import Notice
from toolmode.models.errors import ModelError
from toolmode.models.reply import Reply
from toolmode.models.text_calls import RUN_CODE


@runtime_checkable
class Model(Protocol):
    """What the loop needs from a model.

    `chat` sends the conversation and the tool schemas and returns the reply (a model whose `chat` takes the
    keyword `code_tool` is told the mode's code tool, or None); it raises `ModelError`
    (one line) when the request failed for good. `model` is the name prices are looked up by. Optional:
    `base_url` (shown in the banner) and `close()`. A model may publish `TextDelta` / `ReasoningDelta`
    events while it streams with `toolmode.runctx.emit(...)`.
    """

    model: str

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
        """Send one request and return the reply."""
        ...


class FallbackModel:
    """Tries each model in turn: when one fails, the next gets the same request. The reply says which
    model answered (`reply.model`), so cost is priced for that model.

    What falls back: any `Exception` a model raises (a `ModelError` from an HTTP client: an HTTP error, 429
    after its retries, an unreachable server; or whatever a custom model raises). What never does: the
    run's own stop (`RunStopped`: a cancellation or a spent budget) and `BaseException`s that are not
    errors (KeyboardInterrupt, asyncio's CancelledError, SystemExit): they end the request at once.
    A `ModelClient` retries 429 and 5xx up to its `deadline` before failing over; pass a short `deadline`
    to the primary to fail over sooner.
    """

    def __init__(self, models: Sequence[Model]) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        for m in models:
            if not callable(getattr(m, "chat", None)) or not isinstance(getattr(m, "model", None), str):
                raise ValueError(f"{m!r} is not a model: it needs chat(messages, tools) and a 'model' name")
        self.models = list(models)
        self.model = self.models[0].model
        self.base_url = getattr(self.models[0], "base_url", None)

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = (), *,
             code_tool: str | None = RUN_CODE) -> Reply:
        """The first model's reply that does not fail; the last model's error if all fail."""
        for i, m in enumerate(self.models):
            try:
                chat: Any = m.chat  # `code_tool` is an optional keyword of the protocol
                reply = chat(messages, tools, code_tool=code_tool) if _takes_code_tool(m) else chat(messages, tools)
            except RunStopped:
                raise
            except Exception as exc:
                if i == len(self.models) - 1:
                    raise
                why = str(exc) if isinstance(exc, ModelError) else f"{type(exc).__name__}: {exc}"
                runctx.emit(Notice(f"model {m.model} failed ({why}); falling back to {self.models[i + 1].model}",
                                   about="fallback"))
                continue
            reply.model = reply.model or m.model
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def request_info(self) -> dict[str, Any] | None:
        """The first model's request settings."""
        return request_info(self.models[0])

    @property
    def interruptible(self) -> bool:
        """True when every model of the chain stops by itself when the run does (see `ask_model`)."""
        return all(getattr(m, "interruptible", False) for m in self.models)

    def close(self) -> None:
        """Close every model that can be closed."""
        for m in self.models:
            close = getattr(m, "close", None)
            if close is not None:
                close()


def request_info(model: Any) -> dict[str, Any] | None:
    """What every request of `model` carries besides the conversation: `{"model", "stream", "params"}`
    (from its `request_info()`), or None for a model that does not say."""
    info = getattr(model, "request_info", None)
    return info() if callable(info) else None


def ask_model(model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]], run: runctx.RunContext,
              code_tool: str | None = None) -> Reply:
    """`model.chat(messages, tools)`, stopped at once by a cancellation, the run's deadline or Ctrl-C.

    A model that says it is `interruptible` (it bounds each wait by the run's limits and stops when the run
    is cancelled, as `ModelClient` does) is called on this thread. Any other model runs on a worker thread,
    so the run can stop waiting for it; the abandoned request finishes in the background, unread."""
    chat: Any = model.chat
    if _takes_code_tool(model):  # the mode names its code tool, for the recovery of code written as text
        chat = functools.partial(chat, code_tool=code_tool)
    if getattr(model, "interruptible", False):
        return chat(messages, tools)
    box: list[Any] = []
    done = threading.Event()
    sent = list(messages)  # the loop appends to `messages` at a stop while an abandoned request may still read

    def work() -> None:
        try:
            box.append((True, chat(sent, tools)))
        except BaseException as exc:  # noqa: BLE001 - handed to the loop's thread below
            box.append((False, exc))
        finally:
            done.set()

    workers.submit(functools.partial(contextvars.copy_context().run, work))
    while not done.wait(0.05):
        if run.limits.cancelled:
            run.limits.check_time()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


_TAKES_CODE_TOOL: dict[type, bool] = {}


def _takes_code_tool(model: Any) -> bool:
    """Whether `model.chat` takes the `code_tool` keyword (the mode's code tool, for text-call recovery)."""
    kind = type(model)
    found = _TAKES_CODE_TOOL.get(kind)
    if found is None:
        try:
            found = "code_tool" in inspect.signature(model.chat).parameters
        except (TypeError, ValueError):
            found = False
        _TAKES_CODE_TOOL[kind] = found
    return found
