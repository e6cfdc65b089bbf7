"""An `--mcp-config` file inside the workspace is refused (code confined to the workspace could edit it and
so have the host run any command at its next start), before any server starts; `--allow-env-in-workspace`
overrides it, as for the environment refusal. A link from outside into the workspace counts as inside."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolmode.cli import main


def _config(path: Path, marker: Path) -> Path:
    # The "server" only leaves a marker and exits: the proof that the host ran the config's command.
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    path.write_text(json.dumps({"mcpServers": {"planted": server}}))
    return path


@pytest.mark.parametrize("where", ["top", "subdir", "link_from_outside"])
def test_config_in_workspace_is_refused_in_one_line(where: str, tmp_path: Path, capsys) -> None:
    ws, marker = tmp_path / "ws", tmp_path / "ran"
    (ws / "sub").mkdir(parents=True)
    if where == "top":
        config = _config(ws / "mcp.json", marker)
    elif where == "subdir":
        config = _config(ws / "sub" / "mcp.json", marker)
    else:
        config = tmp_path / "mcp.json"
        config.symlink_to(_config(ws / "planted.json", marker))
    assert main(["tools", "--no-builtin", "--workspace", str(ws), "--mcp-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolmode: refused:") and err.count("\n") == 1
    assert "inside the workspace" in err and "--allow-env-in-workspace" in err
    assert not marker.exists()


def test_config_in_workspace_with_the_override_is_read(tmp_path: Path, capsys) -> None:
    ws, marker = tmp_path / "ws", tmp_path / "ran"
    ws.mkdir()
    config = _config(ws / "mcp.json", marker)
    main(["tools", "--no-builtin", "--allow-env-in-workspace", "--workspace", str(ws), "--mcp-config", str(config)])
    capsys.readouterr()  # the marker server is no MCP server: its failure is not what this checks
    assert marker.exists()


def test_config_outside_the_workspace_is_read(tmp_path: Path, capsys) -> None:
    ws, marker = tmp_path / "ws", tmp_path / "ran"
    ws.mkdir()
    config = _config(tmp_path / "mcp.json", marker)
    main(["tools", "--no-builtin", "--workspace", str(ws), "--mcp-config", str(config)])
    assert "refused" not in capsys.readouterr().err
    assert marker.exists()
