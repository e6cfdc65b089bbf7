"""A `python -m server` MCP server started in the host's current directory (the CLI's default workspace)
never imports a module the model planted there: the directory is not put first on its sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolmode.mcp import mcp_tools
from toolmode.mcp.config import ServerSpec

PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('ran')\n"


@pytest.mark.parametrize("args", [["-m", "toolmode_planted_srv"], ["-u", "-m", "toolmode_planted_srv"],
                                  ["-c", "import toolmode_planted_srv"]])
def test_a_module_planted_in_the_cwd_is_not_run(args: list[str], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ws, marker = tmp_path / "ws", tmp_path / "ran"
    ws.mkdir()
    (ws / "toolmode_planted_srv.py").write_text(PLANTED.format(marker=str(marker)))  # what write_file can do
    monkeypatch.chdir(ws)
    with pytest.raises(Exception):  # noqa: B017, PT011 - no real server here: it fails to start, whatever the SDK calls that
        mcp_tools(ServerSpec("planted", command=sys.executable, args=tuple(args)), timeout=20)
    assert not marker.exists()


def test_a_script_still_imports_its_neighbours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `python server.py` puts the script's directory (not the cwd) first: left as it is.
    (tmp_path / "helper.py").write_text(PLANTED.format(marker=str(tmp_path / "helper-ran")))
    (tmp_path / "server.py").write_text("import helper\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception):  # noqa: B017, PT011
        mcp_tools(ServerSpec("script", command=sys.executable, args=("server.py",)), timeout=20)
    assert (tmp_path / "helper-ran").exists()
