"""Which tier a host gets (tiers.py), what its world looks like (view.py), and what a program sees in it."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from toolmode.sandbox import Sandbox, SandboxLimits, SandboxUnavailable, landlock, tiers, view
from toolmode.sandbox.shell import run_confined
from toolmode.settings import SandboxSettings

needs_landlock = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe again (the answers are cached per process) and warn again."""
    monkeypatch.setattr(tiers, "_probed", {})
    monkeypatch.setattr(tiers, "_warned", False)


@needs_landlock
def test_auto_prefers_bubblewrap_then_unshare_then_landlock(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    if tiers.bwrap_path() is None:
        pytest.skip("bubblewrap is not installed here (the CI installs it)")
    assert tiers.resolve("auto") == tiers.BWRAP
    monkeypatch.setattr(tiers, "bwrap_path", lambda: None)  # as on a host without bubblewrap
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the namespaces tier still holds
        assert tiers.resolve("auto") == tiers.UNSHARE
    monkeypatch.setattr(tiers, "_probe", lambda tier: (False, "user namespaces cannot be made"))
    with pytest.warns(tiers.SandboxWarning) as caught:
        assert tiers.resolve("auto") == tiers.LANDLOCK
    message = str(caught[0].message)
    assert "apt install bubblewrap" in message and "user namespaces cannot be made" in message
    assert "stat host paths" in message and "chmod" in message  # what the weaker tier does not hold
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        assert tiers.resolve("auto") == tiers.LANDLOCK


def test_forced_tiers_fail_closed_with_what_to_install(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiers, "bwrap_path", lambda: None)
    monkeypatch.setattr(tiers, "_probe", lambda tier: (False, "user namespaces cannot be made"))
    for policy in ("namespaces", "bwrap", "unshare"):
        with pytest.raises(SandboxUnavailable, match="apt install bubblewrap"):
            tiers.resolve(policy)
    with pytest.raises(ValueError, match="unknown sandbox policy"):
        tiers.resolve("docker")
    assert tiers.resolve("none") == tiers.NONE


def test_the_view_plan_puts_parents_first_and_protects_git_and_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "runs").mkdir()
    plan = view.plan(str(ws), shell=True, tmp_bytes=1 << 20)
    dests = [op[1] for op in plan]
    assert dests == sorted(dests)
    assert ("tmpfs", "/tmp", str(1 << 20)) in plan and dests.index("/tmp") < dests.index(str(ws))  # ws under /tmp
    assert ("bind", str(ws), str(ws), view.RW) in plan
    assert ("bind", str(ws / ".git"), str(ws / ".git"), view.RO) in plan
    assert ("bind", str(ws / "runs"), str(ws / "runs"), view.RO) in plan
    assert [op for op in plan if op[0] == "bind" and op[3] == view.RW] == [("bind", str(ws), str(ws), view.RW)]
    assert not any(op[1].startswith(("/home", "/root/.", "/sys", "/proc", "/etc/shadow")) and op[1] not in
                   view.python_paths() for op in plan)
    # a workspace at /tmp is /tmp: no private tmpfs over it (its growth would be the host's)
    assert not view.has_private_tmp(view.plan("/tmp", shell=False, tmp_bytes=1 << 20))
    # a symlinked .git is not bound (the bind would follow it wherever it points)
    (ws / ".git").rmdir()
    (ws / ".git").symlink_to(tmp_path)
    assert not any(op[1] == str(ws / ".git") for op in view.plan(str(ws), shell=False, tmp_bytes=None))


def test_bwrap_command_line() -> None:
    plan = view.plan("/nonexistent-ws", shell=False, tmp_bytes=8 << 20)
    if tiers.bwrap_path() is None:
        pytest.skip("bubblewrap is not installed here")
    argv = tiers.bwrap_argv(plan, "/nonexistent-ws")
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--as-pid-1"):
        assert flag in argv
    assert "--dev" not in argv and "--proc" not in argv  # a /dev tmpfs is unbounded memory; no /proc at all
    assert argv[argv.index("--tmpfs") - 2:argv.index("--tmpfs") + 2] == ["--size", str(8 << 20), "--tmpfs", "/tmp"]
    assert argv[-5:] == ["--remount-ro", "/", "--chdir", "/nonexistent-ws", "--"]


@needs_landlock
def test_what_a_program_sees_with_namespaces(tier: str, tmp_path: Path) -> None:
    if tier == "landlock":
        pytest.skip("the landlock tier shares the host's namespaces")
    program = (
        "import os\n"
        "print(os.uname().nodename, os.getpid(), os.getppid(), os.getuid() == UID)\n"
        "print([p for p in ('/home', '/root/.bashrc', '/etc/passwd', '/sys', '/proc', '/var') if os.path.exists(p)])\n"
        "st = os.statvfs('/tmp')\n"
        "print(st.f_blocks * st.f_frsize == 8 << 20, os.access('/tmp', os.W_OK))\n"
    ).replace("UID", str(os.getuid()))
    with Sandbox(tmp_path / "ws", SandboxLimits(timeout=10, max_write_mb=8), policy=tier) as sb:
        assert sb.run(program, [], lambda n, k: None).text() == "toolmode 2 1 True\n[]\nTrue True"


@needs_landlock
def test_what_a_shell_sees_with_namespaces(tier: str, tmp_path: Path) -> None:
    if tier == "landlock":
        pytest.skip("the landlock tier shares the host's namespaces")
    res = run_confined("hostname; echo $$; ls /proc 2>&1 | head -1; ls /tmp; id -u", workspace=tmp_path, timeout=10)
    lines = res.stdout.splitlines()
    assert lines[0] == "toolmode" and lines[1] == "3"  # pid 1 the init, 2 the launcher, 3 the shell
    assert "No such file" in lines[2]
    assert lines[-1] == str(os.getuid())


@needs_landlock
def test_git_and_runs_made_after_the_worker_started_are_read_only_in_the_first_run(tier: str, tmp_path: Path) -> None:
    # The first trace of a session makes runs/ after the sandbox (and its first worker) started.
    if tier == "landlock":
        pytest.skip("the landlock tier cannot bind them read-only")
    ws = tmp_path / "ws"
    with Sandbox(ws, SandboxLimits(timeout=10), policy=tier) as sb:
        (ws / "runs").mkdir()
        res = sb.run("try:\n    open('runs/x', 'w')\nexcept OSError as e:\n    print(e.errno)", [], lambda n, k: None)
    assert res.text() == "30" and not (ws / "runs" / "x").exists()  # EROFS


@pytest.mark.parametrize("mode", ["code", "react"])
def test_the_tier_is_named_at_the_start_of_each_run(tier: str, mode: str, tmp_path: Path, scripted: Any) -> None:
    # code mode names run_code's sandbox; react mode the builtin run_shell's (the same tier chooser)
    from toolmode import Agent
    from toolmode.events import RunStart
    from toolmode.testing import reply
    from toolmode.tools.builtin import builtin_tools

    server = scripted([reply("one"), reply("two")])
    words = {"bwrap": "namespaces (bubblewrap)", "unshare": "namespaces (unshare)", "landlock": "no namespaces"}
    with Agent(tools=builtin_tools(tmp_path), mode=mode, base_url=server.base_url, model="m", api_key="k",
               sandbox=SandboxSettings(workspace=tmp_path, policy=tier)) as agent:
        for task in ("first", "second"):
            (start,) = [e for e in agent.stream(task) if isinstance(e, RunStart)]
            named = [n for n in start.notes if n.startswith("sandbox:" if mode == "code" else "run_shell sandbox:")]
            assert len(named) == 1 and words[tier] in named[0] and "seccomp" in named[0], start.notes


def test_programs_run_below_the_host_and_cannot_climb_back(tier: str, tmp_path: Path) -> None:
    # the start-up runs at the host's priority; the program (and the shell's command) at confine.NICE, for good
    program = ("import os\nprint(os.getpriority(os.PRIO_PROCESS, 0))\ntry:\n"
               "    os.setpriority(os.PRIO_PROCESS, 0, 0)\n    print('RAISED')\nexcept OSError as e:\n    print(e.errno)\n")
    with Sandbox(tmp_path, SandboxLimits(timeout=30), policy=tier) as sb:
        assert sb.run(program, [], lambda name, kwargs: None).output.split() == ["10", "13"]  # EACCES
    res = run_confined("nice; renice -n 0 -p $$ >/dev/null 2>&1 && echo RAISED || echo refused", workspace=tmp_path,
                       timeout=30)
    assert res.stdout.split() == ["10", "refused"], res


@needs_landlock
def test_react_run_shell_runs_on_the_agents_sandbox_policy(fresh: None, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path, scripted: Any) -> None:
    # run_shell took the default chooser whatever the Agent's policy: a forced tier that cannot be built ran the
    # command on a weaker one, where run_code is refused. Now the tier asked for is the tier the command runs on.
    import socket

    from toolmode import Agent
    from toolmode.events import RunStart
    from toolmode.testing import call, reply
    from toolmode.tools.builtin import builtin_tools

    def shell_result(policy: str) -> tuple[str, list[str]]:
        server = scripted([call("run_shell", command="hostname"), reply("done")])
        with Agent(tools=builtin_tools(tmp_path), mode="react", base_url=server.base_url, model="m", api_key="k",
                   sandbox=SandboxSettings(workspace=tmp_path, policy=policy)) as agent:
            events = list(agent.stream("what is the host name?"))
        (start,) = [e for e in events if isinstance(e, RunStart)]
        (tool,) = [m for m in events[-1].result.messages if m["role"] == "tool"]
        return tool["content"], start.notes

    ok, why = tiers.available(tiers.LANDLOCK)
    if not ok:
        pytest.skip(f"the landlock tier cannot be built here: {why}")
    content, notes = shell_result("landlock")  # no namespaces: the host's own name, even where bwrap works
    assert f'"stdout": "{socket.gethostname()}\\n"' in content.replace("'", '"'), content
    assert any("run_shell sandbox:" in n and "no namespaces" in n for n in notes), notes

    monkeypatch.setattr(tiers, "bwrap_path", lambda: None)  # as on a host without bubblewrap
    content, notes = shell_result("bwrap")
    assert "SandboxUnavailable" in content and "apt install bubblewrap" in content, content
    assert any("every command is refused" in n for n in notes), notes
