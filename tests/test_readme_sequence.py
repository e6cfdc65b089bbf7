"""The README's set-up, then its first real-model commands, run as written where the set-up leaves you.

The set-up leaves the user in the repository root with `.venv` inside it. This test builds that: a
directory holding a real virtual environment (`python -m venv`, so `sys.prefix` lies inside it) and the
repository's `examples/`, then runs each `toolmode run` line of the README's "With a real model" block
with that environment's Python, pointed at the scripted model server (the only words added are
`--base-url` and `--model`). The workspace refusal must still hold for the root itself.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

import toolmode
from toolmode.testing import call, reply

SRC = Path(toolmode.__file__).resolve().parent.parent
REPO = SRC.parent
README = REPO / "README.md"


def readme_run_commands() -> list[list[str]]:
    """The `toolmode run` lines of the README's "With a real model" block, split as a shell would."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"With a real model[^\n]*\n\n```bash\n(.*?)```", text, re.S)
    assert block, "the README has no 'With a real model' bash block"
    lines = [line for line in block.group(1).splitlines() if line.startswith("toolmode run")]
    assert len(lines) >= 2
    return [shlex.split(line) for line in lines]


@pytest.fixture(scope="module")
def repo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository root as the set-up leaves it: `.venv` inside, plus the README's example folders."""
    root = tmp_path_factory.mktemp("clone")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True, timeout=120)
    shutil.copytree(REPO / "examples", root / "examples")
    return root


def run_in(root: Path, argv: list[str], base_url: str) -> subprocess.CompletedProcess:
    """`toolmode ...` with the root's `.venv` Python (this checkout's code and this venv's packages on its path)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DEEPSEEK_API_KEY"] = "sk-test"  # the README's `export` line
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *site.getsitepackages()])
    env["COLUMNS"] = "200"
    python = root / ".venv" / "bin" / "python"
    assert argv[0] == "toolmode"
    return subprocess.run([str(python), "-m", "toolmode", *argv[1:], "--base-url", base_url, "--model", "scripted"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=180)


def expected_counts(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(folder.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out[path.name] = (len(lines), sum("ERROR" in line for line in lines))
    return out


COUNT_PROGRAM = """
for e in list_dir('.'):
    if e['name'].endswith('.txt'):
        lines = read_file(e['name']).splitlines()
        print(e['name'], len(lines), sum('ERROR' in l for l in lines))
"""


def test_the_root_itself_is_still_refused(repo_root: Path, scripted) -> None:
    server = scripted([call("run_code", code="print(1)"), reply("never")])
    task = readme_run_commands()[0][-1]
    proc = run_in(repo_root, ["toolmode", "run", task], server.base_url)
    assert proc.returncode == 2
    assert "contains the Python environment" in proc.stderr and "--workspace" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert server.requests == []  # refused before any request


def test_readme_commands_work_as_written(repo_root: Path, scripted) -> None:
    first, second = readme_run_commands()[:2]
    # 1. code mode: the model's program counts lines in the workspace the README names.
    server = scripted([call("run_code", code=COUNT_PROGRAM), reply("已统计。")])
    proc = run_in(repo_root, first, server.base_url)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tool_result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    counts = expected_counts(repo_root / "examples" / "logs")
    assert counts and all(f"{name} {n} {errors}" in tool_result for name, (n, errors) in counts.items())
    assert "已统计。" in proc.stdout
    # 2. react mode: a builtin tool call, then the answer.
    server = scripted([call("current_time", timezone="Asia/Shanghai"), reply("北京时间已给出。")])
    proc = run_in(repo_root, second, server.base_url)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "mode react" in proc.stdout and "← current_time:" in proc.stdout and "北京时间已给出。" in proc.stdout
