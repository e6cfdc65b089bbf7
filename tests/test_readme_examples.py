"""The README's "Building applications" examples run as written against the scripted server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = [  # what each example prints (its comments say so)
    "10 True\n4 2\n", "The sum is 5.", "A and B\n", "budget timeout 1\n", "City(name='Paris', population=2100000)\n",
    "hi\n",
]


def examples(readme: str) -> list[str]:
    """The Python blocks of the applications section (the ones that start a scripted server)."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    start = re.search(r"^## (Building applications|构建应用)\n", text, re.MULTILINE)
    assert start is not None, f"{readme} has no applications section"
    end = re.search(r"^## ", text[start.end():], re.MULTILINE)
    section = text[start.end(): start.end() + end.start() if end else len(text)]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


RUNNER = """
import contextlib, io, json, sys
outputs = []
for code in json.load(sys.stdin):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "<README example>", "exec"), {"__name__": "__main__"})
    outputs.append(buffer.getvalue())
print(json.dumps(outputs))
"""


def test_application_examples_run(tmp_path: Path) -> None:
    blocks = examples("README.md")
    assert len(blocks) == len(EXPECTED)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    # one interpreter for all (each example gets fresh globals): the import is paid once
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(blocks), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    outputs = json.loads(proc.stdout.splitlines()[-1])
    for code, expected, out in zip(blocks, EXPECTED, outputs, strict=True):
        assert expected in out, f"{code}\n---\n{out}"
    assert list(tmp_path.iterdir()) == []  # quiet by default: no ./runs


def test_the_chinese_readme_shows_the_same_examples() -> None:
    assert examples("README.zh-CN.md") == examples("README.md")


def test_files_the_readmes_name_exist_in_the_checkout() -> None:
    # A new user runs the examples from the repository root: a file the README names must be there.
    for readme in ("README.md", "README.zh-CN.md"):
        text = (ROOT / readme).read_text(encoding="utf-8")
        named = set(re.findall(r"\bexamples/[\w./-]*\w", text))
        assert "examples/logs/web.txt" in named and "examples/logs" in named, readme
        assert [p for p in sorted(named) if not (ROOT / p).exists()] == [], readme
        assert "log1.txt" not in text.split("## Building applications")[0].split("## 构建应用")[0], readme


def _extending_example(readme: str, heading: str) -> str:
    text = (ROOT / readme).read_text(encoding="utf-8")
    start = re.search(rf"^## {heading}\n", text, re.MULTILINE)
    assert start is not None, f"{readme} has no {heading!r} section"
    return re.findall(r"```python\n(.*?)```", text[start.end():], re.DOTALL)[0]


def test_the_extending_example_defines_a_mode_that_runs(scripted) -> None:
    code = _extending_example("README.md", "Extending toolmode")
    assert code == _extending_example("README.zh-CN.md", "扩展 toolmode").replace(
        "# Agent(tools, \"shout\", exclaim=True)；导入该模块后即可 toolmode run --mode shout \"...\"",
        "# Agent(tools, \"shout\", exclaim=True); toolmode run --mode shout \"...\" once the module is imported")
    exec(compile(code, "<README extending example>", "exec"), {"__name__": "__main__"})
    from toolmode import Agent, tool
    from toolmode.testing import call, reply

    @tool
    def whisper(text: str) -> str:
        """Return the text."""
        return text

    server = scripted([call("whisper", text="quiet"), reply("done")])
    with Agent([whisper], "shout", exclaim=True, model="m", base_url=server.base_url) as agent:
        assert agent.run("go").answer == "done"
    assert server.requests[0]["messages"][0]["content"] == "Tool results come back in capitals."
    assert server.requests[1]["messages"][-1]["content"] == "QUIET!"
