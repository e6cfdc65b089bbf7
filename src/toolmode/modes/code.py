"""Code Mode: the model gets one tool, `run_code(code)`, and writes Python that calls the tools as functions.

The code runs in the sandbox worker; each tool call inside it crosses back to the host, which runs the real
tool. Only what the program prints returns to the model, so data can be filtered and reduced in the code
without entering the conversation. Hidden tools are found with `search_tools(query)`, which returns callable
handles. Hybrid mode (`direct=[...]`) also sends a few tools directly.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from toolmode import runctx
from toolmode.events import CodeExecuted, Notice
from toolmode.modes.base import Catalog, FailedResult, Mode, UnknownTool
from toolmode.modes.prompts import LOCAL_CODE_PROMPT, LOCAL_HYBRID_PROMPT, check_style
from toolmode.sandbox import CodeResult, Handles, Sandbox, SandboxLimits, StubSpec
from toolmode.tools import callscope
from toolmode.tools.base import Tool, result_text
from toolmode.tools.search import ToolIndex

RUN_CODE = "run_code"
NO_PROCESSES = "no processes here: use run_shell()"  # the worker raises the same text for os.system

CODE_PROMPT = (
    "Solve the task by writing Python for the run_code tool. Inside the code, tools are plain functions "
    "that return data (see their return types in the run_code description). Do loops, filtering and "
    "arithmetic in the code and print only the summary you need: only printed output comes back to you."
)
HYBRID_PROMPT = (
    "For one or two simple operations, call a tool directly. For loops, batches, many files or arithmetic, "
    "write Python with run_code, where every tool is a plain function and only printed output comes back."
)


class CodeMode(Mode):
    """`run_code` plus, in hybrid form, a few tools sent directly (`direct=[names]`)."""

    name = "code"

    def __init__(
        self,
        tools: Iterable[Tool | Any],
        *,
        workspace: Path | str = ".",
        visible: Sequence[str] | None = None,
        direct: Sequence[str] | None = None,
        sandbox: str = "auto",
        limits: SandboxLimits | None = None,
        persistent: bool = False,
        search_k: int = 5,
        ranker: str = "bm25",
        allow_env_in_workspace: bool = False,
        prompts: str = "standard",
    ) -> None:
        self.prompts = check_style(prompts)
        self.catalog = Catalog(tools, visible)
        self.direct = list(direct or [])
        for n in self.direct:
            self.catalog.get(n)
        if self.direct:
            self.name = "hybrid"
        self.persistent = persistent
        self.search_k = search_k
        self.index = ToolIndex(list(self.catalog.tools.values()), ranker) if self.catalog.hidden else None
        self.sandbox = Sandbox(Path(workspace), limits or SandboxLimits(), policy=sandbox, persistent=persistent,
                               allow_env_in_workspace=allow_env_in_workspace)
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
        self._defined: set[str] = set()  # names earlier programs of this run assigned (fresh namespace hint)
        self._run_code_tool = self._make_run_code_tool()
        self._schemas: list[dict[str, Any]] | None = None

    def system_prompt(self) -> str:
        """Tells the model to compute in code (or, in hybrid, when to use code); `prompts="local"`: the short,
        example-led version for small models."""
        if self.prompts == "local":
            return LOCAL_HYBRID_PROMPT if self.direct else LOCAL_CODE_PROMPT
        return HYBRID_PROMPT if self.direct else CODE_PROMPT

    def reset(self) -> None:
        """A new run: forget the names earlier programs defined."""
        self._defined.clear()

    def notes(self) -> list[str]:
        """The sandbox policy in force."""
        return [self.sandbox.describe_policy()]

    def quick_index(self) -> str:
        """One line per visible tool: `name(params) -> ReturnType - short doc`, and search_tools if any."""
        lines = [_index_line(t) for t in self.catalog.visible]
        if self.index is not None:
            lines.append(
                f"search_tools(query: str, k: int = 5) -> list[Handle] - find {len(self.catalog.hidden)} more "
                "tools; a handle is callable, handle.describe() gives its full docs"
            )
        return "\n".join(lines)

    def _make_run_code_tool(self) -> Tool:
        persistence = (
            "Variables, imports and functions persist between run_code calls; "
            "print(sorted(k for k in globals() if not k.startswith('_'))) lists what is stored."
            if self.persistent
            else "Each call starts with a fresh namespace: nothing persists between calls."
        )
        description = (
            "Run Python code in a sandbox (no network, files only in the workspace). Only what the program "
            "prints comes back, so filter and summarise inside the code; long output is cut. "
            f"{persistence} These functions are already defined in the namespace:\n{self.quick_index()}"
        )

        def run_code(code: str) -> str:
            """Placeholder: run_code is executed by the sandbox, not through this function."""
            raise NotImplementedError

        tool = Tool.from_function(run_code, description=description)
        tool.parameters["properties"]["code"]["description"] = "A complete Python program; print the results."
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
            raise UnknownTool(
                f"unknown tool {name!r}; available tools: {offered}. In code, call the other tools as functions."
            )
        code = _tidy(self._run_code_tool.validate(arguments)["code"])
        # One worker per mode: programs from parallel run_code calls take turns.
        run = runctx.current()
        deadline = run.limits.deadline if run is not None and math.isfinite(run.limits.deadline) else None
        with self._lock:
            started = time.monotonic()
            result = self.sandbox.run(code, self._stubs, self._host_call, deadline)
            seconds = time.monotonic() - started
            earlier, self._defined = self._defined, self._defined | _assigned(code)
        if run is not None:
            self._published(result, seconds, run.step)
        if result.repaired:  # marked in the trace like a recovered call
            runctx.emit(Notice(f"run_code: {result.repaired}", run.step if run is not None else None))
        if not result.error:
            return result.text()
        m = re.search(r"NameError: name '(\w+)' is not defined", result.error)
        if m and m.group(1) in earlier and not self.persistent:
            result.error += (f"\n({m.group(1)} was set by an earlier run_code call, but each call starts with a fresh "
                             "namespace: compute it again in this program)")
        if "PermissionError" in result.error and _PROCESS_CALL.search(result.error):
            result.error = result.error.replace("[Errno 1] Operation not permitted", NO_PROCESSES)
            if "run_shell" not in self.catalog.tools:
                result.error = result.error.replace(": use run_shell()", " (the sandbox cannot start programs)")
        return FailedResult(result.text())

    def _published(self, result: CodeResult, seconds: float, step: int) -> None:
        """Publish the execution (tier, limits, time, outcome) for the run's sinks, e.g. telemetry."""
        scope = callscope.current()
        runctx.emit(CodeExecuted(
            step, scope.call_id if scope is not None else None,
            self.sandbox.policy, asdict(self.sandbox.limits), seconds,  # the tier's name (sandbox.tiers)
            result.calls, result.truncated, _failure(result),
        ))

    def _host_call(self, name: str, kwargs: dict[str, Any]) -> Any:
        """A tool call arriving from the sandboxed program."""
        if name == "search_tools" and self.index is not None:
            query = kwargs.get("query", "")
            k = int(kwargs.get("k", self.search_k))
            return Handles([_stub(t) for t in self.index.search(str(query), k=max(1, min(k, 20)))])
        return _jsonable(self.catalog.get(name)(**kwargs))

    def close(self) -> None:
        """Stop the sandbox worker."""
        self.sandbox.close()


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


def _assigned(code: str) -> set[str]:
    """Top-level names a program assigns, defines or imports (empty if it does not parse)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in tree.body:
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
