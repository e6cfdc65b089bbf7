"""MCP in toolmode, measured on server-everything's tool set.

1. Prompt tokens of the first request in react (every schema), react + search="load" (tools deferred),
   code mode (quick index of every tool) and code mode with the tools deferred: one step of a real
   Agent against the scripted model server, which counts tokens with the DeepSeek tokenizer.
2. Added latency of one MCP tool call made from sandboxed code versus the same call made directly
   on the host: median over N calls each (timed inside the program for the sandbox).

    python benchmarks/mcp_latency.py [--calls 50] [--server "node .../dist/index.js stdio"] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from toolmode import Agent
from toolmode.mcp import McpServer
from toolmode.testing import ScriptedModelServer, reply
from toolmode.tools.base import Tool

ROOT = Path(__file__).resolve().parent.parent
LOCAL_EVERYTHING = ROOT / ".ci/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TASK = "Echo the word 'hello' back to me."
CALL_TOOL, CALL_ARGS = "echo", {"message": "hello"}


def default_server() -> str:
    """The locally installed server-everything, else through npx."""
    if LOCAL_EVERYTHING.exists():
        return f"node {LOCAL_EVERYTHING} stdio"
    return "npx -y @modelcontextprotocol/server-everything stdio"


def first_request_tokens(tools: list[Tool], mode: str, workspace: Path, **kwargs: Any) -> dict[str, Any]:
    """Prompt tokens and tool definitions sent in the first request of one run."""
    with ScriptedModelServer([reply("hello")]) as model:
        with Agent(
            tools=tools,
            mode=mode,
            base_url=model.base_url,
            api_key="bench",
            model="scripted-model",
            workspace=workspace,
            console=False,
            runs_dir=None,
            **kwargs,
        ) as agent:
            result = agent.run(TASK)
        request = model.requests[0]
    return {
        "prompt_tokens": result.records[0].usage.prompt_tokens,
        "tools_sent": len(request.get("tools", [])),
    }


def host_latency(tool: Tool, calls: int) -> list[float]:
    """Seconds per direct call from the host."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        tool(**CALL_ARGS)
        times.append(time.perf_counter() - start)
    return times


SANDBOX_PROGRAM = """\
import time
for _ in range({calls}):
    start = time.perf_counter()
    {name}(**{args!r})
    print("T", time.perf_counter() - start)
"""


def sandbox_latency(tool: Tool, calls: int, sandbox: Any) -> list[float]:
    """Seconds per call made from a sandboxed program through the host bridge (timed inside the program)."""
    from toolmode.sandbox import StubSpec

    stub = StubSpec(
        tool.name, list(tool.parameters.get("properties", {})), tool.signature(), tool.description
    )
    program = SANDBOX_PROGRAM.format(calls=calls, name=tool.name, args=CALL_ARGS)
    text = sandbox.run(program, [stub], lambda name, kwargs: tool(**kwargs)).text()
    times = [float(line.split()[1]) for line in text.splitlines() if line.startswith("T ")]
    if len(times) != calls:
        raise RuntimeError(f"the sandboxed program timed {len(times)} of {calls} calls:\n{text}")
    return times


def interleaved_latency(
    tool: Tool, calls: int, workspace: Path, block: int = 10
) -> tuple[list[float], list[float]]:
    """Host and sandbox samples taken in alternating blocks, so load drifts on a busy machine hit both alike."""
    from toolmode.sandbox import Sandbox

    host: list[float] = []
    boxed: list[float] = []
    with Sandbox(workspace) as sandbox:
        sandbox_latency(tool, 1, sandbox)  # warm the worker and the bridge
        while len(host) < calls:
            n = min(block, calls - len(host))
            host += host_latency(tool, n)
            boxed += sandbox_latency(tool, n, sandbox)
    return host, boxed


def _ms(samples: list[float]) -> dict[str, float]:
    q1, median, q3 = statistics.quantiles(samples, n=4)
    return {
        "median_ms": round(median * 1000, 3),
        "p25_ms": round(q1 * 1000, 3),
        "p75_ms": round(q3 * 1000, 3),
    }


def measure(spec: str, calls: int) -> dict[str, Any]:
    """Run both measurements; parts that cannot run are reported with the reason."""
    out: dict[str, Any] = {"server": spec, "calls": calls, "tokens": {}, "latency": {}}
    server = McpServer(spec, timeout=30)
    try:
        plain = server.tools(defer=False)
        deferred = server.tools(defer=True)
        out["tool_count"] = len(plain)
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp)
            runs = {
                "react": (plain, "react", {}),
                "react+search(load)": (deferred, "react", {"search": "load"}),
                "code": (plain, "code", {}),
                "code+search": (deferred, "code", {}),
            }
            for label, (tools, mode, kwargs) in runs.items():
                try:
                    out["tokens"][label] = first_request_tokens(tools, mode, workspace, **kwargs)
                except Exception as exc:  # noqa: BLE001 - reported, the other figures still count
                    out["tokens"][label] = {"pending": f"{type(exc).__name__}: {exc}"}
            tool = next(t for t in plain if t.name == CALL_TOOL)
            tool(**CALL_ARGS)  # warm up the connection
            try:
                host, boxed = interleaved_latency(tool, calls, workspace)
                out["latency"] = {"host": _ms(host), "sandbox": _ms(boxed)}
                out["latency"]["added_ms"] = round(
                    (statistics.median(boxed) - statistics.median(host)) * 1000, 3
                )
            except Exception as exc:  # noqa: BLE001 - reported, the other figures still count
                out["latency"] = {
                    "host": _ms(host_latency(tool, calls)),
                    "pending": f"{type(exc).__name__}: {exc}",
                }
    finally:
        server.close()
    return out


def report(out: dict[str, Any]) -> str:
    """A plain-text table of the figures."""
    lines = [
        f"server: {out['server']} ({out.get('tool_count', '?')} tools)",
        "",
        "first request prompt tokens:",
    ]
    for label, row in out["tokens"].items():
        if "pending" in row:
            lines.append(f"  {label:<20} pending ({row['pending']})")
        else:
            lines.append(
                f"  {label:<20} {row['prompt_tokens']:>6} tokens, {row['tools_sent']} tool definition(s)"
            )
    lat = out["latency"]
    lines += ["", f"one MCP call ({CALL_TOOL}), {out['calls']} calls each, median [p25-p75]:"]
    for label, key in (("direct from host", "host"), ("from sandboxed code", "sandbox")):
        if key in lat:
            row = lat[key]
            lines.append(f"  {label:<20} {row['median_ms']:>7} ms [{row['p25_ms']}-{row['p75_ms']}]")
    if "added_ms" in lat:
        lines.append(f"  added by the sandbox {lat['added_ms']:>7} ms")
    else:
        lines.append(f"  from sandboxed code  pending ({lat['pending']})")
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--server", default=None, help="MCP server command line or URL (default: server-everything)"
    )
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    out = measure(args.server or default_server(), args.calls)
    print(json.dumps(out, indent=2) if args.json else report(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
