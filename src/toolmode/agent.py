"""`Agent`: a model, tools and a mode, put together; `agent.run(task)` runs the shared loop."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolmode.console import ConsoleSink
from toolmode.loop import DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_STEPS, run_agent
from toolmode.models.client import ModelClient
from toolmode.models.pricing import PriceTable
from toolmode.modes import Mode, make_mode
from toolmode.result import RunResult
from toolmode.tools.base import as_tool
from toolmode.trace import JsonlSink, Sink, Trace, new_trace_path


class Agent:
    """A model + tools + a mode.

    The model comes from the arguments or the environment (DeepSeek by default: `DEEPSEEK_API_KEY`,
    `deepseek-v4-flash`). Each `run` prints the step view (unless `console=False`) and writes a JSONL
    trace under `runs_dir` (unless `runs_dir=None`).

    Arguments, by group:
    - tools and mode: `tools` (Tools or plain functions), `mode` ("react", "code", "hybrid"), `search`
      ("load" / "proxy", react only), `ranker` ("bm25" / "fused"), `visible` (names shown; the rest are
      found by search), `direct` (hybrid: tools sent beside run_code), `workspace` (where code and file
      tools may write), `sandbox` ("auto", "landlock", "bwrap", "none" = unsafe), `sandbox_limits`,
      `persistent` (code namespace kept between run_code calls), `allow_env_in_workspace` (let the sandbox
      run in a workspace that contains toolmode's own Python environment: unsafe, refused by default);
    - model: `model`, `base_url`, `api_key`, `api_key_env`, `preset` (deepseek, openai, openrouter,
      ollama, vllm, llamacpp), `stream`, `model_params` (extra request fields, e.g. temperature),
      `recover_text_calls`, `recover_code_blocks` (None: on for local presets), `request_timeout` (seconds
      per request), `client` (a ready ModelClient);
    - prompts: `prompts` ("standard", or "local": short example-led prompts for small models; None: "local"
      for local presets);
    - loop: `max_steps`, `max_result_chars`, `system_prompt`, `prices` (a PriceTable);
    - output: `console`, `quiet`, `sinks` (extra trace sinks), `runs_dir` (None: no trace file).
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
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        preset: str | None = None,
        workspace: Path | str = ".",
        max_steps: int = DEFAULT_MAX_STEPS,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        system_prompt: str | None = None,
        sinks: Sequence[Sink] | None = None,
        console: bool = True,
        quiet: bool = False,
        runs_dir: Path | str | None = "runs",
        stream: bool = False,
        sandbox: str = "auto",
        persistent: bool = False,
        sandbox_limits: Any = None,
        allow_env_in_workspace: bool = False,
        recover_text_calls: bool = True,
        recover_code_blocks: bool | None = None,
        model_params: dict[str, Any] | None = None,
        prices: PriceTable | None = None,
        client: ModelClient | None = None,
        request_timeout: float = 120.0,
        prompts: str | None = None,
    ) -> None:
        self.mode_name = mode
        self.max_steps = max_steps
        self.max_result_chars = max_result_chars
        self.system_prompt = system_prompt
        self.extra_sinks = list(sinks or [])
        self.console = console
        self.quiet = quiet
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self.prices = prices or PriceTable()
        self._retry_trace: Trace | None = None
        self.model = client or ModelClient(
            model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            preset=preset,
            stream=stream,
            recover_text_calls=recover_text_calls,
            recover_code_blocks=recover_code_blocks,
            params=model_params,
            on_retry=self._on_retry,
            request_timeout=request_timeout,
        )
        if prompts is None:
            prompts = "local" if self.model.preset.local else "standard"
        self.tools = [as_tool(t) for t in tools]
        try:
            self.mode: Mode = make_mode(
                mode, self.tools, search=search, visible=visible, direct=direct,
                workspace=workspace, sandbox=sandbox, persistent=persistent, sandbox_limits=sandbox_limits,
                ranker=ranker, allow_env_in_workspace=allow_env_in_workspace, prompts=prompts,
            )
        except BaseException:
            self.model.close()
            raise

    def _on_retry(self, attempt: int, wait: float, reason: str) -> None:
        if self._retry_trace is not None:
            self._retry_trace.emit("retry", attempt=attempt, wait=wait, reason=reason)

    def run(self, task: str) -> RunResult:
        """Run one task to an answer, the step limit, or a model error."""
        sinks: list[Sink] = list(self.extra_sinks)
        if self.console:
            sinks.append(ConsoleSink(quiet=self.quiet))
        trace_path = None
        if self.runs_dir is not None:
            trace_path = new_trace_path(self.runs_dir, self.mode_name)
            sinks.insert(0, JsonlSink(trace_path))
        trace = Trace(sinks, path=trace_path)
        self.mode.reset()  # before the banner, so it lists what the first request really sends
        self._retry_trace = trace
        trace.emit(
            "run_start", task=task, mode=self.mode.name, model=self.model.model, base_url=self.model.base_url,
            tools_sent=[s["function"]["name"] for s in self.mode.tool_schemas()], notes=self.mode.notes(),
            trace_path=str(trace_path) if trace_path else None,
        )
        try:
            result = run_agent(
                task, self.mode, self.model, max_steps=self.max_steps, max_result_chars=self.max_result_chars,
                trace=trace, system_prompt=self.system_prompt, prices=self.prices,
            )
        finally:
            self._retry_trace = None
            trace.close()
        result.trace_path = trace_path
        return result

    def close(self) -> None:
        """Stop the mode's resources (sandbox worker), MCP servers started for this agent's tools, and the HTTP client."""
        self.mode.close()
        for t in self.tools:
            close = getattr(t.fn, "close", None) if t.source.startswith("mcp:") else None
            if close is not None:
                close()  # the server restarts on a later call, so shared tools stay usable
        self.model.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

