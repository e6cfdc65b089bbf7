"""The host never runs code that confined code could write.

- Workers and shell launchers start from a sealed in-memory copy of their code (boot.py): replacing the
  files of toolmode's package on disk, even from inside the sandbox, changes nothing a later child runs.
- A workspace that contains toolmode's package or a sys.path entry (or lies inside the package, the
  stdlib or site-packages) is refused like one holding the Python environment, with the same override;
  the file tools never write into those directories.
- `python -m toolmode` imports nothing planted in the current directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolmode
from toolmode.hostenv import environment_refusal, host_code_dirs
from toolmode.sandbox import Sandbox, SandboxLimits, UnsafeWorkspace, landlock
from toolmode.sandbox.shell import run_confined
from toolmode.tools.builtin import builtin_tools

SRC = Path(toolmode.__file__).resolve().parent.parent  # the directory holding the package
PACKAGE = SRC / "toolmode"
LIMITS = SandboxLimits(timeout=10)
needs_landlock = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")


def _run(sb: Sandbox, code: str) -> str:
    return sb.run(code, [], lambda name, kwargs: None).text()


# ---------------------------------------------------------------- what the children load


@needs_landlock
def test_worker_has_no_path_to_toolmode_and_no_extra_descriptor(tmp_path: Path) -> None:
    program = (
        "import os, stat, sys\n"
        "print('path', [p for p in sys.path if 'toolmode' in p or p in ('', os.getcwd())])\n"
        "files = [m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)]\n"
        f"print('from package', [f for f in files if f.startswith({str(SRC)!r})])\n"
        "kinds = []\n"
        "for fd in range(3, 256):\n"
        "    try:\n        mode = os.fstat(fd).st_mode\n    except OSError:\n        continue\n"
        "    kinds.append('socket' if stat.S_ISSOCK(mode) else 'other')\n"
        "print('fds', kinds)\n"
    )
    with Sandbox(tmp_path, LIMITS) as sb:
        out = _run(sb, program)
    assert out.splitlines() == ["path []", "from package []", "fds ['socket']"], out


@needs_landlock
def test_launcher_closes_its_code_descriptor(tmp_path: Path) -> None:
    # The command inherits only stdin, stdout and stderr: the bootstrap closed the sealed memfd.
    (tmp_path / "fds.py").write_text(
        "import os\nfor fd in range(3, 1024):\n    try:\n        os.fstat(fd)\n        print('open', fd)\n"
        "    except OSError:\n        pass\nprint('checked')\n")
    res = run_confined("python3 -I fds.py", workspace=tmp_path, timeout=10)
    assert res.stdout == "checked\n", res


def _copy_package(root: Path) -> Path:
    """A private copy of the package (as an editable checkout would be), without bytecode caches."""
    shutil.copytree(PACKAGE, root / "toolmode", ignore=shutil.ignore_patterns("__pycache__"))
    return root / "toolmode"


SWAP = """
import sys
from pathlib import Path
from toolmode.sandbox import Sandbox, UnsafeWorkspace
from toolmode.sandbox.shell import run_confined

root, marker = Path(sys.argv[1]), sys.argv[2]
evil = f"open({marker!r}, 'a').write('ran ' + __name__ + '\\\\n')\\n"
names = ["worker.py", "launcher.py", "caps.py", "confine.py", "protocol.py", "landlock.py", "seccomp.py"]
call = lambda name, kwargs: None

# 1. The host swaps the files itself after import (as anything with write access could): no effect.
for name in names:
    (root / "toolmode" / "sandbox" / name).write_text(evil)
ws = root / "ws"
ws.mkdir()
with Sandbox(ws) as sb:
    print("code:", sb.run("print(6 * 7)", [], call).text())
print("shell:", run_confined("echo from-shell", workspace=ws, timeout=10).stdout.strip())

# 2. The workspace holds the package: refused, unless allowed; then confined code rewrites the sandbox's
#    modules and a later worker / launcher still runs the host's copy.
try:
    Sandbox(root)
except UnsafeWorkspace as exc:
    print("refused:", "toolmode's own package directory" in str(exc))
rewrite = "from pathlib import Path\\n" + "".join(
    f"Path({str(root / 'toolmode' / 'sandbox' / n)!r}).write_text({evil!r})\\n" for n in names) + "print('rewrote')"
with Sandbox(root, allow_env_in_workspace=True) as sb:
    print("first:", sb.run(rewrite, [], call).text())
    print("next:", sb.run("print(6 * 7)", [], call).text())
print("shell first:", run_confined(f"echo {evil!r} > toolmode/sandbox/launcher.py && echo rewrote", workspace=root,
                                   timeout=10, allow_env_in_workspace=True).stdout.strip())
print("shell next:", run_confined("echo from-shell", workspace=root, timeout=10, allow_env_in_workspace=True).stdout.strip())
"""


@needs_landlock
def test_swapped_sandbox_files_are_never_run(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    root.mkdir()
    _copy_package(root)
    marker = tmp_path / "ran.txt"
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", SWAP, str(root), str(marker)], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert out.stdout.splitlines() == [
        "code: 42", "shell: from-shell", "refused: True", "first: rewrote", "next: 42",
        "shell first: rewrote", "shell next: from-shell",
    ], out.stdout + out.stderr
    assert "ran" in (root / "toolmode" / "sandbox" / "worker.py").read_text()  # the swap did happen
    assert not marker.exists(), marker.read_text()


# ---------------------------------------------------------------- refusal


def test_code_dirs_cover_the_package_environment_and_sys_path() -> None:
    dirs = {d.path: d.why for d in host_code_dirs()}
    assert "package" in dirs[PACKAGE]
    assert "environment" in dirs[Path(sys.prefix).resolve()]
    stdlib = Path(os.__file__).resolve().parent
    assert stdlib in dirs and "sys.path" in dirs[stdlib]


def test_workspace_holding_the_package_is_refused_with_directory_and_reason() -> None:
    message = environment_refusal(SRC)
    assert message is not None
    assert str(PACKAGE) in message and "toolmode's own package directory" in message
    assert "--allow-env-in-workspace" in message
    inside = environment_refusal(PACKAGE / "sandbox")
    assert inside is not None and f"lies inside {PACKAGE}" in inside
    stdlib = Path(os.__file__).resolve().parent
    assert environment_refusal(stdlib / "no-such-dir") is not None  # inside the stdlib
    assert "sys.path" in (environment_refusal(stdlib) or "")


def test_workspace_holding_a_sys_path_entry_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "ws" / "lib"
    lib.mkdir(parents=True)
    assert environment_refusal(tmp_path / "ws") is None
    monkeypatch.syspath_prepend(str(lib))
    message = environment_refusal(tmp_path / "ws")
    assert message is not None and str(lib) in message and "sys.path" in message
    assert environment_refusal(lib / "sub") is None  # an ordinary import directory: only containing it is refused


@needs_landlock
def test_sandbox_and_shell_refuse_a_workspace_with_the_package_unless_allowed() -> None:
    with pytest.raises(UnsafeWorkspace, match="toolmode's own package directory"):
        Sandbox(SRC, LIMITS)
    with pytest.raises(UnsafeWorkspace, match="toolmode's own package directory"):
        run_confined("true", workspace=SRC, timeout=5)
    run_shell = {t.name: t for t in builtin_tools(SRC)}["run_shell"]
    with pytest.raises(UnsafeWorkspace):
        run_shell(command="true")
    with Sandbox(SRC, LIMITS, allow_env_in_workspace=True) as sb:
        assert _run(sb, "print(1 + 1)") == "2"
    assert run_confined("echo ok", workspace=SRC, timeout=5, allow_env_in_workspace=True).stdout == "ok\n"


def test_file_tools_never_write_into_the_package_or_a_sys_path_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "checkout"
    root.mkdir()
    _copy_package(root)
    (root / "lib").mkdir()
    (root / "lib.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.syspath_prepend(str(root / "lib"))
    monkeypatch.syspath_prepend(str(root / "lib.zip"))
    monkeypatch.setattr("toolmode.hostenv.__file__", str(root / "toolmode" / "hostenv.py"))  # "this" package
    write = {t.name: t for t in builtin_tools(root)}["write_file"]
    worker_before = (root / "toolmode" / "sandbox" / "worker.py").read_text()
    for path, why in [("toolmode/sandbox/worker.py", "toolmode's own package directory"),
                      ("toolmode/new.py", "toolmode's own package directory"),
                      ("lib/json.py", "sys.path"), ("lib.zip", "sys.path")]:
        with pytest.raises(PermissionError, match=why):
            write(path=path, content="import os\n")
    assert (root / "toolmode" / "sandbox" / "worker.py").read_text() == worker_before
    assert not (root / "lib" / "json.py").exists()
    assert write(path="notes.txt", content="fine") == "wrote 4 bytes to notes.txt"
    inner = {t.name: t for t in builtin_tools(root / "toolmode" / "sandbox")}["write_file"]
    with pytest.raises(PermissionError, match="the workspace lies inside"):
        inner(path="anything.txt", content="x")


# ---------------------------------------------------------------- python -m toolmode


# -S: no site .pth preloads `typing`, so toolmode's own first imports are what a planted typing.py meets.
@pytest.mark.parametrize("form", [["-m", "toolmode"], ["-mtoolmode"], ["-B", "-m", "toolmode.__main__"],
                                  ["-S", "-m", "toolmode"]],
                         ids=["-m", "-mtoolmode", "-m __main__", "-S -m"])
def test_python_m_imports_nothing_planted_in_the_current_directory(tmp_path: Path, form: list[str]) -> None:
    planted = ["json", "rich", "httpx", "pathlib", "dataclasses", "argparse", "typing", "enum", "sandbox", "cli"]
    for name in planted:
        (tmp_path / f"{name}.py").write_text(f"open('MARK-{name}', 'w').close()\nraise ImportError('planted')\n")
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "__init__.py").write_text("open('MARK-openai', 'w').close()\nraise ImportError('planted')\n")
    import site

    # under -S the installed packages are reached through PYTHONPATH (their .pth files are not run)
    path = [str(SRC), *(site.getsitepackages() if "-S" in form else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    for args in (["--help"], ["tools"]):
        out = subprocess.run([sys.executable, *form, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert sorted(p.name for p in tmp_path.glob("MARK-*")) == []


@needs_landlock
def test_code_copy_is_sealed_and_made_again_when_closed(tmp_path: Path) -> None:
    from toolmode.sandbox import boot

    fd, _ = boot._sealed_memfd("worker")
    for change in (lambda: os.write(fd, b"x"), lambda: os.ftruncate(fd, 0), lambda: os.pwrite(fd, b"x", 0)):
        with pytest.raises(PermissionError):
            change()
    os.close(fd)  # as a daemon closing every descriptor would
    with Sandbox(tmp_path, LIMITS) as sb:
        assert _run(sb, "print(6 * 7)") == "42"
