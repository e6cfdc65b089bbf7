"""The seam between the loop and a mode: which tools are sent, and how a call is handled.

A mode is one class: a `name`, an `Options` dataclass (its own options, e.g. react's `search`), the prompt
files its texts come from, and `build(tools, setup, options)`. Register it with `@register_mode`
(`toolmode.modes.registry`) and the Agent, `toolmode run`/`chat` (`--mode`, `/mode`) and the bench
(`--modes`) all offer it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, ClassVar

from toolmode.errors import ToolmodeError
from toolmode.prompts import POLICIES, PromptSet, packaged
from toolmode.settings import PromptSettings, SandboxSettings
from toolmode.tools.base import Tool, as_tool, prefix_colliding_mcp_tools


class UnknownTool(ToolmodeError, LookupError):
    """The model called a tool this run does not offer."""


@dataclass(frozen=True)
class NoOptions:
    """A mode without options of its own."""


@dataclass
class ModeSetup:
    """What every mode may use besides its tools and its own options: which tools are shown, the tool
    search ranker, the sandbox settings (for modes that run code) and the prompt settings."""

    visible: Sequence[str] | None = None
    ranker: str = "bm25"
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    prompts: PromptSettings = field(default_factory=PromptSettings)


class FailedResult(str):
    """A result text that reports a failure (a program that raised): the loop marks the call `error: true`."""


class Mode(ABC):
    """A mode decides `tool_schemas()` (sent with every request) and `handle_call()`; the loop does the rest.

    `handle_call` returns the text for the model, or raises: `UnknownTool`, `ToolArgumentError` or the
    tool's own exception; the loop turns exceptions into `Error: <Type>: <message>`. It may be called from
    several threads at once (parallel tool calls).
    """

    name: ClassVar[str] = "mode"
    summary: ClassVar[str] = ""  # one line for --help and `toolmode prompts list`
    Options: ClassVar[type] = NoOptions  # a dataclass of the mode's own options
    prompt_files: ClassVar[tuple[str | Traversable | Path, ...]] = ()  # read after policies.toml; str: packaged
    prompt_texts: ClassVar[Mapping[str, str]] = {}  # more default texts, laid over the files (a one-file mode)
    code_tool: ClassVar[str | None] = None  # the tool that takes a whole program (code-block recovery needs it)
    # The sandbox policy of the Agent (SandboxSettings.policy) for commands the mode's tools run on the host's
    # behalf: the builtin run_shell reads it at call time. None: the default tier chooser ("auto").
    sandbox_policy: str | None = None
    prompts: PromptSet

    @classmethod
    def build(cls, tools: Iterable[Any], setup: ModeSetup, options: Any) -> Mode:
        """The mode for one Agent: `options` is an instance of `cls.Options`. Override when the constructor
        takes other arguments than `(tools, setup, options)`."""
        return cls(tools, setup, options)  # type: ignore[call-arg]

    def load_prompts(self, prompts: PromptSettings | PromptSet | str | None) -> PromptSet:
        """This mode's prompt set: policies.toml, `prompt_files`, `prompt_texts`, then the user's overrides."""
        if isinstance(prompts, PromptSet):
            return prompts
        settings = PromptSettings(variant=prompts) if isinstance(prompts, str) or prompts is None else prompts
        variant = settings.variant or "standard"
        sources = [packaged(POLICIES), *(packaged(f) if isinstance(f, str) else f for f in self.prompt_files)]
        return PromptSet.load(sources, variant, settings.overrides, defaults=self.prompt_texts)

    @abstractmethod
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tool definitions to send with the next request."""

    @abstractmethod
    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one call and return the text the model will see."""

    def system_prompt(self) -> str | None:
        """Instructions this mode adds to the conversation, if any."""
        return None

    def reset(self) -> None:  # noqa: B027 - optional hook
        """Forget state kept outside a run (runs keep theirs in the run: `runctx.run_state(self, factory)`)."""

    def notes(self) -> list[str]:
        """Lines shown at the start of a run (e.g. the sandbox policy in force)."""
        return []

    def close(self) -> None:  # noqa: B027 - optional hook, most modes hold nothing
        """Release resources (sandbox workers, connections)."""


class Catalog:
    """The run's tools by name, split into visible and hidden (deferred) ones."""

    def __init__(self, tools: Iterable[Tool | Any], visible: Sequence[str] | None = None) -> None:
        self.tools: dict[str, Tool] = {}
        for t in prefix_colliding_mcp_tools([as_tool(item) for item in tools]):
            if t.name in self.tools:
                other = self.tools[t.name]
                raise ValueError(
                    f"two tools are named {t.name!r} (from {other.source} and {t.source}); tool names must be "
                    "unique: rename one (Tool.from_function(fn, name=...)) or give MCP servers distinct names"
                )
            self.tools[t.name] = t
        if visible is not None:
            missing = [n for n in visible if n not in self.tools]
            if missing:
                raise ValueError(f"visible names unknown tools: {', '.join(missing)}; known: {', '.join(self.tools)}")
            self.visible_names = [n for n in self.tools if n in set(visible)]
        else:
            self.visible_names = [n for n, t in self.tools.items() if not t.deferred]

    @property
    def visible(self) -> list[Tool]:
        """Tools shown in the prompt."""
        return [self.tools[n] for n in self.visible_names]

    @property
    def hidden(self) -> list[Tool]:
        """Tools found only through search."""
        shown = set(self.visible_names)
        return [t for n, t in self.tools.items() if n not in shown]

    def get(self, name: str, allowed: Iterable[str] | None = None) -> Tool:
        """The tool called `name`, if it exists (and is among `allowed` when given); else UnknownTool."""
        pool = self.tools if allowed is None else {n: self.tools[n] for n in allowed if n in self.tools}
        if name not in pool:
            offered = ", ".join(pool) or "(none)"
            raise UnknownTool(f"unknown tool {name!r}; available tools: {offered}")
        return pool[name]
