"""M3ToolEval (the CodeAct paper's benchmark) as bench tasks, loaded at run time from the suite's own folder.

The task modules are third-party Python: importing them runs their code in this process, and their tool
functions run in the host when the model calls them (see `m3_tools` for the one guard: `eval`-based
calculators go through toolmode's own arithmetic evaluator). Nothing of the suite is copied.

Answers are checked with the suite's own rules: the text after `Answer:` (the suite's `parse_generation`),
or the whole reply when it has none, is given to the suite task's `check_answer`.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import io
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolmode.bench.suites.m3_tools import convert_tool, is_builtin_alias, numeric_tools
from toolmode.bench.task import CheckResult, Task, TaskEnv
from toolmode.errors import ToolmodeError
from toolmode.tools.base import Tool

# The suite's answer-format lines, given as the format of the final answer (as in the CodeAct paper's
# prompt, where they follow the instructions for acting), not as an order to output only an answer now:
# "Please ONLY output the answer ..." made small models answer at step 1 without calling a tool (issue 18).
ANSWER_FORMAT = (
    "When you are done, give your final answer as 'Answer: <the answer>', with only the answer after "
    "'Answer:' (e.g., a single number)."
)
_LOCK = threading.Lock()


class SuiteError(ToolmodeError, ValueError):
    """The suite path holds no loadable M3ToolEval task modules."""


def find_package(path: str | Path) -> Path:
    """The `tasks` package folder under `path` (or `path` itself); SuiteError if there is none."""
    root = Path(path).expanduser()
    for candidate in (root / "tasks", root):
        if (
            (candidate / "__init__.py").is_file()
            and (candidate / "base.py").is_file()
            and (candidate / "impl").is_dir()
        ):
            return candidate.resolve()
    raise SuiteError(
        f"no M3ToolEval task modules in {path} (expected tasks/__init__.py, tasks/base.py and tasks/impl/)"
    )


def load_suite_tasks(path: str | Path) -> list[Any]:
    """The suite's own Task objects, in registration order (imported once per process and path)."""
    package = find_package(path)
    name = "_toolmode_m3tooleval_" + hashlib.sha1(str(package).encode()).hexdigest()[:12]
    with _LOCK:
        if name + ".base" not in sys.modules:
            _import(package, name)
    base = sys.modules[name + ".base"]
    tasks = [t for iterable, _ in base.task_iterators for t in iterable]
    if not tasks:
        raise SuiteError(f"the M3ToolEval modules in {package} registered no tasks")
    return tasks


def _import(package: Path, name: str) -> None:
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise SuiteError(f"cannot import {package}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # The modules print every task as they register it; that is not ours to show.
        with _placeholders(), contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except Exception as exc:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        raise SuiteError(f"cannot load M3ToolEval tasks from {package}: {type(exc).__name__}: {exc}") from exc


@contextlib.contextmanager
def _placeholders() -> Iterator[None]:
    """Stand-ins for `tqdm` and IPython while the modules load, when they are not installed.

    The suite imports them for its own progress bar and REPL, which toolmode does not use (programs run in
    toolmode's sandbox); the stand-ins are removed again once the modules are loaded.
    """
    added = []
    for module_name, attrs in _STANDINS.items():
        if module_name in sys.modules or _installed(module_name):
            continue
        module = types.ModuleType(module_name)
        for attr, value in attrs.items():
            setattr(module, attr, value)
        sys.modules[module_name] = module
        added.append(module_name)
    try:
        yield
    finally:
        for module_name in added:
            sys.modules.pop(module_name, None)


def _installed(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


class _NotUsed:
    """M3ToolEval's own REPL and progress bar: not used by toolmode."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("this part of M3ToolEval is not used by toolmode")


_STANDINS: dict[str, dict[str, Any]] = {
    "tqdm": {"tqdm": _NotUsed},
    "IPython": {},
    "IPython.core": {},
    "IPython.core.interactiveshell": {"InteractiveShell": _NotUsed},
    "IPython.utils": {"io": None},
}


def extract_answer(m3task: Any, text: str) -> str:
    """The answer in a final reply, by the suite's own rule (`Answer: ...`), else the whole reply."""
    text = text.strip()
    if "Answer:" in text:
        parsed = m3task.parse_generation(text)
        return str(parsed["content"]) if parsed.get("type") == "answer" else ""
    return text


def to_task(m3task: Any) -> Task:
    """A bench Task for one suite task: no files, the suite's tools, the suite's checker."""
    category = m3task.name.split("/", 1)[0]
    builtins_in_code = {n for n, t in m3task.tools.items() if is_builtin_alias(n, t.function)}

    def build(workspace: Path, seed: int) -> dict[str, Any]:
        return {}

    def tools(env: TaskEnv) -> list[Tool]:
        # A fresh copy per episode: some suites keep state in their tools (the web browser's page).
        fresh = copy.deepcopy(dict(m3task.tools))
        helpers = numeric_tools(fresh)  # what the suite's calculator could call through its `eval`
        out = []
        for name, t in fresh.items():
            if name in builtins_in_code and env.mode in ("code", "hybrid"):
                continue  # the sandbox has Python's own max()/min(), as the suite's code actions had
            out.append(convert_tool(name, t.description, t.function, t.fn_signature, helpers))
        return out

    def check(answer: str, workspace: Path, facts: dict[str, Any]) -> CheckResult:
        given = extract_answer(m3task, answer)
        if m3task.check_answer(given):
            return CheckResult(True, "matches the expected output")
        return CheckResult(False, f"expected {m3task.expected_output!r:.200}, got {given!r:.200}")

    from toolmode.bench.players.m3tooleval import expected_output_player

    prompt = f"{m3task.instruction.strip()}\n{ANSWER_FORMAT}".replace("{", "{{").replace("}", "}}")
    return Task(
        name=m3task.name,
        prompt=prompt,
        build=build,
        tools=tools,
        check=check,
        kind=category,
        direct=list(m3task.tools),  # hybrid: every tool callable directly or from code
        player=expected_output_player(m3task.expected_output),
    )


def m3tooleval_suite(path: str | Path) -> list[Task]:
    """Every M3ToolEval task under `path` as a bench Task."""
    return [to_task(t) for t in load_suite_tasks(path)]
