"""The peer: smolagents' CodeAgent on M3ToolEval tasks, against the same OpenAI-compatible server as toolmode.

A thin adapter, not part of toolmode: it runs in its own venv with smolagents 1.26 (toolmode is not imported),

    python3 -m venv /work/venv-smol && /work/venv-smol/bin/pip install smolagents==1.26.0 openai
    /work/venv-smol/bin/python benchmarks/peer_smolagents.py --out runs/peer-1.5b \
        --suite /work/shared/data/m3tooleval --tasks benchmarks/data/m3_local_tasks.txt

and loads the suite's task modules at run time. Per task it builds a CodeAgent with the task's own tool
functions (called as the suite's code actions call them: positionally, `*args` passed through, or by the
`*args` name with a list, as toolmode's react schema takes it; Python's
builtins `max`/`min` are left to Python, as in toolmode's code mode), gives it the task text toolmode's bench
gives (the instruction plus its answer-format line), and checks the final answer with the suite's own
`check_answer` (the text after `Answer:` when there is one, as toolmode's bench does). Sampling: temperature
0.2, max_tokens 768, 8 steps, unless told otherwise.

Each episode is written as it ends: one line in OUT/results.jsonl (solved, tool calls that ran, steps,
prompt and completion tokens, wall time) and OUT/episodes/<task>.json (system prompt, every step with the
messages sent, the model's output, the code, the observations, and every tool call with its result). A rerun
with the same OUT skips finished tasks; an episode the server failed (a request timeout) is written to
OUT/server_failures.jsonl instead and runs again on the next rerun (older results lines of that kind too). Runs by hand (minutes per episode on a CPU), never in the test suite.
"""

from __future__ import annotations

import argparse
import builtins
import copy
import importlib.util
import inspect
import itertools
import json
import re
import sys
import time
import types
from pathlib import Path
from typing import Any

# The answer-format line toolmode's bench appends (bench/suites/m3tooleval.py: ANSWER_FORMAT), so both agents
# get the same task text; `--framing suite` gives the suite's own two lines instead (as before issue 18).
ANSWER_FORMAT = (
    "When you are done, give your final answer as 'Answer: <the answer>', with only the answer after "
    "'Answer:' (e.g., a single number)."
)
SUITE_FORMAT = (
    "When you are done, output the result using 'Answer: your answer'.\n"
    "Please ONLY output the answer (e.g., single number), without any other text."
)
_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "dict": "object",
          "list": "array", "List": "array", "Dict": "object", "tuple": "array"}


def load_suite(path: Path) -> dict[str, Any]:
    """The suite's Task objects by name (IPython, needed only by the suite's own REPL, stubbed)."""
    for name in ("IPython", "IPython.core", "IPython.core.interactiveshell", "IPython.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["IPython.core.interactiveshell"].InteractiveShell = object  # type: ignore[attr-defined]
    sys.modules["IPython.utils"].io = None  # type: ignore[attr-defined]
    package = path / "tasks"
    spec = importlib.util.spec_from_file_location("m3tasks", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["m3tasks"] = module
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    base = sys.modules["m3tasks.base"]
    return {t.name: t for iterable, _ in base.task_iterators for t in iterable}


def _signature_types(fn_signature: str) -> dict[str, str]:
    inside = fn_signature[fn_signature.find("(") + 1: fn_signature.rfind(")")]
    out = {}
    for part in inside.split(","):
        if ":" in part:
            name, kind = part.split(":", 1)
            out[name.strip().lstrip("*")] = _TYPES.get(kind.strip().split("[")[0], "any")
    return out


def make_tool(name: str, description: str, fn: Any, fn_signature: str, calls: list[dict[str, Any]]) -> Any:
    """A smolagents Tool that calls the suite's function as given and records each call."""
    from smolagents import Tool

    if getattr(fn, "__code__", None) is not None and "eval" in fn.__code__.co_names:
        # The suites' calculators eval() their argument in the host: same arithmetic, no builtins.
        def fn(expression: str, _name: str = name) -> Any:  # noqa: ARG001
            try:
                return eval(str(expression), {"__builtins__": {}}, {})  # noqa: S307
            except Exception:  # noqa: BLE001 - the suite's own failure text
                return f"Failed to evaluate expression: {expression}"

    hinted = _signature_types(fn_signature)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    inputs: dict[str, dict[str, Any]] = {}
    for p in params:
        if p.name == "_name":
            continue
        var = p.kind is inspect.Parameter.VAR_POSITIONAL
        entry: dict[str, Any] = {
            "type": "any" if var else hinted.get(p.name, "any"),
            "description": "any number of positional arguments" if var else p.name,
        }
        if p.default is not inspect.Parameter.empty:
            entry["nullable"] = True
        inputs[p.name] = entry

    varargs = next((p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    leading = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]  # before *varargs

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        record: dict[str, Any] = {"tool": name, "args": repr(args)[:500], "kwargs": repr(kwargs)[:500]}
        calls.append(record)
        try:
            result = fn(*spread_varargs(varargs, leading, args, kwargs), **kwargs)
        except Exception as exc:
            record["error"] = f"{type(exc).__name__}: {exc}"[:500]
            raise
        record["result"] = repr(result)[:500]
        return result

    cls = type(f"M3Tool_{name}", (Tool,), {
        "name": name, "description": description.strip(), "inputs": inputs, "output_type": "any",
        "forward": forward, "skip_forward_signature_validation": True,
    })
    return cls()


def spread_varargs(varargs: str | None, leading: list[str], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The positional arguments of a call to a function with `*varargs`, taking `varargs=` from `kwargs` (the
    adapter lists it as an input by that name, so a model calls `book_hotel(location="C", preferences=[...])`,
    as toolmode's react schema allows): the parameters before `*varargs` given by name move to their places
    (`leading`, in order), then a list is spread, any other value is one argument."""
    if varargs is None or varargs not in kwargs:
        return args
    value = kwargs.pop(varargs)
    named = [kwargs.pop(n) for n in itertools.takewhile(kwargs.__contains__, leading[len(args):])]
    return (*args, *named, *value) if isinstance(value, list | tuple) else (*args, *named, value)


SERVER_FAILURES = ("timed out", "Timeout", "APIConnectionError", "Connection error")


def finished(record: dict[str, Any]) -> bool:
    """Whether a results line is an episode's result: not one that ended because the server failed (a request
    timeout on the shared, loaded server says nothing about the agent; a resumed run runs it again)."""
    error = str(record.get("error") or "")
    return not any(mark in error for mark in SERVER_FAILURES)


def extract_answer(m3task: Any, text: str) -> str:
    """The answer by the suite's own rule (`Answer: ...`), else the whole text (as toolmode's bench)."""
    text = text.strip()
    if "Answer:" in text:
        parsed = m3task.parse_generation(text)
        return str(parsed["content"]) if parsed.get("type") == "answer" else ""
    return text


def run_episode(m3task: Any, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """One CodeAgent episode: (the results line, the full transcript)."""
    from smolagents import CodeAgent, OpenAIServerModel
    from smolagents.memory import ActionStep

    tools_map = copy.deepcopy(dict(m3task.tools))  # some suites keep state in their tools (the browser)
    calls: list[dict[str, Any]] = []
    tools = [make_tool(n, t.description, t.function, t.fn_signature, calls)
             for n, t in tools_map.items() if getattr(builtins, n, None) is not t.function]
    model = OpenAIServerModel(
        model_id=args.model, api_base=args.base_url, api_key="none",
        client_kwargs={"timeout": args.request_timeout, "max_retries": 0},
        temperature=args.temperature, max_tokens=args.max_tokens,
    )
    agent = CodeAgent(tools=tools, model=model, max_steps=args.max_steps, verbosity_level=0)
    fmt = SUITE_FORMAT if args.framing == "suite" else ANSWER_FORMAT
    task_text = f"{m3task.instruction.strip()}\n{fmt}"
    started = time.monotonic()
    error = None
    try:
        final = agent.run(task_text)
    except Exception as exc:  # noqa: BLE001 - a server failure ends the episode; it is recorded
        final, error = None, f"{type(exc).__name__}: {exc}"[:500]
    wall = round(time.monotonic() - started, 1)
    answer = "" if final is None else str(final)
    given = extract_answer(m3task, answer)
    solved = bool(m3task.check_answer(given)) if final is not None else False
    usage = agent.monitor.get_total_token_counts()
    steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
    ran = [c for c in calls if "error" not in c]
    record = {
        "agent": "smolagents-1.26-CodeAgent", "task": m3task.name, "solved": solved, "answer": answer[:300],
        "expected": repr(m3task.expected_output), "tool_calls": len(calls), "tool_calls_ok": len(ran),
        "steps": len(steps), "prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
        "wall_time": wall, "error": error,
        "step_errors": sum(1 for s in steps if s.error is not None),
    }
    transcript = {
        "record": record, "task_text": task_text, "system_prompt": agent.memory.system_prompt.system_prompt,
        "steps": agent.memory.get_full_steps(), "tool_calls": calls,
        "settings": {k: getattr(args, k) for k in ("model", "base_url", "temperature", "max_tokens", "max_steps", "framing")},
    }
    return record, transcript


def main(argv: list[str] | None = None) -> int:
    """Run every listed task not yet in OUT/results.jsonl, one at a time, and print one line per episode."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="/work/shared/data/m3tooleval")
    p.add_argument("--tasks", required=True, help="a file with one task name a line (# comments)")
    p.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--temperature", type=float, default=0.2)
    p.add_argument("--max-tokens", type=int, default=768)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--request-timeout", type=float, default=900.0)
    p.add_argument("--framing", choices=["toolmode", "suite"], default="toolmode",
                   help="the answer-format line: toolmode's bench (default) or the suite's own two lines")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    names = [re.sub(r"#.*", "", line).strip() for line in Path(args.tasks).read_text().splitlines()]
    names = [n for n in names if n]
    suite = load_suite(Path(args.suite))
    missing = [n for n in names if n not in suite]
    if missing:
        print(f"error: not in the suite: {missing}", file=sys.stderr)
        return 2
    out = Path(args.out)
    (out / "episodes").mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    done = set()
    if results.exists():
        lines = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        done = {r["task"] for r in lines if finished(r)}
    for name in names:
        if name in done:
            continue
        record, transcript = run_episode(suite[name], args)
        episode_file = out / "episodes" / (name.replace("/", "__") + ".json")
        episode_file.write_text(json.dumps(transcript, indent=1, default=str, ensure_ascii=False))
        # A server failure is kept apart (and the episode's transcript), not written as done.
        kept = results if finished(record) else out / "server_failures.jsonl"
        with kept.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"{name}: {'solved' if record['solved'] else 'FAILED'}; answer {record['answer'][:60]!r}, "
              f"expected {record['expected'][:40]}; {record['tool_calls']} tool calls, {record['steps']} steps, "
              f"{record['prompt_tokens']} prompt / {record['completion_tokens']} completion tokens, "
              f"{record['wall_time']} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
