"""Tools: plain functions turned into callables the model can use."""

from toolmode.tools.base import Tool, ToolArgumentError, ToolDefinitionError, as_tool, result_text, tool

__all__ = ["Tool", "ToolArgumentError", "ToolDefinitionError", "as_tool", "result_text", "tool"]
