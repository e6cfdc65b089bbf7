"""MCP servers' tools as toolmode `Tool`s, over stdio or streamable HTTP, on the official `mcp` SDK.

```python
tools = mcp_tools("uvx mcp-server-time")                  # or "python -m mcp_server_time"
tools = mcp_tools({"url": "https://host/mcp", "headers": {"Authorization": "Bearer ..."}})
tools = mcp_tools_from_config("mcp.json")                 # {"mcpServers": {name: {...}}}
```

Choices (see `server.py` for the lifecycle):
- Names: the MCP name made a Python identifier (`get-sum` -> `get_sum`, so code mode can call it);
  `<server>__<name>` only when two servers of one config share a name (or with `prefix=True`).
  The server name defaults to one derived from the command or URL (`uvx mcp-server-time` -> `time`).
- Results: with an output schema, the structured content as data (a `{"result": x}` wrapper from the
  Python SDK is unwrapped to `x`) and the signature shows its type; without one, text (text items
  joined by newlines; images, audio and resources summarised in one line each) and `-> str`.
  An `isError` result raises `McpToolError` with the server's message.
- Each server runs in its own thread and event loop; `fn(**kwargs)` may be called from any thread.
- Server stderr goes to a temporary file (`McpServer.stderr_tail()`), quoted in start and crash errors.
"""

from toolmode.mcp.config import ServerSpec, load_config, parse_spec
from toolmode.mcp.connection import close_all
from toolmode.mcp.errors import McpConnectionError, McpError, McpStartError, McpTimeoutError, McpToolError
from toolmode.mcp.server import DEFER_THRESHOLD, McpServer, McpToolFunction
from toolmode.mcp.tools import mcp_tools, mcp_tools_from_config

__all__ = [
    "DEFER_THRESHOLD",
    "McpConnectionError",
    "McpError",
    "McpServer",
    "McpStartError",
    "McpTimeoutError",
    "McpToolError",
    "McpToolFunction",
    "ServerSpec",
    "close_all",
    "load_config",
    "mcp_tools",
    "mcp_tools_from_config",
    "parse_spec",
]
