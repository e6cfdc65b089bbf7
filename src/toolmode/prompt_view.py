"""`toolmode prompts show`: what a mode would send, as text (its system prompt, every tool definition it
sends for the builtin tools, and the texts of the loop and its policies)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path


def show_prompts(mode: str, prompts: str = "standard") -> str:
    """The system prompt, tool definitions and named texts of `mode` with the prompt variant or folder
    `prompts`, for the builtin tools."""
    from toolmode.modes.base import ModeSetup
    from toolmode.modes.registry import build_mode
    from toolmode.settings import PromptSettings, SandboxSettings
    from toolmode.tools.builtin import builtin_tools

    variant, overrides = (prompts, None) if prompts in ("standard", "local") else ("standard", Path(prompts))
    with tempfile.TemporaryDirectory() as folder:
        setup = ModeSetup(sandbox=SandboxSettings(folder, "none"), prompts=PromptSettings(variant, overrides))
        built = build_mode(mode, builtin_tools(folder), setup, {})
        try:
            lines = [f"# {mode} mode, {variant} prompts" + (f" with {overrides}" if overrides else ""), "",
                     "## system prompt", built.system_prompt() or "(none)", "", "## tools sent"]
            for schema in built.tool_schemas():
                fn = schema["function"]
                lines += [f"### {fn['name']}", fn.get("description", ""),
                          json.dumps(fn.get("parameters", {}), ensure_ascii=False), ""]
            lines.append("## named texts (templates: $name is filled in when used)")
            for name in built.prompts.names():
                lines += [f"### {name}", built.prompts.template(name)]
        finally:
            built.close()
    return "\n".join(lines)
