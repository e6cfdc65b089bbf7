"""A workspace holding toolmode's own Python environment is refused by the sandbox and the shell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolmode.hostenv import environment_refusal, python_environment_dirs
from toolmode.sandbox import Sandbox, SandboxLimits, UnsafeWorkspace
from toolmode.sandbox.shell import run_confined
from toolmode.tools.builtin import builtin_tools

ENV_PARENT = Path(sys.prefix).resolve().parent  # a directory that contains the running environment


def test_environment_found_inside_its_parent_and_not_elsewhere(tmp_path: Path) -> None:
    assert Path(sys.prefix).resolve() in python_environment_dirs(ENV_PARENT)
    assert python_environment_dirs(tmp_path) == []
    assert environment_refusal(tmp_path) is None
    message = environment_refusal(ENV_PARENT)
    assert message is not None and "--allow-env-in-workspace" in message and "--workspace" in message


def test_sandbox_refuses_such_a_workspace_unless_allowed() -> None:
    with pytest.raises(UnsafeWorkspace, match="contains the Python environment"):
        Sandbox(ENV_PARENT, SandboxLimits(timeout=5))
    with Sandbox(ENV_PARENT, SandboxLimits(timeout=5), allow_env_in_workspace=True) as sb:
        assert sb.run("print(1 + 1)", [], lambda name, kwargs: None).output.strip() == "2"


def test_shell_refuses_such_a_workspace_unless_allowed() -> None:
    with pytest.raises(UnsafeWorkspace):
        run_confined("true", workspace=ENV_PARENT, timeout=5)
    assert run_confined("echo ok", workspace=ENV_PARENT, timeout=5, allow_env_in_workspace=True).stdout == "ok\n"


def test_run_shell_tool_reports_the_refusal() -> None:
    run_shell = {t.name: t for t in builtin_tools(ENV_PARENT)}["run_shell"]
    with pytest.raises(UnsafeWorkspace):
        run_shell(command="true")


def test_a_user_site_not_made_yet_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An interpreter that reads the user site (`pip install --user`, a system Python), whose
    # ~/.local/lib/pythonX.Y/site-packages does not exist yet, and a workspace that would contain it
    # (`--workspace ~`): code could make the directory and a `.pth` file in it, which every later Python
    # start runs. Refused like an existing one, by the sandbox check and by write_file.
    import site

    home = tmp_path / "home"
    home.mkdir()
    user_site = home / ".local" / "lib" / "python3" / "site-packages"
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user_site))
    message = environment_refusal(home)
    assert message is not None and "contains the Python environment" in message
    write_file = {t.name: t for t in builtin_tools(home)}["write_file"]
    with pytest.raises(PermissionError, match="inside the Python environment"):
        write_file(path=".local/lib/python3/site-packages/evil.pth", content="import os; os.system('x')")
    assert not (user_site / "evil.pth").exists()


def test_a_sys_path_entry_not_made_yet_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # PYTHONPATH=~/pylib set but not made yet: code that makes it and a sitecustomize.py in it has the
    # host run that at its next start.
    missing = tmp_path / "pylib"
    monkeypatch.setattr(sys, "path", [*sys.path, str(missing)])
    message = environment_refusal(tmp_path)
    assert message is not None and str(missing) in message
    write_file = {t.name: t for t in builtin_tools(tmp_path)}["write_file"]
    with pytest.raises(PermissionError, match="refused"):
        write_file(path="pylib/sitecustomize.py", content="import os")
    assert not (missing / "sitecustomize.py").exists()
