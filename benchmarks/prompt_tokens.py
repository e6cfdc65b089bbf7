"""Prompt tokens of the first request in each mode, for the six classic tools and for a 50-tool catalog.

    python benchmarks/prompt_tokens.py

Each configuration makes one real request to the scripted model server, which counts prompt tokens with
the DeepSeek V4 tokenizer over the whole request (system prompt, task, tool schemas). Hidden tools:
in the search variants only `read_file`, `list_dir`, `write_file` and `run_shell` stay visible.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from toolmode import Agent, Tool
from toolmode.testing import ScriptedModelServer, reply
from toolmode.tools.builtin import builtin_tools

CLASSIC = ["list_dir", "read_file", "write_file", "run_shell", "fetch_url", "current_time"]
ALWAYS_VISIBLE = ["read_file", "list_dir", "write_file", "run_shell"]
TASK = "统计当前目录下每个 .txt 文件的总行数和包含 ERROR 的行数"

CONFIGS = {
    "react": {"mode": "react"},
    "react+load": {"mode": "react", "search": "load", "visible": ALWAYS_VISIBLE},
    "react+proxy": {"mode": "react", "search": "proxy", "visible": ALWAYS_VISIBLE},
    "code": {"mode": "code"},
    "code+search": {"mode": "code", "visible": ALWAYS_VISIBLE},
    "hybrid": {"mode": "hybrid", "direct": ["read_file", "list_dir"]},
}


def distractors(n: int) -> list[Tool]:
    """n extra tools in the style of a real catalog (varied names, three parameters, docstrings)."""
    topics = ["invoice", "weather", "stock", "flight", "hotel", "calendar", "email", "translate", "currency",
              "recipe", "movie", "news", "map", "parcel", "payroll", "ticket", "playlist", "dictionary"]
    verbs = ["get", "search", "create", "update", "list", "cancel"]
    tools = []
    for i in range(n):
        topic, verb = topics[i % len(topics)], verbs[(i // len(topics)) % len(verbs)]

        def fn(query: str, limit: int = 10, region: str = "global") -> dict:
            return {"query": query, "limit": limit, "region": region}

        fn.__doc__ = (f"{verb.title()} {topic} records matching a query.\n\nReturns a dict with the matching "
                      f"{topic} records and a total count.\n\nArgs:\n    query: What to look for.\n"
                      f"    limit: Maximum number of records.\n    region: Region code or 'global'.")
        tools.append(Tool.from_function(fn, name=f"{verb}_{topic}_{i}"))
    return tools


def first_prompt_tokens(tools: list[Tool], workspace: Path, **config: object) -> int:
    """Prompt tokens of the first request of a run in the given configuration."""
    with ScriptedModelServer([reply("ok")]) as server:
        with Agent(tools=tools, base_url=server.base_url, model="count", console=False, runs_dir=None,
                   workspace=workspace, sandbox="none", **config) as agent:  # type: ignore[arg-type]
            result = agent.run(TASK)
        return result.records[0].usage.prompt_tokens


def main() -> None:
    """Print the table."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        classic = [t for t in builtin_tools(ws) if t.name in CLASSIC]
        catalog = classic + distractors(50 - len(classic))
        table = Table("configuration", "6 classic tools", "50-tool catalog",
                      title="prompt tokens of the first request (DeepSeek V4 tokenizer)")
        for name, config in CONFIGS.items():
            table.add_row(name, *(f"{first_prompt_tokens(tools, ws, **config):,}" for tools in (classic, catalog)))
        Console().print(table)


if __name__ == "__main__":
    main()
