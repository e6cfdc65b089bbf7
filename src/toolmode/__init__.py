"""toolmode: one agent loop, three modes (react, code, hybrid), tool search, and measurements.

```python
from toolmode import Agent, tool

@tool
def read_file(path: str) -> str:
    \"\"\"Read a UTF-8 text file and return its content.\"\"\"
    return open(path, encoding="utf-8").read()

result = Agent(tools=[read_file], mode="react").run("How many lines does log1.txt have?")
```
"""

# isort: off
# First, before even `typing` (not loaded at start-up): `python -m toolmode` must not import from the cwd.
import toolmode._safe_path  # noqa: F401
import importlib
from typing import TYPE_CHECKING, Any
# isort: on

if TYPE_CHECKING:
    from toolmode.agent import Agent
    from toolmode.approval import ApprovalRequest, ApprovalRules, Approved, Denied, PendingCall, ToolDenied
    from toolmode.budget import Budget, CancelToken
    from toolmode.chat import Chat
    from toolmode.errors import SettingsConflict, ToolmodeError
    from toolmode.events import (
        ApprovalDecided,
        ApprovalRequested,
        BaseEvent,
        Carried,
        CodeExecuted,
        ErrorEvent,
        MessageAdded,
        Notice,
        ReasoningDelta,
        Retry,
        RunEnd,
        RunStart,
        StepUsage,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
        ToolsSent,
    )
    from toolmode.loop import run_agent
    from toolmode.models.base import FallbackModel, Model
    from toolmode.models.client import ModelClient
    from toolmode.models.errors import ModelError
    from toolmode.models.pricing import PriceTable
    from toolmode.models.reply import Reply, ToolCall
    from toolmode.result import CallRecord, RunResult, StepRecord
    from toolmode.runctx import RunContext
    from toolmode.settings import (
        LimitSettings,
        ModelSettings,
        ModeSettings,
        OutputSettings,
        PromptSettings,
        SandboxSettings,
    )
    from toolmode.telemetry import TelemetrySettings
    from toolmode.tools.base import Tool, tool
    from toolmode.usage import Usage

_EVENTS = ("ApprovalDecided", "ApprovalRequested", "BaseEvent", "Carried", "CodeExecuted", "ErrorEvent", "MessageAdded", "Notice", "ReasoningDelta", "Retry",
           "RunEnd", "RunStart", "StepUsage", "TextDelta", "ToolCallFinished", "ToolCallStarted", "ToolsSent")  # fmt: skip

# Public names -> the module that defines them. Loaded on first use (PEP 562), so `import toolmode` and the
# CLI's start-up do not pay for the HTTP SDK, pydantic or rich until something needs them.
_LAZY = {
    "Agent": "toolmode.agent",
    **dict.fromkeys(("ApprovalRequest", "ApprovalRules", "Approved", "Denied", "PendingCall", "ToolDenied"),
                    "toolmode.approval"),
    "Budget": "toolmode.budget",
    "CancelToken": "toolmode.budget",
    "Chat": "toolmode.chat",
    "SettingsConflict": "toolmode.errors",
    "ToolmodeError": "toolmode.errors",
    **dict.fromkeys(_EVENTS, "toolmode.events"),
    "run_agent": "toolmode.loop",
    "FallbackModel": "toolmode.models.base",
    "Model": "toolmode.models.base",
    "ModelClient": "toolmode.models.client",
    "ModelError": "toolmode.models.errors",
    "PriceTable": "toolmode.models.pricing",
    "Reply": "toolmode.models.reply",
    "ToolCall": "toolmode.models.reply",
    "CallRecord": "toolmode.result",
    "RunResult": "toolmode.result",
    "StepRecord": "toolmode.result",
    "RunContext": "toolmode.runctx",
    "LimitSettings": "toolmode.settings",
    "ModeSettings": "toolmode.settings",
    "PromptSettings": "toolmode.settings",
    "ModelSettings": "toolmode.settings",
    "OutputSettings": "toolmode.settings",
    "SandboxSettings": "toolmode.settings",
    "TelemetrySettings": "toolmode.telemetry",
    "Tool": "toolmode.tools.base",
    "tool": "toolmode.tools.base",
    "Usage": "toolmode.usage",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolmode' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"


def builtin_tools(*args, **kwargs):  # type: ignore[no-untyped-def]
    """The builtin tools (list_dir, read_file, write_file, run_shell, fetch_url, current_time, calculator).

    See `toolmode.tools.builtin.builtin_tools` for the arguments (workspace, allow_private_network, ...).
    """
    from toolmode.tools.builtin import builtin_tools as make

    return make(*args, **kwargs)


def mcp_tools(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Tools of an MCP server (command line, URL or config entry); see `toolmode.mcp.mcp_tools`."""
    from toolmode.mcp import mcp_tools as make

    return make(*args, **kwargs)


__all__ = [
    "Agent",
    "ApprovalDecided",
    "ApprovalRequest",
    "ApprovalRequested",
    "ApprovalRules",
    "Approved",
    "BaseEvent",
    "Budget",
    "CallRecord",
    "CancelToken",
    "Carried",
    "Chat",
    "CodeExecuted",
    "Denied",
    "ErrorEvent",
    "FallbackModel",
    "LimitSettings",
    "MessageAdded",
    "ModeSettings",
    "Model",
    "ModelClient",
    "ModelError",
    "ModelSettings",
    "Notice",
    "OutputSettings",
    "PendingCall",
    "PriceTable",
    "PromptSettings",
    "ReasoningDelta",
    "Reply",
    "Retry",
    "RunContext",
    "RunEnd",
    "RunResult",
    "RunStart",
    "SandboxSettings",
    "SettingsConflict",
    "StepRecord",
    "StepUsage",
    "TelemetrySettings",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolDenied",
    "ToolmodeError",
    "ToolsSent",
    "Usage",
    "builtin_tools",
    "mcp_tools",
    "run_agent",
    "tool",
]
