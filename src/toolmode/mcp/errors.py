"""Exceptions raised by MCP tools. Each message names the server (and the tool, for calls)."""

from __future__ import annotations

from toolmode.errors import ToolmodeError


class McpError(ToolmodeError, RuntimeError):
    """Base class of the errors an MCP server or tool call can cause."""


class McpStartError(McpError):
    """A server could not be started or did not complete the MCP handshake."""


class McpToolError(McpError):
    """A tool call returned an error result (`isError`) or was rejected by the server."""


class McpTimeoutError(McpError):
    """A tool call got no result within its timeout; the call was cancelled."""


class McpConnectionError(McpError):
    """The connection to a server broke (the process crashed or exited, or the HTTP endpoint went away)."""
