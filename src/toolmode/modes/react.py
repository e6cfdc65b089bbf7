"""ReAct mode: native function calling. Every visible tool's schema is sent; calls are dispatched by name.

With hidden (deferred) tools, two ways to reach them:
- `search="load"`: a `search_tools` tool; the full schemas of the tools it finds are appended to every
  later request. Append only: earlier tools never move, so each request's prefix stays byte-identical
  and the provider's prompt cache keeps hitting.
- `search="proxy"`: a fixed trio `search_tools`, `describe_tool`, `call_tool(name, arguments)`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolmode import runctx
from toolmode.bounded import loads_json
from toolmode.modes.base import Catalog, Mode, ModeSetup
from toolmode.modes.registry import register_mode
from toolmode.prompts import PromptSet
from toolmode.settings import PromptSettings
from toolmode.tools.base import Tool, result_text
from toolmode.tools.search import ToolIndex

SearchStyle = Literal["load", "proxy"]


@dataclass(frozen=True)
class ReactOptions:
    """`search`: how hidden tools are found ("load" or "proxy"; None: "load" when some are hidden);
    `search_k`: how many tools a search returns by default."""

    search: SearchStyle | None = None
    search_k: int = 5


class _Loaded:
    """Per-run state: the tools a search loaded, in order, and the schema list built for them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.schemas: tuple[int, list[dict[str, Any]]] | None = None


@register_mode
class ReactMode(Mode):
    """Native tool calling, optionally with tool search (`search="load"` or `"proxy"`)."""

    name = "react"
    summary = "native tool calls"
    Options = ReactOptions
    prompt_files = ("react.toml",)

    @classmethod
    def build(cls, tools: Iterable[Any], setup: ModeSetup, options: Any) -> ReactMode:
        """The mode for an Agent: `setup` (visible, ranker, prompts, the sandbox policy for run_shell) and
        `options` (a ReactOptions)."""
        return cls(tools, visible=setup.visible, search=options.search, search_k=options.search_k,
                   ranker=setup.ranker, prompts=setup.prompts, sandbox=setup.sandbox.policy)

    def __init__(
        self,
        tools: Iterable[Tool | Any],
        *,
        visible: Sequence[str] | None = None,
        search: SearchStyle | None = None,
        search_k: int = 5,
        ranker: str = "bm25",
        prompts: PromptSettings | PromptSet | str | None = None,
        sandbox: str | None = None,
    ) -> None:
        self.prompts = self.load_prompts(prompts)
        self.sandbox_policy = sandbox
        self.catalog = Catalog(tools, visible)
        if search is None and self.catalog.hidden:
            search = "load"  # hidden tools would be unreachable otherwise
        if search not in (None, "load", "proxy"):
            raise ValueError(f"search must be None, 'load' or 'proxy', not {search!r}")
        self.search = search
        self.search_k = search_k
        self.index = ToolIndex(list(self.catalog.tools.values()), ranker) if search else None
        self._outside_run = _Loaded()  # used when the mode is driven without a run (tests, direct calls)
        self._lock = threading.Lock()
        self._meta = self._meta_tools()

    def notes(self) -> list[str]:
        """Lines shown at the start of a run: how the tools that run the model's commands are confined (the
        builtin run_shell's sandbox tier)."""
        return [note(self.sandbox_policy) for tool in self.catalog.tools.values()
                if callable(note := getattr(tool.fn, "sandbox_note", None))]

    def _meta_tools(self) -> dict[str, Tool]:
        if self.search is None:
            return {}
        meta: list[tuple[Any, str]] = [(self._search_tools, "search_tools")]
        if self.search == "proxy":
            meta += [(self._describe_tool, "describe_tool"), (self._call_tool, "call_tool")]
        tools = [self._described(fn, name) for fn, name in meta]
        return {t.name: t for t in tools}

    def _described(self, fn: Any, name: str) -> Tool:
        """A meta tool whose description and parameter descriptions come from the prompt set."""
        tool = Tool.from_function(fn, name=name, description=self.prompts.text(name))
        for param, spec in tool.parameters.get("properties", {}).items():
            spec["description"] = self.prompts.text(f"{name}_{param}")
        return tool

    def _state(self) -> _Loaded:
        """The current run's loaded tools: each run starts with none, and concurrent runs never share them."""
        return runctx.run_state(self, _Loaded) or self._outside_run

    @property
    def loaded(self) -> list[str]:
        """Names of the tools a search loaded in the current run."""
        return self._state().names

    def reset(self) -> None:
        """Forget the tools loaded outside a run (runs keep theirs in the run's own state)."""
        with self._lock:
            self._outside_run = _Loaded()

    def system_prompt(self) -> str | None:
        """The prompt set's `lead` (in the local variant: stop calling tools once you have the answer) and,
        when tools are hidden, how they are found (`search_load` / `search_proxy`)."""
        lead = self.prompts.text("lead")
        search = self.prompts.text(f"search_{self.search}") if self.search else None
        return "\n".join(p for p in (lead, search) if p) or None

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Visible tools, then the search tools, then (load) the found tools in the order they were found.

        The same list object comes back until a search loads more tools (the client reuses its encoding).
        """
        state = self._state()
        with self._lock:
            if state.schemas is None or state.schemas[0] != len(state.names):
                schemas = [t.schema() for t in self.catalog.visible]
                schemas += [t.schema() for t in self._meta.values()]
                schemas += [self.catalog.tools[n].schema() for n in state.names]
                state.schemas = (len(state.names), schemas)
            return state.schemas[1]

    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run a visible, loaded or search tool."""
        if name in self._meta:
            return result_text(self._meta[name](**arguments))
        state = self._state()
        with self._lock:
            allowed = [*self.catalog.visible_names, *state.names]
        return result_text(self.catalog.get(name, allowed)(**arguments))

    # The meta tools. What the model reads about them comes from the prompt set (see `_described`).

    def _search_tools(self, query: str, k: int = 5) -> str:
        assert self.index is not None
        hits = self.index.search(query, k=max(1, min(k, 20)))
        if not hits:
            return self.prompts.text("search_none", query=repr(query))
        lines = "\n".join(f"{t.signature()} - {t.summary()}" for t in hits)
        if self.search == "load":
            state = self._state()
            with self._lock:
                shown = set(self.catalog.visible_names) | set(state.names)
                new = [t.name for t in hits if t.name not in shown]
                state.names.extend(new)
        return self.prompts.text(f"search_found_{self.search}", lines=lines)

    def _describe_tool(self, name: str) -> str:
        t = self.catalog.get(name)
        return f"{t.signature()}\n\n{t.description}\n\nArguments (JSON schema): {json.dumps(t.parameters, ensure_ascii=False)}"

    def _call_tool(self, name: str, arguments: dict[str, Any] | str | None = None) -> Any:
        if isinstance(arguments, str):  # models often send the object as a JSON string
            try:
                arguments = loads_json(arguments) if arguments.strip() else {}  # bounded: the model wrote it
            except json.JSONDecodeError as exc:
                raise ValueError(f"call_tool: arguments is not a JSON object ({exc.msg})") from None
        if not isinstance(arguments, dict):
            raise ValueError("call_tool: arguments must be a JSON object")
        return self.catalog.get(name)(**arguments)
