"""MCP servers never start with an import path that includes the workspace, whatever the command's form.

The model's code can write the workspace (often the current directory); an MCP server runs unconfined
with the user's credentials. A module planted there (`mcp_server_time.py`, what write_file can do) must
never run, through `python -m` with any options, `env`, a versioned or venv python, a shell; a script,
a program, a cwd, a `uv run --directory` or a PYTHONPATH entry inside the workspace is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolmode.cli import main
from toolmode.mcp import McpStartError, mcp_tools
from toolmode.mcp.config import ServerSpec
from toolmode.mcp.launch import NEUTRAL_CWD, LaunchRefused, plan

PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('ran')\n"
MODULE = "toolmode_planted_srv"  # not installed anywhere: only the plant could answer to it


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace that is the current directory, holding a planted module (and a planted mcp_server_time.py)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in (MODULE, "mcp_server_time"):
        (ws / f"{name}.py").write_text(PLANTED.format(marker=str(tmp_path / "ran")))
    monkeypatch.chdir(ws)
    return ws


def _py_alias(tmp_path: Path, name: str) -> str:
    """`name` (python3.11, python) on a PATH folder outside the workspace, running this interpreter."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    (folder / name).symlink_to(sys.executable)
    return str(folder)


def _forms(tmp_path: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    py, env = sys.executable, shutil.which("env") or "/usr/bin/env"
    path = _py_alias(tmp_path, "python3.11") if tmp_path.exists() else ""
    return [
        ("plain", [py, "-m", MODULE], {}),
        ("-W ignore", [py, "-W", "ignore", "-m", MODULE], {}),
        ("-Wignore", [py, "-Wignore", "-m", MODULE], {}),
        ("-X utf8", [py, "-X", "utf8", "-m", MODULE], {}),
        ("-um", [py, "-um", MODULE], {}),
        ("-Bc", [py, "-Bc", f"import {MODULE}"], {}),
        ("stdin", ["sh", "-c", f"echo 'import {MODULE}' | {py} -"], {}),
        ("env", [env, py, "-m", MODULE], {}),
        ("env options", [env, "-u", "FOO", "PYTHONUNBUFFERED=1", py, "-m", MODULE], {}),
        ("env -S", [env, "-S", f"{py} -m {MODULE}"], {}),
        ("python3.11 on PATH", ["python3.11", "-m", MODULE], {"PATH": f"{path}:{os.environ['PATH']}"}),
        ("a shell", ["sh", "-c", f"exec {py} -m {MODULE}"], {}),
        ("safe path unset", [env, "PYTHONSAFEPATH=", py, "-m", MODULE], {}),  # the working directory still holds
    ]


def test_the_planted_module_runs_when_started_in_the_workspace_without_protection(ws: Path, tmp_path: Path) -> None:
    """The control: what the attack does when nothing stops it."""
    subprocess.run([sys.executable, "-m", MODULE], cwd=ws, env={"PATH": os.environ["PATH"]}, check=False)
    assert (tmp_path / "ran").exists()


@pytest.mark.parametrize("index", range(13), ids=[f[0] for f in _forms(Path("/nonexistent"))])
def test_a_planted_module_never_runs_whatever_the_command_form(index: int, ws: Path, tmp_path: Path) -> None:
    _, argv, env = _forms(tmp_path)[index]
    spec = ServerSpec("time", command=argv[0], args=tuple(argv[1:]), env=env)
    with pytest.raises(McpStartError):  # no real server: it cannot start, and it must not run the plant either
        mcp_tools(spec, timeout=20, workspace=ws)
    assert not (tmp_path / "ran").exists()


def test_the_real_time_server_starts_and_the_plant_does_not_run(ws: Path, tmp_path: Path) -> None:
    tools = mcp_tools(f"{sys.executable} -X utf8 -W ignore -m mcp_server_time", timeout=20, workspace=ws)
    try:
        assert "get_current_time" in [t.name for t in tools]
    finally:
        tools[0].fn.server.close()  # type: ignore[attr-defined]
    assert not (tmp_path / "ran").exists()


def test_servers_start_outside_the_workspace(ws: Path, tmp_path: Path) -> None:
    spec = ServerSpec("where", command=sys.executable, args=("-c", f"open({str(tmp_path / 'cwd')!r}, 'w').write(__import__('os').getcwd())"))
    with pytest.raises(McpStartError):
        mcp_tools(spec, timeout=20, workspace=ws)
    assert (tmp_path / "cwd").read_text() == NEUTRAL_CWD
    assert plan(ServerSpec("npx", command="npx", args=("-y", "some-server")), ws).cwd == NEUTRAL_CWD
    assert plan(ServerSpec("node", command="node", args=("-e", "require('./x')")), ws).cwd == NEUTRAL_CWD  # code, no file
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert plan(ServerSpec("c", command="npx", cwd=str(outside)), ws).cwd == str(outside)
    os.chdir(outside)  # the host's own directory, outside the workspace, is kept (relative paths work)
    assert plan(ServerSpec("c", command="npx"), ws).cwd == str(outside)


@pytest.mark.parametrize("case", ["script", "relative script", "venv python", "node script", "cwd", "uv --directory",
                                  "PYTHONPATH", "linked script"])
def test_code_in_the_workspace_is_refused_before_anything_starts(case: str, ws: Path, tmp_path: Path) -> None:
    (ws / "server.py").write_text(PLANTED.format(marker=str(tmp_path / "ran")))
    (ws / "server.js").write_text("require('fs').writeFileSync(process.argv[2], 'ran')\n")
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (tmp_path / "link.py").symlink_to(ws / "server.py")
    spec = {
        "script": ServerSpec("s", command=sys.executable, args=(str(ws / "server.py"),)),
        "relative script": ServerSpec("s", command=sys.executable, args=("-u", "server.py")),
        "venv python": ServerSpec("s", command=str(venv_bin / "python"), args=("-m", "mcp_server_time")),
        "node script": ServerSpec("s", command="node", args=("server.js",)),
        "cwd": ServerSpec("s", command=sys.executable, args=("-m", "mcp_server_time"), cwd=str(ws)),
        "uv --directory": ServerSpec("s", command="uv", args=("run", "--directory", str(ws), "server")),
        "PYTHONPATH": ServerSpec("s", command=sys.executable, args=("-m", "x"), env={"PYTHONPATH": str(ws)}),
        "linked script": ServerSpec("s", command=sys.executable, args=(str(tmp_path / "link.py"),)),
    }[case]
    with pytest.raises(LaunchRefused, match="inside the workspace"):
        plan(spec, ws)
    with pytest.raises(McpStartError, match="refused: .*--allow-env-in-workspace"):
        mcp_tools(spec, timeout=20, workspace=ws)
    assert not (tmp_path / "ran").exists()


def test_the_user_may_accept_a_script_in_the_workspace(ws: Path, tmp_path: Path) -> None:
    (ws / "server.py").write_text(PLANTED.format(marker=str(tmp_path / "ran")))
    with pytest.raises(McpStartError):  # it runs (no MCP server in it: it then fails the handshake)
        mcp_tools(ServerSpec("s", command=sys.executable, args=("server.py",)), timeout=20, workspace=ws,
                  allow_env_in_workspace=True)
    assert (tmp_path / "ran").exists()


def test_a_script_outside_the_workspace_still_imports_its_neighbours(ws: Path, tmp_path: Path) -> None:
    # `python server.py` puts the script's folder (not the cwd) first, and it gets no PYTHONSAFEPATH.
    srv = tmp_path / "srv"
    srv.mkdir()
    (srv / "helper.py").write_text(PLANTED.format(marker=str(tmp_path / "helper-ran")))
    (srv / "server.py").write_text("import helper\n")
    with pytest.raises(McpStartError):
        mcp_tools(ServerSpec("script", command=sys.executable, args=(str(srv / "server.py"),)), timeout=20,
                  workspace=ws)
    assert (tmp_path / "helper-ran").exists()
    assert not (tmp_path / "ran").exists()


def test_the_cli_starts_no_server_from_the_workspace(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--no-builtin", "--workspace", str(ws), "--mcp", f"{sys.executable} -X utf8 -m mcp_server_time"]) == 0
    assert not (tmp_path / "ran").exists()
    assert main(["tools", "--no-builtin", "--workspace", str(ws), "--mcp", f"{sys.executable} {ws / 'mcp_server_time.py'}"]) == 2
    assert "inside the workspace" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()
