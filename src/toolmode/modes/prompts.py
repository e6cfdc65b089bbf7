"""Mode prompts sized for small local models: short, and led by one worked example.

Chosen with `prompts="local"` (the default for local presets: llama.cpp, Ollama, vLLM). The example
uses a made-up tool, so it shows the shape of a call without hinting at any task's solution.
"""

from __future__ import annotations

import json

PROMPT_STYLES = ("standard", "local")

_EXAMPLE = json.dumps(
    {"name": "run_code", "arguments": {"code": "prices = {item: get_price(item) for item in ['tea', 'milk']}\n"
                                               "print(prices, sum(prices.values()))"}}
)
_FINISH = "When the output answers the question, reply with the final answer in plain text."

LOCAL_CODE_PROMPT = (
    "Solve the task with the run_code tool: write a Python program in which the tools listed in run_code's "
    "description are plain functions that return data; print only what you need. Example, if a tool "
    f"get_price(item) existed, the call would be:\n{_EXAMPLE}\n{_FINISH}"
)
LOCAL_HYBRID_PROMPT = (
    "For one simple lookup, call a tool directly. For loops, several files or arithmetic, call run_code with a "
    "Python program in which every tool is a plain function that returns data; print the results. Example, if "
    f"a tool get_price(item) existed:\n{_EXAMPLE}\n{_FINISH}"
)
LOCAL_REACT_PROMPT = (
    "Call the tools you need. Once a tool result answers the question, reply with the final answer in plain "
    "text and call no more tools."
)


def check_style(style: str) -> str:
    """`style` if it is a known prompt style, else a ValueError naming the choices."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; choose one of: {', '.join(PROMPT_STYLES)}")
    return style
