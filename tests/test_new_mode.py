"""A mode defined in this one file, registered with `@register_mode`, runs in the library, `toolmode run`,
`toolmode chat` (`--mode` and `/mode`) and `toolmode bench` (`--modes`) without any other file knowing it."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode import Agent
from toolmode.bench.cli import bench_main
from toolmode.cli import main
from toolmode.modes import Catalog, Mode, ModeSetup, register_mode
from toolmode.testing import call, reply
from toolmode.tools.base import result_text


@dataclass(frozen=True)
class ShoutOptions:
    """`exclaim`: end every result with an exclamation mark."""

    exclaim: bool = False


@register_mode
class ShoutMode(Mode):
    """Native calls whose results come back in capitals (a toy, to prove the seam)."""

    name = "shout"
    summary = "tool results in capitals"
    Options = ShoutOptions
    prompt_texts = {"system": "Tool results come back in capitals.", "shout_suffix": "!"}

    def __init__(self, tools: Any, setup: ModeSetup, options: ShoutOptions) -> None:
        self.prompts = self.load_prompts(setup.prompts)
        self.catalog = Catalog(tools, setup.visible)
        self.exclaim = options.exclaim

    def system_prompt(self) -> str:
        """The prompt set's `system`."""
        return self.prompts.text("system")

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Every visible tool."""
        return [t.schema() for t in self.catalog.visible]

    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """The tool's result in capitals."""
        text = result_text(self.catalog.get(name)(**arguments)).upper()
        return text + (self.prompts.text("shout_suffix") if self.exclaim else "")


def _tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_the_library_runs_it_with_its_options_and_prompts(scripted, tmp_path: Path) -> None:
    server = scripted([call("shout_back", text="hello"), reply("done")])

    def shout_back(text: str) -> str:
        """Return the text."""
        return text

    with Agent([shout_back], "shout", model="m", base_url=server.base_url, exclaim=True,
               prompts={"system": "Results are LOUD."}) as agent:
        result = agent.run("go")
    assert result.answer == "done" and agent.mode.name == "shout"
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "Results are LOUD."}
    assert _tool_results(server.requests[1]) == ["HELLO!"]


def test_toolmode_run_offers_it(scripted, tmp_path: Path, capsys) -> None:
    (tmp_path / "note.txt").write_text("quiet words")
    server = scripted([call("read_file", path="note.txt"), reply("read it")])
    code = main(["run", "--mode", "shout", "--base-url", server.base_url, "--model", "m", "--workspace",
                 str(tmp_path), "--no-trace", "--json", "read note.txt"])
    assert code == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["answer"] == "read it"
    assert server.requests[0]["messages"][0]["content"] == "Tool results come back in capitals."
    assert _tool_results(server.requests[1]) == ["QUIET WORDS"]


def test_toolmode_chat_switches_to_it(scripted, tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "note.txt").write_text("quiet words")
    server = scripted([reply("hello"), call("read_file", path="note.txt"), reply("read it")])
    monkeypatch.setattr("sys.stdin", io.StringIO("hi\n/mode shout\nread note.txt\n"))
    code = main(["chat", "--mode", "react", "--base-url", server.base_url, "--model", "m", "--workspace",
                 str(tmp_path), "--no-trace"])
    out = capsys.readouterr().out
    assert code == 0 and "mode shout" in out and "/mode react|code|hybrid|shout" in out
    second = server.requests[1]["messages"]
    assert second[0] == {"role": "system", "content": "Tool results come back in capitals."}
    assert [m["content"] for m in second[1:3]] == ["hi", "hello"]  # the conversation went on
    assert _tool_results(server.requests[2]) == ["QUIET WORDS"]


TASKS = '''
from toolmode.bench import CheckResult, Task
from toolmode.tools import tool


@tool
def secret_word() -> str:
    """The word to report."""
    return "psst"


TASKS = [
    Task(
        name="loud_word",
        prompt="Call secret_word and report the word.",
        build=lambda workspace, seed: {},
        tools=lambda env: [secret_word],
        check=lambda answer, workspace, facts: CheckResult(answer == "PSST", "the word in capitals"),
    )
]
'''


def test_toolmode_bench_compares_it(scripted, tmp_path: Path) -> None:
    def script(body: dict[str, Any], index: int) -> Any:
        results = _tool_results(body)
        return reply(results[-1]) if results else call("secret_word")  # answers with what the tool sent back

    server = scripted(script)
    tasks = tmp_path / "tasks.py"
    tasks.write_text(TASKS)
    out = tmp_path / "bench"
    code = bench_main(["--tasks", str(tasks), "--modes", "shout,react", "--runs", "1", "--jobs", "1",
                       "--base-url", server.base_url, "--model", "m", "--out", str(out), "--no-progress",
                       "--no-charts"])
    assert code == 0
    rows = {r["mode"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert rows["shout"]["ok"] is True and rows["shout"]["answer"] == "PSST"
    assert rows["react"]["ok"] is False and rows["react"]["answer"] == "psst"  # the same task, another mode


@register_mode
class PythonToolMode(Mode):
    """A mode whose program tool is called `python`: it tells the model layer so."""

    name = "python_tool"
    code_tool = "python"

    def __init__(self, tools: Any, setup: ModeSetup, options: Any) -> None:
        self.prompts = self.load_prompts(setup.prompts)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """One tool that takes a program."""
        return [{"type": "function", "function": {"name": "python", "description": "Run a program.", "parameters": {
            "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}]

    def handle_call(self, name: str, arguments: dict[str, Any]) -> str:
        """Say what would run."""
        return f"would run {arguments['code'].strip()!r}"


def test_a_mode_names_its_code_tool_to_the_model_layer(scripted) -> None:
    server = scripted([reply("```python\nprint(6 * 7)\n```"), reply("done")])
    with Agent([], "python_tool", model="m", base_url=server.base_url, recover_code_blocks=True) as agent:
        result = agent.run("compute")
    [call_made] = result.records[0].calls
    assert (call_made.name, call_made.result) == ("python", "would run 'print(6 * 7)'")
    assert result.records[0].recovered == "code" and result.answer == "done"
