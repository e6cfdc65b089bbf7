"""`Agent`: a model, tools and a mode, put together. `run`, `stream`, `arun` and `astream` are thin
drivers of the one loop in `toolmode.loop`; all per-run state lives in the run, so one Agent may run
several tasks at once (threads or asyncio tasks)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmode.budget import Budget, CancelToken
from toolmode.defaults import DEFAULT_IDLE_TIMEOUT
from toolmode.events import BaseEvent, Notice
from toolmode.history import check_history
from toolmode.loop import DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_STEPS, run_agent
from toolmode.models.base import Model
from toolmode.models.pricing import PriceTable
from toolmode.modes import Mode, make_mode
from toolmode.output import OutputSpec
from toolmode.result import RunResult
from toolmode.settings import ModelSettings, OutputSettings, SandboxSettings
from toolmode.telemetry import TelemetrySettings
from toolmode.telemetry import check as check_telemetry
from toolmode.telemetry import make_sink as telemetry_sink
from toolmode.telemetry import require_extra as require_otel_extra
from toolmode.telemetry import resolve as resolve_telemetry
from toolmode.tools.base import as_tool
from toolmode.trace import Sink, Trace, open_trace_file


@dataclass
class _Run:
    """One prepared run: its arguments for the loop, its trace, and its cancel token."""

    task: str
    trace: Trace
    owns_trace: bool
    token: CancelToken
    kwargs: dict[str, Any] = field(default_factory=dict)


class _QueueSink:
    """Hands each event to a consumer (`stream` / `astream`)."""

    def __init__(self, put: Callable[[BaseEvent], None]) -> None:
        self.put = put

    def emit(self, event: BaseEvent) -> None:
        """Pass the event on."""
        self.put(event)

    def close(self) -> None:
        """Nothing to release."""


class Agent:
    """A model + tools + a mode.

    The model comes from the arguments or the environment (DeepSeek by default: `DEEPSEEK_API_KEY`,
    `deepseek-v4-flash`). The library is quiet by default: pass `console=True` for the step view and
    `runs_dir="runs"` for a JSONL trace per run (the `toolmode` command does both).

    Arguments, by group (each group also fits in a settings object: `model=ModelSettings(...)`,
    `sandbox=SandboxSettings(...)`, `output=OutputSettings(...)`):
    - tools and mode: `tools` (Tools or plain functions), `mode` ("react", "code", "hybrid"), `search`
      ("load" / "proxy", react only), `ranker` ("bm25" / "fused"), `visible` (names shown; the rest are
      found by search), `direct` (hybrid: tools sent beside run_code);
    - sandbox: `workspace` (where code and file tools may write), `sandbox` ("auto", "namespaces", "bwrap",
      "unshare", "landlock", "none" = unsafe, or a SandboxSettings), `sandbox_limits`, `persistent` (code namespace kept between
      run_code calls and runs), `allow_env_in_workspace` (unsafe, refused by default);
    - model: `model` (a name, a `Model` object such as `FallbackModel`, or a ModelSettings), `base_url`,
      `api_key`, `api_key_env`, `preset` (deepseek, openai, openrouter, ollama, vllm, llamacpp), `stream`,
      `model_params` (extra request fields), `recover_text_calls`, `recover_code_blocks` (None: on for local
      presets), `request_timeout` (seconds one request may take, streamed or not), `idle_timeout` (seconds
      a streamed reply that has started may send nothing; default 60, None: no limit), `client`;
    - prompts: `prompts` ("standard", or "local": short example-led prompts for small models; None: "local"
      for local presets);
    - loop: `max_steps`, `max_result_chars`, `system_prompt` (replaces the mode's prompt), `instructions`
      (added to it), `prices`, and the default budget of every run: `max_cost` (USD), `max_tokens`,
      `timeout` (wall seconds);
    - output: `console`, `quiet`, `sinks` (extra trace sinks), `runs_dir`, `telemetry` (OpenTelemetry spans
      and metrics: True, False, or a `TelemetrySettings`; None follows `toolmode.otel.instrument()` and the
      TOOLMODE_OTEL variable; needs `toolmode[otel]`), or `output=OutputSettings(...)`.
    """

    def __init__(
        self,
        tools: Iterable[Any] = (),
        mode: str = "react",
        *,
        search: str | None = None,
        ranker: str = "bm25",
        visible: Sequence[str] | None = None,
        direct: Sequence[str] | None = None,
        model: str | Model | ModelSettings | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        preset: str | None = None,
        workspace: Path | str = ".",
        max_steps: int = DEFAULT_MAX_STEPS,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        system_prompt: str | None = None,
        instructions: str | None = None,
        sinks: Sequence[Sink] | None = None,
        console: bool = False,
        quiet: bool = False,
        runs_dir: Path | str | None = None,
        output: OutputSettings | None = None,
        stream: bool = False,
        sandbox: str | SandboxSettings = "auto",
        persistent: bool = False,
        sandbox_limits: Any = None,
        allow_env_in_workspace: bool = False,
        recover_text_calls: bool = True,
        recover_code_blocks: bool | None = None,
        model_params: dict[str, Any] | None = None,
        prices: PriceTable | None = None,
        client: Model | None = None,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        request_timeout: float = 120.0,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        prompts: str | None = None,
        telemetry: bool | TelemetrySettings | None = None,
    ) -> None:
        if output is not None:
            console, quiet, runs_dir, sinks = output.console, output.quiet, output.runs_dir, list(output.sinks)
            telemetry = output.telemetry
        self.telemetry = check_telemetry(telemetry)
        if self.telemetry:  # asked for by this agent: say now if the extra is missing
            require_otel_extra()
        if isinstance(sandbox, SandboxSettings):
            workspace, sandbox_limits, persistent = sandbox.workspace, sandbox.limits, sandbox.persistent
            allow_env_in_workspace, sandbox = sandbox.allow_env_in_workspace, sandbox.policy
        self.mode_name = mode
        self.max_steps = max_steps
        self.max_result_chars = max_result_chars
        self.system_prompt = system_prompt
        self.instructions = instructions
        self.budget = Budget(max_cost, max_tokens, timeout)  # refuses 0 and negative values
        self.extra_sinks = list(sinks or [])
        self.console = console
        self.quiet = quiet
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self.prices = prices or PriceTable()
        self._active: set[CancelToken] = set()
        self._active_lock = threading.Lock()
        if isinstance(model, ModelSettings):
            given = [n for n, v in (("base_url", base_url), ("api_key", api_key), ("api_key_env", api_key_env),
                                    ("preset", preset), ("model_params", model_params), ("client", client)) if v]
            if given:
                raise ValueError(f"give the model either as ModelSettings or as keywords, not both ({', '.join(given)})")
            client = model.build()
        elif model is not None and not isinstance(model, str):
            if client is not None:
                raise ValueError("give either model=<a Model object> or client=, not both")
            client = model
        if client is not None and not isinstance(client, Model):
            raise ValueError(f"{client!r} is not a model: it needs chat(messages, tools) and a 'model' name")
        if client is None:
            client = ModelSettings(
                model, base_url, api_key, api_key_env, preset, stream, model_params, recover_text_calls,  # type: ignore[arg-type]
                recover_code_blocks, request_timeout, idle_timeout=idle_timeout).build()
        self.model: Model = client
        if prompts is None:
            local = getattr(getattr(client, "preset", None), "local", False)
            prompts = "local" if local else "standard"
        self.tools = [as_tool(t) for t in tools]
        try:
            self.mode: Mode = make_mode(
                mode, self.tools, search=search, visible=visible, direct=direct,
                workspace=workspace, sandbox=sandbox, persistent=persistent, sandbox_limits=sandbox_limits,
                ranker=ranker, allow_env_in_workspace=allow_env_in_workspace, prompts=prompts,
            )
        except BaseException:
            self._close_model()
            raise

    # ------------------------------------------------------------------ preparing a run

    def _prepare(
        self, task: str, *, history: Any = None, output_type: Any = None, max_cost: float | None = None,
        max_tokens: int | None = None, timeout: float | None = None, max_steps: int | None = None,
        cancel: CancelToken | None = None, trace: Trace | None = None, **unknown: Any,
    ) -> _Run:
        """Check the arguments (one clear ValueError each) and set up the run's trace and token."""
        if unknown:
            raise TypeError(f"unknown run option {next(iter(unknown))!r}; the options are: history, output_type, "
                            "max_cost, max_tokens, timeout, max_steps, cancel, trace")
        if cancel is not None and not isinstance(cancel, CancelToken):
            raise ValueError(f"cancel must be a toolmode.CancelToken, not {type(cancel).__name__}")
        if not isinstance(task, str):
            raise ValueError(f"task must be a string, not {type(task).__name__}")
        if history is not None:
            check_history(history)
        if output_type is not None:
            OutputSpec(output_type)
        b = self.budget
        budget = Budget(b.max_cost if max_cost is None else max_cost, b.max_tokens if max_tokens is None else max_tokens,
                        b.timeout if timeout is None else timeout)
        steps = self.max_steps if max_steps is None else max_steps
        if isinstance(steps, bool) or not isinstance(steps, int):
            raise ValueError(f"max_steps must be a whole number, got {steps!r}")
        if steps < 1:
            raise ValueError(f"max_steps must be 1 or more, got {steps}")
        owns = trace is None
        if trace is None:
            trace = self.new_trace()
        token = CancelToken()
        tokens = [token] + ([cancel] if cancel is not None else [])
        kwargs = dict(max_steps=steps, max_result_chars=self.max_result_chars, trace=trace,
                      system_prompt=self.system_prompt, instructions=self.instructions, prices=self.prices,
                      history=history, budget=budget, cancel=tokens, output_type=output_type)
        return _Run(task, trace, owns, token, kwargs)

    def new_trace(self) -> Trace:
        """A trace with this agent's sinks: extra sinks, OpenTelemetry (when telemetry is on for this run), the
        console (console=True), a JSONL file (runs_dir)."""
        sinks: list[Sink] = list(self.extra_sinks)
        settings = resolve_telemetry(self.telemetry)
        if settings is not None:  # first: a missing extra is refused before any file is opened
            sinks.append(telemetry_sink(settings))
        if self.console:
            from toolmode.console import ConsoleSink

            sinks.append(ConsoleSink(quiet=self.quiet))
        path = problem = None
        if self.runs_dir is not None:
            jsonl, problem = open_trace_file(self.runs_dir, self.mode_name)
            if jsonl is not None:
                path = jsonl.path
                sinks.insert(0, jsonl)
        trace = Trace(sinks, path=path)
        if problem:  # the run goes on without its file (e.g. `runs` is a planted or dangling link)
            trace.publish(Notice(problem))
        return trace

    def _execute(self, run: _Run, event_loop: asyncio.AbstractEventLoop | None = None) -> RunResult:
        """Drive the loop for a prepared run in the calling thread."""
        with self._active_lock:
            self._active.add(run.token)
        try:
            return run_agent(run.task, self.mode, self.model, event_loop=event_loop, **run.kwargs)
        finally:
            with self._active_lock:
                self._active.discard(run.token)
            if run.owns_trace:
                run.trace.close()

    # ------------------------------------------------------------------ drivers

    def run(self, task: str, **options: Any) -> RunResult:
        """Run one task to an answer, a limit (steps, budget), a cancellation or a model error.

        Options: `history` (earlier `result.messages`: continue the conversation), `output_type` (a
        pydantic model, dataclass or TypedDict: `result.output`), `max_cost`, `max_tokens`, `timeout`,
        `max_steps` (this run's limits), `cancel` (a CancelToken), `trace` (a Trace to publish into,
        e.g. one per chat session; the caller closes it).
        """
        return self._execute(self._prepare(task, **options))

    def stream(self, task: str, **options: Any) -> Iterator[BaseEvent]:
        """Run one task and yield its events as they happen (see `toolmode.events`); the last is `RunEnd`,
        whose `result` is the RunResult. Stopping the iteration early cancels the run."""
        run = self._prepare(task, **options)
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        run.trace.sinks.append(_QueueSink(events.put))
        thread = threading.Thread(target=self._worker, args=(run, None, events.put), name="toolmode-run",
                                  daemon=True)
        return self._iterate(run, thread, events)

    def _iterate(self, run: _Run, thread: threading.Thread, events: queue.SimpleQueue[Any]) -> Iterator[BaseEvent]:
        thread.start()
        try:
            while True:
                item = events.get()
                if isinstance(item, _Failure):
                    raise item.exc
                if isinstance(item, RunResult):
                    return
                yield item
        finally:
            run.token.cancel()  # a no-op when the run already ended

    def _worker(self, run: _Run, event_loop: asyncio.AbstractEventLoop | None, put: Callable[[Any], None]) -> None:
        try:
            put(self._execute(run, event_loop))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            put(_Failure(exc))

    async def arun(self, task: str, **options: Any) -> RunResult:
        """`run` for asyncio: the loop runs on a worker thread, async tools on the caller's event loop.

        Cancelling the awaiting task cancels the run.
        """
        run = self._prepare(task, **options)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def deliver(item: Any) -> None:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(item))

        threading.Thread(target=self._worker, args=(run, loop, deliver), name="toolmode-arun", daemon=True).start()
        try:
            item = await done
        except asyncio.CancelledError:
            run.token.cancel()
            raise
        if isinstance(item, _Failure):
            raise item.exc
        return item  # type: ignore[no-any-return]

    async def astream(self, task: str, **options: Any) -> AsyncIterator[BaseEvent]:
        """`stream` for asyncio: `async for event in agent.astream(task)`. Leaving early cancels the run."""
        run = self._prepare(task, **options)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, item)

        run.trace.sinks.append(_QueueSink(put))
        threading.Thread(target=self._worker, args=(run, loop, put), name="toolmode-astream", daemon=True).start()
        try:
            while True:
                item = await events.get()
                if isinstance(item, _Failure):
                    raise item.exc
                if isinstance(item, RunResult):
                    return
                yield item
        finally:
            run.token.cancel()

    def chat(self, **options: Any) -> Any:
        """A `Chat`: a conversation whose turns continue each other (`chat.send(text)`)."""
        from toolmode.chat import Chat

        return Chat(self, **options)

    def cancel(self) -> None:
        """Cancel every run of this agent in progress (from any thread or task); each ends `stopped="cancelled"`."""
        with self._active_lock:
            tokens = list(self._active)
        for t in tokens:
            t.cancel()

    # ------------------------------------------------------------------ lifetime

    def _close_model(self) -> None:
        close = getattr(self.model, "close", None) if hasattr(self, "model") else None
        if close is not None:
            close()

    def close(self) -> None:
        """Stop the mode's resources (sandbox worker), MCP servers started for this agent's tools, and the model."""
        self.mode.close()
        for t in self.tools:
            close = getattr(t.fn, "close", None) if t.source.startswith("mcp:") else None
            if close is not None:
                close()  # the server restarts on a later call, so shared tools stay usable
        self._close_model()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Failure:
    """An exception raised by a run on its worker thread, handed to the consumer."""

    exc: BaseException
