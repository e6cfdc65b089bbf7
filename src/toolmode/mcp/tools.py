"""`mcp_tools` and `mcp_tools_from_config`: MCP servers' tools as toolmode `Tool`s."""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from toolmode.mcp.config import ServerSpec, Spec, load_config
from toolmode.mcp.server import McpServer
from toolmode.tools.base import Tool, prefix_colliding_mcp_tools

Start = Literal["eager", "lazy"]


def mcp_tools(
    spec: Spec | Any,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    start: Start = "eager",
    defer: bool | None = None,
    prefix: bool = False,
    workspace: str | os.PathLike[str] | None = ".",
    allow_env_in_workspace: bool = False,
) -> list[Tool]:
    """The tools of one MCP server (a command line, `{command, args, env}`, a URL or `{url, headers}`).

    The server is started to list its tools. `start="eager"` keeps it running; `start="lazy"` stops it
    after listing and starts it again at the first call. `timeout` is per call. `defer=None` defers the
    tools when the server has more than `DEFER_THRESHOLD` (10). `prefix=True` names them `<server>__<tool>`.
    Each tool's `fn` is an `McpToolFunction`; `tool.fn.server` is the `McpServer` (`.close()` stops it).
    A stdio server never starts from `workspace` (the agent's, default "."): see `toolmode.mcp.launch` for
    what is refused unless `allow_env_in_workspace`.
    """
    server = McpServer(spec, name=name, env=env, timeout=timeout, workspace=workspace,
                       allow_env_in_workspace=allow_env_in_workspace)
    try:
        tools = server.tools(defer=defer, prefix=prefix)
    finally:
        if start == "lazy":
            server.close()
    return tools


def mcp_tools_from_config(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    timeout: float = 30.0,
    start: Start = "eager",
    defer: bool | None = None,
    workspace: str | os.PathLike[str] | None = ".",
    allow_env_in_workspace: bool = False,
) -> list[Tool]:
    """The tools of every server in an `mcp.json` (`{"mcpServers": {name: {command, args, env} | {url, headers}}}`).

    Servers start in parallel. A tool name used by more than one server is prefixed `<server>__` on
    every server that has it; other names stay as they are. If any server fails to start, the others
    are stopped and its `McpStartError` is raised. `defer`, `workspace` and `allow_env_in_workspace` apply
    per server (see `mcp_tools`).
    """
    specs = load_config(config)
    servers = [McpServer(s, timeout=timeout, workspace=workspace, allow_env_in_workspace=allow_env_in_workspace)
               for s in specs]
    try:
        with ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
            per_server = list(pool.map(lambda s: s.tools(defer=defer), servers))
    except BaseException:
        for server in servers:
            server.close()
        raise
    if start == "lazy":
        for server in servers:
            server.close()
    return prefix_colliding_mcp_tools([t for tools in per_server for t in tools])


__all__ = ["ServerSpec", "mcp_tools", "mcp_tools_from_config"]
