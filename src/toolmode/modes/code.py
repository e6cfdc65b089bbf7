"""Code Mode: the model gets one tool, `run_code(code)`, and writes Python that calls the tools as functions.

The code runs in the sandbox worker; each tool call inside it crosses back to the host, which runs the real
tool. Only what the program prints returns to the model, so data can be filtered and reduced in the code
without entering the conversation. Hidden tools are found with `search_tools(query)`, which returns callable
handles. Hybrid mode (`toolmode.modes.hybrid`) also sends a few tools directly.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, ClassVar

from toolmode import callscope, runctx
from toolmode.approval.decision import ToolDenied
from toolmode.events import CodeExecuted, Notice
from toolmode.models.text_calls import RUN_CODE  # the one definition of the code tool's name
from toolmode.modes.base import Catalog, FailedResult, Mode, ModeSetup, UnknownTool
from toolmode.modes.registry import register_mode
from toolmode.prompts import PromptSet
from toolmode.sandbox import CodeResult, Handles, Sandbox, SandboxLimits, StubSpec
from toolmode.settings import PromptSettings
from toolmode.tools.base import Tool, result_text
from toolmode.tools.search import ToolIndex


@dataclass(frozen=True)
class CodeOptions:
    """`search_k`: how many tools `search_tools()` returns by default."""

    search_k: int = 5


@register_mode
class CodeMode(Mode):
    """One `run_code` tool; the model's program calls the tools as functions in the sandbox."""

    name = "code"
    summary = "one run_code tool: the model writes Python that calls the tools"
    Options = CodeOptions
    prompt_files: ClassVar[tuple[str | Traversable | Path, ...]] = ("code.toml",)
    code_tool = RUN_CODE

    @classmethod
    def build(cls, tools: Iterable[Any], setup: ModeSetup, options: Any) -> CodeMode:
        """The mode for an Agent: `setup` (visible, ranker, sandbox, prompts) and `options` (CodeOptions)."""
        box = setup.sandbox
        return cls(tools, workspace=box.workspace, visible=setup.visible, sandbox=box.policy, limits=box.limits,
                   persistent=box.persistent, search_k=options.search_k, ranker=setup.ranker,
                   allow_env_in_workspace=box.allow_env_in_workspace, prompts=setup.prompts,
                   direct=getattr(options, "direct", None))

    def __init__(
        self,
        tools: Iterable[Tool | Any],
        *,
        workspace: Path | str | None = None,
        visible: Sequence[str] | None = None,
        direct: Sequence[str] | None = None,
        sandbox: str = "auto",
        limits: SandboxLimits | None = None,
        persistent: bool = False,
        search_k: int = 5,
        ranker: str = "bm25",
        allow_env_in_workspace: bool = False,
        prompts: PromptSettings | PromptSet | str | None = None,
    ) -> None:
        self.prompts = self.load_prompts(prompts)
        self.sandbox_policy = sandbox
        self.catalog = Catalog(tools, visible)
        self.direct = list(direct or [])
        for n in self.direct:
            self.catalog.get(n)
        self.persistent = persistent
        self.search_k = search_k
        self.index = ToolIndex(list(self.catalog.tools.values()), ranker) if self.catalog.hidden else None
        self._own_workspace = workspace is None  # a private temporary folder, removed at close()
        folder = Path(tempfile.mkdtemp(prefix="toolmode-workspace-")) if workspace is None else Path(workspace)
        try:
            self.sandbox = Sandbox(folder, limits or SandboxLimits(), policy=sandbox, persistent=persistent,
                                   allow_env_in_workspace=allow_env_in_workspace)
        except BaseException:
            if self._own_workspace:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        self._stubs = [_stub(t) for t in self.catalog.visible]
        if self.index is not None:
            self._stubs.append(
                StubSpec(
                    name="search_tools",
                    params=["query", "k"],
                    signature="search_tools(query: str, k: int = 5) -> list[Handle]",
                    doc="Find hidden tools; returns callable handles: h(...) calls it, h.describe() shows its docs.",
                )
            )
        self._lock = threading.Lock()
        self._outside_run: set[str] = set()  # names defined by programs run outside a run (tests, direct calls)
        self._run_code_tool = self._make_run_code_tool()
        self._schemas: list[dict[str, Any]] | None = None

    def system_prompt(self) -> str:
        """Tells the model to compute in code (the prompt set's `system`)."""
        return self.prompts.text("system")

    def _defined(self) -> set[str]:
        """Names the earlier programs of the current run assigned (for the fresh-namespace hint): each run
        starts with none, and concurrent runs never share them."""
        state: set[str] | None = runctx.run_state(self, set)
        return self._outside_run if state is None else state

    def reset(self) -> None:
        """Forget the names defined by programs run outside a run."""
        self._outside_run = set()

    def notes(self) -> list[str]:
        """The sandbox policy in force, and the workspace when it is a private temporary one."""
        notes = [self.sandbox.describe_policy()]
        if self._own_workspace:
            notes.append(f"workspace: {self.sandbox.workspace} (temporary; pass workspace= to use a folder of yours)")
        return notes

    def quick_index(self) -> str:
        """One line per visible tool: `name(params) -> ReturnType - short doc`, and search_tools if any."""
        lines = [_index_line(t) for t in self.catalog.visible]
        if self.index is not None:
            lines.append(self.prompts.text("search_line", hidden=len(self.catalog.hidden)))
        return "\n".join(lines)

    def _make_run_code_tool(self) -> Tool:
        persistence = self.prompts.text("persistent_namespace" if self.persistent else "fresh_namespace")
        description = self.prompts.text("run_code", persistence=persistence, index=self.quick_index())

        def run_code(code: str) -> str:
            raise NotImplementedError  # a placeholder: run_code is executed by the sandbox

        tool = Tool.from_function(run_code, name=RUN_CODE, description=description)
        tool.parameters["properties"]["code"]["description"] = self.prompts.text("run_code_code")
        return tool

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Direct tools (hybrid) then run_code; one list object for the whole run (its encoding is reused)."""
        if self._schemas is None:
            self._schemas = [*(self.catalog.tools[n].schema() for n in self.direct), self._run_code_tool.schema()]
        return self._schemas

    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run a program in the sandbox, or a direct tool in hybrid mode."""
        if name in self.direct:
            return result_text(self.catalog.tools[name](**arguments))
        if name != RUN_CODE:
            offered = ", ".join([*self.direct, RUN_CODE])
            raise UnknownTool(self.prompts.text("unknown_tool", name=repr(name), offered=offered))
        code = _tidy(self._run_code_tool.validate(arguments)["code"])
        # One worker per mode: programs from parallel run_code calls take turns.
        run = runctx.current()
        deadline = run.limits.deadline if run is not None and math.isfinite(run.limits.deadline) else None
        defined = self._defined()
        parent = callscope.current()
        calls = itertools.count(1)  # a program's calls get ids `<run_code call id>#<n>` (approval names them)

        def host_call(name: str, kwargs: dict[str, Any]) -> Any:
            return self._host_call(name, kwargs, f"{parent.call_id if parent else RUN_CODE}#{next(calls)}")

        with self._lock:
            started = time.monotonic()
            result = self.sandbox.run(code, self._stubs, host_call, deadline,
                                      skip_empty_tool_defs=self.prompts.variant == "local")
            seconds = time.monotonic() - started
            earlier = set(defined)
            # A program that failed at line N set only what its statements before line N assign.
            defined.update(_assigned(code, result.line if result.error else None))
        if run is not None:
            self._published(result, seconds, run.step)
        if result.repaired:  # marked in the trace like a recovered call
            runctx.emit(Notice(f"run_code: {result.repaired}", run.step if run is not None else None,
                               about="code_repaired"))
        if not result.error:
            return result.text()
        m = re.search(r"NameError: name '(\w+)' is not defined", result.error)
        if m and m.group(1) in earlier and not self.persistent:
            result.error += self.prompts.text("fresh_namespace_hint", name=m.group(1))
        if _NETWORK.search(result.error):  # small models fetch with `requests` instead of calling the tools
            visible = self.catalog.visible_names[:8]  # what the program has as functions
            offered = ", ".join(visible + (["search_tools"] if self.index is not None else [])) or "none"
            result.error += self.prompts.text("no_network_hint", tools=offered)
        if "PermissionError" in result.error and _PROCESS_CALL.search(result.error):
            text = "no_processes" if "run_shell" in self.catalog.tools else "no_processes_no_shell"
            result.error = result.error.replace("[Errno 1] Operation not permitted", self.prompts.text(text))
        return FailedResult(result.text())

    def _published(self, result: CodeResult, seconds: float, step: int) -> None:
        """Publish the execution (tier, limits, time, outcome) for the run's sinks, e.g. telemetry, and keep
        how many tool calls the program made for the run's policies (`program_calls`)."""
        scope = callscope.current()
        keep_program_calls(result.calls)
        runctx.emit(CodeExecuted(
            step, scope.call_id if scope is not None else None,
            self.sandbox.policy, asdict(self.sandbox.limits), seconds,  # the tier's name (sandbox.tiers)
            result.calls, result.truncated, _failure(result),
        ))

    def _host_call(self, name: str, kwargs: dict[str, Any], call_id: str | None = None) -> Any:
        """A tool call arriving from the sandboxed program; the run's call policies see it first (approval:
        the program waits for the decision; a refusal raises ToolDenied in the program)."""
        if name == "search_tools" and self.index is not None:
            query = kwargs.get("query", "")
            k = int(kwargs.get("k", self.search_k))
            return Handles([_stub(t) for t in self.index.search(str(query), k=max(1, min(k, 20)))])
        context = runctx.current()
        run = context.run if context is not None else None
        if run is not None and call_id is not None:
            outcome = run.check_program_call(name, kwargs, call_id)
            if isinstance(outcome, str):
                raise ToolDenied(outcome)
            if isinstance(outcome, dict):
                kwargs = outcome
        return _jsonable(self.catalog.get(name)(**kwargs))

    def close(self) -> None:
        """Stop the sandbox worker (and remove the private temporary workspace, if it made one)."""
        self.sandbox.close()
        if self._own_workspace:
            shutil.rmtree(self.sandbox.workspace, ignore_errors=True)


_PROGRAM_CALLS = object()  # the key of the per-run {call id: tool calls its program made}


def keep_program_calls(calls: int) -> None:
    """Keep, for the run's policies, how many tool calls the program of the current `run_code` call made."""
    scope = callscope.current()
    made: dict[str | None, int] | None = runctx.run_state(_PROGRAM_CALLS, dict)
    if made is not None and scope is not None:
        made[scope.call_id] = calls


def program_calls(context: runctx.RunContext[Any]) -> dict[str, int]:
    """How many tool calls each `run_code` program of the run made, by the id of its call (a program that
    called no tool computed nothing from the tools: issue 18, full_alien and people_in_sales)."""
    return context.state.get(id(_PROGRAM_CALLS)) or {}


# A program that tried the network: an HTTP library that is not there, or a connection the sandbox refused.
_NETWORK = re.compile(r"No module named '(?:requests|httpx|aiohttp|urllib3|selenium|bs4|scrapy|pycurl|websockets?)'"
                      r"|\bURLError\b|\bgaierror\b|Network is unreachable|Name or service not known")
_PROCESS_CALL = re.compile(r"\bsubprocess\b|\bPopen\b|\bos\.(?:system|popen|exec\w*|spawn\w*|fork\w*|posix_spawn\w*)\b")


_EXCEPTION_LINE = re.compile(r"^(?:Error: )?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Cancelled))\b", re.M)


def _failure(result: CodeResult) -> str | None:
    """How a program failed, in a word: "timeout", its exception's class name, "error"; None if it did not."""
    if result.timed_out:
        return "timeout"
    if not result.error:
        return None
    found = _EXCEPTION_LINE.findall(result.error)
    return found[-1] if found else "error"


def _assigned(code: str, before: int | None = None) -> set[str]:
    """Top-level names a program assigns, defines or imports (empty if it does not parse); with `before`, only
    in the top-level statements that end before that line (a program that failed there set no more)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if before is not None and (node.end_lineno or node.lineno) >= before:
            break
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
    return names


def _tidy(code: str) -> str:
    """The program as the model meant it: a wrapping Markdown fence removed, common indentation dedented."""
    lines = code.strip("\n").splitlines()
    if len(lines) >= 2 and lines[0].lstrip().startswith("```") and lines[-1].strip() == "```":
        code = "\n".join(lines[1:-1])
    return textwrap.dedent(code)


def _index_line(t: Tool, limit: int = 240) -> str:
    """`signature - summary`, plus the shape of structured results so the model need not guess keys."""
    line = f"{t.signature()} - {t.summary()}"
    kind = (t.return_schema or {}).get("type")
    structured = (t.returns or "").split("[")[0] in ("dict", "list") or kind in ("object", "array")
    if t.returns_doc and structured:
        shape = " ".join(t.returns_doc.split())
        line += f" Returns: {shape if len(shape) <= limit else shape[:limit] + '...'}"
    return line


def _stub(t: Tool) -> StubSpec:
    doc = t.description
    if t.return_schema and t.returns in (None, "dict", "list", "Any"):
        doc += f"\n\nReturns (JSON schema): {json.dumps(t.return_schema, ensure_ascii=False)}"
    params = list(t.parameters.get("properties", {}))
    return StubSpec(name=t.name, params=params, signature=t.signature(), doc=doc, varargs=t.varargs)


def _jsonable(value: Any) -> Any:
    """Tool results cross to the sandbox as JSON; anything else (dates, paths) becomes its string form."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
