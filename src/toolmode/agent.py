"""`Agent`: a model, tools and a mode, put together. `run`, `stream`, `arun` and `astream` are thin
drivers of the one loop in `toolmode.loop`; all per-run state lives in the run, so one Agent may run
several tasks at once (threads or asyncio tasks)."""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmode.act_first import default_act_first
from toolmode.approval.settings import ApprovalSettings
from toolmode.budget import Budget, CancelToken
from toolmode.chat import Chat
from toolmode.events import BaseEvent, Notice
from toolmode.history import check_history
from toolmode.loop import run_agent
from toolmode.models.base import Model
from toolmode.models.pricing import PriceTable
from toolmode.modes import Mode, ModeSetup, build_mode
from toolmode.output import OutputSpec
from toolmode.policies import CallPolicy, ReplyPolicy
from toolmode.result import RunResult
from toolmode.settings import AgentSettings, PromptSettings, check_count, resolve, with_changes
from toolmode.telemetry import require_extra as require_otel_extra
from toolmode.telemetry import resolve as resolve_telemetry
from toolmode.tools.base import as_tool
from toolmode.trace import Sink, Trace, open_trace_file

RUN_OPTIONS = ("history", "output_type", "max_cost", "max_total_tokens", "timeout", "max_steps", "cancel", "trace",
               "deps", "approver")


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

    Settings come in groups (`toolmode.settings`), each a settings object or a shorthand:
    - `mode`: a name ("react", "code", "hybrid", or any registered mode) or `ModeSettings(name, visible=,
      ranker=, **options)` (react: `search="load"|"proxy"`; hybrid: `direct=[names]`);
    - `model`: a name, a `Model` object (e.g. `FallbackModel`), or `ModelSettings(model, base_url, preset,
      max_tokens (per reply), temperature, stream, request_timeout, idle_timeout, act_first, ...)`
      (`act_first`: how a run that offers tools is made to start with a call, see `toolmode.act_first`;
      None: the preset's default, "schema" for llama.cpp / vLLM / Ollama, "tool_choice" for OpenAI /
      DeepSeek / OpenRouter, "nudge" otherwise and for a Model object without an `act_first` of its own);
    - `sandbox`: a policy ("auto", "namespaces", "bwrap", "unshare", "landlock", "none" = unsafe) or
      `SandboxSettings(workspace, policy, limits, persistent, allow_env_in_workspace)`; with no workspace,
      code runs in a private temporary folder removed at `close()`;
    - `limits`: `LimitSettings(max_steps, max_result_chars, max_cost, max_total_tokens, timeout)`, the
      default of every run;
    - `output`: `OutputSettings(console, quiet, runs_dir, sinks, telemetry)` (`telemetry`: OpenTelemetry
      spans and metrics, True, False or a `TelemetrySettings`; None follows `toolmode.otel.instrument()` and
      the TOOLMODE_OTEL variable; needs `toolmode[otel]`);
    - `prompts`: a variant ("standard", "local"), a mapping of prompt names to texts, a folder, or
      `PromptSettings(variant, overrides, system_prompt, instructions)`.
    Besides: `prices` (a PriceTable), `deps` (every run's default dependencies, see `RunContext`) and
    `policies` (reply and call policies added to the defaults; a class is instantiated per run).

    Approval (`toolmode.approval`): `approval` (a mapping of tool names to "allow" / "ask" / "deny", "*" for
    the tools not otherwise set, or a callable that gets the ApprovalRequest and returns one, or None),
    `approver` (a sync or async callable that decides an `ask`: True, False, a reason to deny, or
    `{"arguments": {...}}`; without one, `stream()` asks its consumer and `run()` stops with
    `stopped="approval"`), `approval_timeout` (seconds to wait for a decision, then deny) and
    `count_approval_wait` (keep the run's deadline and a program's timeout running while a decision is
    awaited; by default they stand still).

    The flat keywords of earlier versions (`base_url=`, `workspace=`, `max_steps=`, `search=`, ...) are
    accepted and put in their group; giving one whose group is also given as an object raises
    `SettingsConflict`. `max_tokens=` caps each reply (it was the run's budget: a FutureWarning says so).
    """

    def __init__(
        self,
        tools: Iterable[Any] = (),
        mode: Any = "react",
        *,
        model: Any = None,
        sandbox: Any = None,
        limits: Any = None,
        output: Any = None,
        prompts: Any = None,
        prices: PriceTable | None = None,
        deps: Any = None,
        policies: Sequence[Any] = (),
        approval: Any = None,
        approver: Any = None,
        approval_timeout: float | None = None,
        count_approval_wait: bool = False,
        **keywords: Any,
    ) -> None:
        self.settings: AgentSettings = resolve(model=model, mode=mode, sandbox=sandbox, limits=limits,
                                               output=output, prompts=prompts, flat=keywords)
        if self.settings.output.telemetry:  # asked for by this agent: say now if the extra is missing
            require_otel_extra()
        self.prices = prices or PriceTable()
        self.deps = deps
        self.policies = list(policies)
        self._active: set[CancelToken] = set()
        self._active_lock = threading.Lock()
        self.model: Model = self._make_model(self.settings)
        self.act_first = self._act_first()
        self.tools = [as_tool(t) for t in tools]
        self.approval = ApprovalSettings.build(approval, approver, approval_timeout, count_approval_wait, self.tools)
        try:
            self.mode: Mode = build_mode(self.settings.mode.name, self.tools, self._mode_setup(),
                                         self.settings.mode.options)
        except BaseException:
            self._close_model()
            raise

    @staticmethod
    def _make_model(settings: AgentSettings) -> Model:
        client = settings.client
        if client is None:
            return settings.model.build()  # type: ignore[no-any-return]
        if not isinstance(client, Model):
            raise ValueError(f"{client!r} is not a model: it needs chat(messages, tools) and a 'model' name")
        return client

    def _act_first(self) -> str:
        """The act_first setting: ModelSettings', a Model object's own `act_first`, else its preset's default."""
        chosen = self.settings.model.act_first or getattr(self.model, "act_first", None)
        return chosen or default_act_first(getattr(self.model, "preset", None))

    def _mode_setup(self) -> ModeSetup:
        prompts = self.settings.prompts
        if prompts.variant is None:
            local = getattr(getattr(self.model, "preset", None), "local", False)
            prompts = with_changes(prompts, variant="local" if local else "standard")
        mode = self.settings.mode
        return ModeSetup(mode.visible, mode.ranker, self.settings.sandbox, prompts)

    @property
    def mode_name(self) -> str:
        """The mode's name (e.g. for trace file names)."""
        return self.mode.name

    # ------------------------------------------------------------------ preparing a run

    def _prepare(self, task: str, *, streamed: bool = False, resume: Any = None, preset: Any = None,
                 **options: Any) -> _Run:
        """Check the run's options (one clear error each) and set up its trace and cancel token."""
        _check_options(task, options)
        gate = self.approval.gate(options.get("approver"), streamed=streamed, preset=preset)
        limits = self.settings.limits
        budget = Budget(*(limits.__dict__[k] if options.get(k) is None else options[k]
                          for k in ("max_cost", "max_total_tokens", "timeout")))
        steps = limits.max_steps if options.get("max_steps") is None else options["max_steps"]
        check_count("max_steps", steps)
        trace = options.get("trace")
        owns = trace is None
        trace = trace or self.new_trace()
        token = CancelToken()
        cancel = options.get("cancel")
        prompts: PromptSettings = self.settings.prompts
        kwargs = dict(max_steps=steps, max_result_chars=limits.max_result_chars, trace=trace,
                      system_prompt=prompts.system_prompt, instructions=prompts.instructions, prices=self.prices,
                      history=options.get("history"), budget=budget, cancel=[token, *([cancel] if cancel else [])],
                      output_type=options.get("output_type"), deps=options.get("deps", self.deps),
                      config=self._config(steps, budget, options.get("output_type")), act_first=self.act_first,
                      resume=resume, **self._policies(gate))
        return _Run(task, trace, owns, token, kwargs)

    def _policies(self, gate: CallPolicy | None = None) -> dict[str, list[Any]]:
        made = [p() if isinstance(p, type) else p for p in self.policies]  # a class: a fresh one per run
        return {"policies": [p for p in made if isinstance(p, ReplyPolicy)],
                "call_policies": [*([gate] if gate else []), *(p for p in made if isinstance(p, CallPolicy))]}

    def _config(self, steps: int, budget: Budget, output_type: Any) -> dict[str, Any]:
        """The run's settings as the trace records them (what a replay needs to run the loop the same way)."""
        model = self.model
        spec = OutputSpec(output_type) if output_type is not None else None
        return {
            "max_steps": steps, "max_result_chars": self.settings.limits.max_result_chars,
            "recover_text_calls": getattr(model, "recover_text_calls", None),
            "recover_code_blocks": getattr(model, "recover_code_blocks", None),
            "code_tool": self.mode.code_tool, "prompts": self.mode.prompts.variant, "act_first": self.act_first,
            "output": {"name": spec.name, "schema": spec.schema} if spec else None,
            "budget": {"max_cost": budget.max_cost, "max_total_tokens": budget.max_total_tokens,
                       "timeout": budget.timeout},
        }

    def new_trace(self) -> Trace:
        """A trace with this agent's sinks: extra sinks, OpenTelemetry (when telemetry is on for this run), the
        console (console=True), a JSONL file (runs_dir)."""
        out = self.settings.output
        sinks: list[Sink] = list(out.sinks)
        telemetry = resolve_telemetry(out.telemetry)
        if telemetry is not None:  # first: a missing extra is refused before any file is opened
            require_otel_extra()
            from toolmode.otel.sink import OtelSink

            sinks.append(OtelSink(telemetry))
        if out.console:
            from toolmode.console import ConsoleSink

            sinks.append(ConsoleSink(quiet=out.quiet))
        path = problem = None
        if out.runs_dir is not None:
            jsonl, problem = open_trace_file(out.runs_dir, self.mode_name)
            if jsonl is not None:
                path = jsonl.path
                sinks.insert(0, jsonl)
        trace = Trace(sinks, path=path)
        if problem:  # the run goes on without its file (e.g. `runs` is a planted or dangling link)
            trace.publish(Notice(problem, about="trace_file"))
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

        Options: `history` (earlier `result.messages`: continue the conversation, under this agent's
        system prompt), `output_type` (a pydantic model, dataclass or TypedDict: `result.output`),
        `max_cost`, `max_total_tokens`, `timeout`, `max_steps` (this run's limits), `cancel` (a
        CancelToken), `trace` (a Trace to publish into, e.g. one per chat session; the caller closes it),
        `deps` (this run's dependencies, for tools that take a `RunContext`).
        """
        return self._execute(self._prepare(task, **options))

    def resume(self, state: Any, decisions: dict[str, Any], *, continue_trace: bool = True,
               **options: Any) -> RunResult:
        """Continue a run that stopped for approval (`result.stopped == "approval"`), in this process or another.

        `state` is `result.state()` (a dict, or its JSON text); `decisions` maps every pending call id to True
        (run it), a reason (str: refuse it, the model reads the reason), False, or `{"arguments": {...}}` (run
        it with these arguments). A missing or unknown call id is a ValueError. The resumed run appends to the
        stopped run's trace file when it still exists (`continue_trace=False`: a new trace, whose `run_start`
        names the run it continues); its step numbers go on from the stopped run's, with a budget of its own.
        Other options as for `run` (not `history`).
        """
        return self._execute(self._resumed(state, decisions, continue_trace, options))

    async def aresume(self, state: Any, decisions: dict[str, Any], *, continue_trace: bool = True,
                      **options: Any) -> RunResult:
        """`resume` for asyncio, as `arun` is to `run` (cancelling the awaiting task cancels the run)."""
        return await self._awaited(self._resumed(state, decisions, continue_trace, options))

    def _resumed(self, state: Any, decisions: dict[str, Any], continue_trace: bool, options: dict[str, Any]) -> _Run:
        """The prepared run that continues `state` with `decisions` (see `resume`)."""
        from toolmode.approval.state import SavedRun

        saved = SavedRun.from_json(state)
        preset = saved.decisions(decisions)
        if saved.mode != self.mode.name:
            raise ValueError(f"the saved run was in {saved.mode!r} mode; this agent runs {self.mode.name!r}: "
                             "resume it with an agent of the same mode and tools")
        if "history" in options:
            raise ValueError("resume() continues the saved conversation; history= does not apply")
        if continue_trace and options.get("trace") is None:
            trace = self._trace_to_continue(saved)
            if trace is not None:
                options["trace"] = trace
                run = self._prepare(saved.task, resume=saved, preset=preset, **options)
                run.owns_trace = True
                return run
        return self._prepare(saved.task, resume=saved, preset=preset, **options)

    def _trace_to_continue(self, saved: Any) -> Trace | None:
        """A trace appending to the stopped run's file, with this agent's other sinks; None when it is gone."""
        from pathlib import Path

        from toolmode.trace import JsonlSink
        from toolmode.trajectory import read

        path, index = saved.trace.get("path"), saved.trace.get("run")
        if not path or not Path(path).is_file() or not isinstance(index, int):
            return None
        try:
            trajectory = read(path)
            stopped = trajectory.runs[index].end if trajectory.version >= 2 else None
            if stopped is None or stopped.stopped != "approval":  # only the stopped run's own trace is continued
                return None
            runs = len(trajectory.runs)
            sink = JsonlSink(Path(path))
        except Exception:  # noqa: BLE001 - unreadable or unwritable: a new trace says what it continues
            return None
        trace = self.new_trace()
        for old in [s for s in trace.sinks if isinstance(s, JsonlSink)]:  # a new file was opened: not used
            trace.sinks.remove(old)
            old.close()
            old.path.unlink(missing_ok=True)
        trace.sinks.insert(0, sink)
        trace.path = sink.path
        trace.follow(runs)
        return trace

    def stream(self, task: str, **options: Any) -> Iterator[BaseEvent]:
        """Run one task and yield its events as they happen (see `toolmode.events`); the last is `RunEnd`,
        whose `result` is the RunResult. Stopping the iteration early cancels the run. A call that needs
        approval (and no approver decides it) is an `ApprovalRequested` event: answer it with
        `event.approve()` or `event.deny(reason)`; the run waits for that."""
        run = self._prepare(task, streamed=True, **options)
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        run.trace.sinks.append(_QueueSink(events.put))
        thread = threading.Thread(target=contextvars.copy_context().run, args=(self._worker, run, None, events.put),
                                  name="toolmode-run", daemon=True)
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
        """`run` for asyncio: the loop runs on a worker thread (in a copy of the caller's context, so
        context variables reach the tools), async tools on the caller's event loop. Cancelling the awaiting
        task cancels the run.
        """
        return await self._awaited(self._prepare(task, **options))

    async def _awaited(self, run: _Run) -> RunResult:
        """Drive a prepared run on a worker thread and await its result (see `arun`)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(item: Any) -> None:
            if not done.done():
                done.set_result(item)

        def deliver(item: Any) -> None:
            loop.call_soon_threadsafe(settle, item)

        threading.Thread(target=contextvars.copy_context().run, args=(self._worker, run, loop, deliver),
                         name="toolmode-arun", daemon=True).start()
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
        run = self._prepare(task, streamed=True, **options)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, item)

        run.trace.sinks.append(_QueueSink(put))
        threading.Thread(target=contextvars.copy_context().run, args=(self._worker, run, loop, put),
                         name="toolmode-astream", daemon=True).start()
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

    def chat(self, **options: Any) -> Chat[Agent]:
        """A `Chat`: a conversation whose turns continue each other (`chat.send(text)`)."""
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


def _check_options(task: Any, options: dict[str, Any]) -> None:
    """One clear error for a bad run option (the budget values are checked by `Budget`)."""
    if "max_tokens" in options:
        raise ValueError("max_tokens caps each reply and is set on the Agent (ModelSettings(max_tokens=N)); "
                         "the run's token budget is max_total_tokens=")
    unknown = [k for k in options if k not in RUN_OPTIONS]
    if unknown:
        raise TypeError(f"unknown run option {unknown[0]!r}; the options are: {', '.join(RUN_OPTIONS)}")
    cancel = options.get("cancel")
    if cancel is not None and not isinstance(cancel, CancelToken):
        raise ValueError(f"cancel must be a toolmode.CancelToken, not {type(cancel).__name__}")
    if not isinstance(task, str):
        raise ValueError(f"task must be a string, not {type(task).__name__}")
    if options.get("history") is not None:
        check_history(options["history"])
    if options.get("output_type") is not None:
        OutputSpec(options["output_type"])
