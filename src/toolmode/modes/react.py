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
from typing import Any, Literal

from toolmode import runctx
from toolmode.modes.base import Catalog, Mode
from toolmode.modes.prompts import LOCAL_REACT_PROMPT, check_style
from toolmode.tools.base import Tool, result_text
from toolmode.tools.search import ToolIndex

SearchStyle = Literal["load", "proxy"]


class _Loaded:
    """Per-run state: the tools a search loaded, in order, and the schema list built for them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.schemas: tuple[int, list[dict[str, Any]]] | None = None


class ReactMode(Mode):
    """Native tool calling, optionally with tool search (`search="load"` or `"proxy"`)."""

    name = "react"

    def __init__(
        self,
        tools: Iterable[Tool | Any],
        *,
        visible: Sequence[str] | None = None,
        search: SearchStyle | None = None,
        search_k: int = 5,
        ranker: str = "bm25",
        prompts: str = "standard",
    ) -> None:
        self.prompts = check_style(prompts)
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

    def _meta_tools(self) -> dict[str, Tool]:
        if self.search is None:
            return {}
        meta = [Tool.from_function(self._search_tools, name="search_tools")]
        if self.search == "proxy":
            meta += [
                Tool.from_function(self._describe_tool, name="describe_tool"),
                Tool.from_function(self._call_tool, name="call_tool"),
            ]
        return {t.name: t for t in meta}

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
        """Explains how hidden tools are found, when there are any; `prompts="local"` adds one line that
        tells a small model to stop calling tools once it has the answer."""
        lead = LOCAL_REACT_PROMPT if self.prompts == "local" else None
        search = self._search_prompt()
        return "\n".join(p for p in (lead, search) if p) or None

    def _search_prompt(self) -> str | None:
        if self.search == "load":
            return (
                "Some tools are not listed yet. Call search_tools(query) with a few words describing the "
                "capability you need; the tools it finds become callable directly from the next step on."
            )
        if self.search == "proxy":
            return (
                "More tools exist than are listed. Find them with search_tools(query), read one with "
                "describe_tool(name), and run it with call_tool(name, arguments)."
            )
        return None

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

    # The meta tools. Their docstrings are what the model reads.

    def _search_tools(self, query: str, k: int = 5) -> str:
        """Find tools for a capability.

        Args:
            query: A few words describing what the tool should do, e.g. "download web page".
            k: How many tools to return at most.
        """
        assert self.index is not None
        hits = self.index.search(query, k=max(1, min(k, 20)))
        if not hits:
            return f"No tool matches {query!r}. Try other words."
        lines = [f"{t.signature()} - {t.summary()}" for t in hits]
        if self.search == "load":
            state = self._state()
            with self._lock:
                shown = set(self.catalog.visible_names) | set(state.names)
                new = [t.name for t in hits if t.name not in shown]
                state.names.extend(new)
            return "\n".join(lines) + "\nThese tools are callable directly from now on."
        return "\n".join(lines) + "\nUse describe_tool(name) for details and call_tool(name, arguments) to run one."

    def _describe_tool(self, name: str) -> str:
        """Show a tool's full signature, documentation and JSON schema of its arguments.

        Args:
            name: The tool's exact name, as returned by search_tools.
        """
        t = self.catalog.get(name)
        return f"{t.signature()}\n\n{t.description}\n\nArguments (JSON schema): {json.dumps(t.parameters, ensure_ascii=False)}"

    def _call_tool(self, name: str, arguments: dict[str, Any] | str | None = None) -> Any:
        """Run any tool by name.

        Args:
            name: The tool's exact name.
            arguments: The tool's arguments as a JSON object.
        """
        if isinstance(arguments, str):  # models often send the object as a JSON string
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"call_tool: arguments is not a JSON object ({exc.msg})") from None
        if not isinstance(arguments, dict):
            raise ValueError("call_tool: arguments must be a JSON object")
        return self.catalog.get(name)(**arguments)
