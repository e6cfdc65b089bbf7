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
    keyword `code_tool` is told the mode's code tool, or None; one whose `chat` takes `request_fields` gets
    the extra request fields a run's policies ask for, e.g. `tool_choice` or `response_format`, and must send
    them as they are); it raises `ModelError`
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
             code_tool: str | None = RUN_CODE, request_fields: dict[str, Any] | None = None) -> Reply:
        """The first model's reply that does not fail; the last model's error if all fail."""
        for i, m in enumerate(self.models):
            try:
                chat = _chat_of(m, code_tool, request_fields)  # both are optional keywords of the protocol
                reply = chat(messages, tools)
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
              code_tool: str | None = None, request_fields: dict[str, Any] | None = None) -> Reply:
    """`model.chat(messages, tools)`, stopped at once by a cancellation, the run's deadline or Ctrl-C.

    `request_fields` (e.g. `{"tool_choice": "required"}`) go to a model whose `chat` takes them; for any
    other model they are left out, with a notice.

    A model that says it is `interruptible` (it bounds each wait by the run's limits and stops when the run
    is cancelled, as `ModelClient` does) is called on this thread. Any other model runs on a worker thread,
    so the run can stop waiting for it; the abandoned request finishes in the background, unread."""
    if request_fields and not _takes(model, "request_fields"):
        run.publish(Notice(f"the model cannot be sent the request fields {', '.join(request_fields)}: sent without "
                           "them", run.step or None, about="request_fields"))
    chat = _chat_of(model, code_tool, request_fields)
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


_TAKES: dict[tuple[type, str], bool] = {}


def _chat_of(model: Any, code_tool: str | None, request_fields: dict[str, Any] | None) -> Any:
    """`model.chat` with the optional keywords it takes: `code_tool` (the mode's code tool, for the recovery
    of code written as text) and `request_fields` (when there are any)."""
    keywords: dict[str, Any] = {}
    if _takes(model, "code_tool"):
        keywords["code_tool"] = code_tool
    if request_fields and _takes(model, "request_fields"):
        keywords["request_fields"] = request_fields
    return functools.partial(model.chat, **keywords) if keywords else model.chat


def _takes(model: Any, keyword: str) -> bool:
    """Whether `model.chat` takes `keyword`."""
    key = (type(model), keyword)
    found = _TAKES.get(key)
    if found is None:
        try:
            found = keyword in inspect.signature(model.chat).parameters
        except (TypeError, ValueError):
            found = False
        _TAKES[key] = found
    return found
