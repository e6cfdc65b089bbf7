"""The host file tools stay inside the workspace while sandboxed code swaps directories and symlinks.

Sandboxed code may create symlinks and rename things inside the workspace. A check of a path followed by
a later open of the same path string (TOCTOU) then lets it swap a checked directory for a symlink to
anywhere. These tests play that attack: a real race (renameat2 RENAME_EXCHANGE in a loop), a
deterministic one (the swap happens right after the check), with the kernel's openat2 and with the
fallback walk, plus the refusal to write into the Python environment running the host.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
import threading
import time
from pathlib import Path

import pytest

from toolmode.tools import safe_open
from toolmode.tools.builtin import builtin_tools
from toolmode.tools.safe_open import EscapeError, open_beneath
from toolmode.tools.workspace import Workspace

_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}.get(platform.machine())
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_SECRET = "TOP-SECRET-outside-the-workspace"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux file-system semantics")


@pytest.fixture(params=["openat2", "walk"])
def mode(request, monkeypatch):
    """Run a test with openat2 and again with the fallback walk (forced with the module switch)."""
    if request.param == "openat2":
        if not safe_open.openat2_available():
            pytest.skip("openat2 is not available here")
        monkeypatch.setattr(safe_open, "USE_OPENAT2", True)
    else:
        monkeypatch.setattr(safe_open, "USE_OPENAT2", False)
    return request.param


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _exchange(libc: ctypes.CDLL, a: bytes, b: bytes) -> int:
    return libc.syscall(
        ctypes.c_long(_RENAMEAT2), ctypes.c_long(_AT_FDCWD), ctypes.c_char_p(a),
        ctypes.c_long(_AT_FDCWD), ctypes.c_char_p(b), ctypes.c_uint(_RENAME_EXCHANGE),
    )  # fmt: skip


class Scene:
    """A workspace with two swappable pairs, a directory `<name>` and a symlink `<name>_alt` to outside.

    `w` / `w_alt` -> `outside_w` (empty: nothing may ever be written there);
    `r` / `r_alt` -> `outside_r` (holds secret.txt and f.txt with the secret; `r/f.txt` is a decoy).
    """

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        self.outside_w = tmp_path / "outside_w"
        self.outside_r = tmp_path / "outside_r"
        for d in (self.root, self.outside_w, self.outside_r):
            d.mkdir()
        (self.outside_r / "f.txt").write_text(_SECRET + "\n")
        (self.outside_r / "secret.txt").write_text(_SECRET + "\n")
        (self.root / "w").mkdir()
        (self.root / "r").mkdir()
        (self.root / "r" / "f.txt").write_text("decoy\n")
        (self.root / "w_alt").symlink_to(self.outside_w)
        (self.root / "r_alt").symlink_to(self.outside_r)
        self.tools = {t.name: t for t in builtin_tools(self.root)}

    def swap(self, name: str) -> None:
        a = os.fsencode(self.root / name)
        if _exchange(_libc(), a, a + b"_alt") != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def escaped(self) -> list[str]:
        return sorted(p.name for p in self.outside_w.iterdir())


@pytest.fixture
def scene(tmp_path) -> Scene:
    if _RENAMEAT2 is None:
        pytest.skip("renameat2 syscall number unknown on this machine")
    made = Scene(tmp_path)
    try:
        made.swap("w")
        made.swap("w")
    except OSError as exc:
        pytest.skip(f"RENAME_EXCHANGE unsupported here: {exc}")
    return made


def _attempt(scene: Scene, errors: dict[str, int]) -> list[str]:
    """One round of every file tool on the swapped names; returns what leaked (empty if nothing)."""
    leaks: list[str] = []
    calls = [
        lambda: scene.tools["write_file"](path="w/pwn.txt", content="written by sandbox via host tool\n"),
        lambda: scene.tools["write_file"](path="w/sub/deep.txt", content="x"),
        lambda: scene.tools["write_file"](path="w/pwn.txt", content="more\n", append=True),
        lambda: scene.tools["read_file"](path="r/f.txt"),
        lambda: scene.tools["list_dir"](path="r"),
    ]
    for call in calls:
        try:
            result = call()
        except Exception as exc:  # refusals and 'no such file' while the names fly around are fine
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            continue
        if _SECRET in str(result) or "secret.txt" in str(result):
            leaks.append(f"read outside: {str(result)[:60]!r}")
    if escaped := scene.escaped():
        leaks.append(f"wrote outside: {escaped}")
    return leaks


def test_racing_swaps_never_lead_outside(scene, mode):
    """The auditor's attack: two threads exchange a directory and a symlink to outside, for ~2 s."""
    stop = threading.Event()
    swaps = [0]

    def flipper(name: str) -> None:
        libc = _libc()
        a = os.fsencode(scene.root / name)
        b = a + b"_alt"
        while not stop.is_set():
            _exchange(libc, a, b)
            swaps[0] += 1

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads finely, as a separate sandbox process would
    threads = [threading.Thread(target=flipper, args=(n,), daemon=True) for n in ("w", "r")]
    for t in threads:
        t.start()
    errors: dict[str, int] = {}
    leaks: list[str] = []
    rounds = 0
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline and not leaks:
            rounds += 1
            leaks = _attempt(scene, errors)
    finally:
        stop.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(old_interval)
    assert not leaks, f"escaped after {rounds} rounds ({swaps[0]} swaps): {leaks}"
    assert scene.escaped() == []
    assert rounds > 10 and swaps[0] > 100, (rounds, swaps[0])
    # The tools did run between swaps: some calls succeeded inside, some were refused or found nothing.
    assert (scene.root / "w" / "pwn.txt").exists() or (scene.root / "w_alt" / "pwn.txt").exists()


@pytest.mark.parametrize("tool", ["write_file", "write_file_deep", "append", "read_file", "list_dir"])
def test_swap_right_after_the_check_is_refused(scene, mode, monkeypatch, tool):
    """Deterministic worst case: the directory becomes a symlink to outside just after `resolve` checked it."""
    name = "r" if tool in ("read_file", "list_dir") else "w"
    real_resolve = Workspace.resolve

    def resolve_then_swap(self, path):
        resolved = real_resolve(self, path)
        scene.swap(name)  # `name` is now the symlink to outside, `name_alt` the real directory
        return resolved

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    call = {
        "write_file": lambda: scene.tools["write_file"](path="w/pwn.txt", content="x"),
        "write_file_deep": lambda: scene.tools["write_file"](path="w/a/b/pwn.txt", content="x"),
        "append": lambda: scene.tools["write_file"](path="w/pwn.txt", content="x", append=True),
        "read_file": lambda: scene.tools["read_file"](path="r/f.txt"),
        "list_dir": lambda: scene.tools["list_dir"](path="r"),
    }[tool]
    with pytest.raises(PermissionError, match=f"refused: .* resolves outside the workspace {scene.root}"):
        call()
    assert scene.escaped() == []


def test_fallback_walk_is_used_when_openat2_is_missing(tmp_path, monkeypatch):
    """ENOSYS from the kernel (Linux < 5.6) means the walk, never the old check-then-open."""
    monkeypatch.setattr(safe_open, "USE_OPENAT2", None)
    monkeypatch.setattr(safe_open, "_probed", None)

    def enosys(*args):
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(safe_open, "_openat2_raw", enosys)
    assert not safe_open.openat2_available()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    tools = {t.name: t for t in builtin_tools(root)}
    assert tools["write_file"](path="a/b/c.txt", content="hi") == "wrote 2 bytes to a/b/c.txt"
    assert tools["read_file"](path="a/b/c.txt") == "hi"
    assert tools["list_dir"](path="a") == [{"name": "b", "type": "dir", "size": None}]
    with pytest.raises(PermissionError, match="resolves outside the workspace"):
        tools["write_file"](path="out/evil.txt", content="x")
    assert not (tmp_path / "evil.txt").exists()


# ---------------------------------------------------------------- open_beneath itself


@pytest.fixture
def tree(tmp_path) -> tuple[Path, int]:
    root = tmp_path / "root"
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "f.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text(_SECRET)
    (root / "up").symlink_to("../secret.txt")
    (root / "abs").symlink_to(tmp_path / "secret.txt")
    (root / "dir_out").symlink_to(tmp_path)
    (root / "rel_in").symlink_to("d/e/f.txt")
    (root / "dir_in").symlink_to("d")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    yield root, fd
    os.close(fd)


def _read(fd: int) -> str:
    try:
        return os.read(fd, 100).decode()
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    "path", ["../secret.txt", "d/../../secret.txt", "/etc/passwd", "up", "abs", "dir_out/secret.txt"]
)
def test_open_beneath_refuses_escapes(tree, mode, path):
    _, fd = tree
    with pytest.raises(EscapeError):
        open_beneath(fd, path, os.O_RDONLY)


def test_open_beneath_opens_plain_paths(tree, mode):
    _, fd = tree
    assert _read(open_beneath(fd, "d/e/f.txt", os.O_RDONLY)) == "inside"
    assert _read(open_beneath(fd, "./d//e/f.txt", os.O_RDONLY)) == "inside"
    with pytest.raises(FileNotFoundError):
        open_beneath(fd, "d/nope.txt", os.O_RDONLY)
    with pytest.raises(NotADirectoryError):
        open_beneath(fd, "d/e/f.txt/x", os.O_RDONLY)


def test_symlinks_inside_follow_with_openat2_and_are_refused_by_the_walk(tree, monkeypatch):
    _, fd = tree
    if safe_open.openat2_available():
        monkeypatch.setattr(safe_open, "USE_OPENAT2", True)
        assert _read(open_beneath(fd, "rel_in", os.O_RDONLY)) == "inside"
        assert _read(open_beneath(fd, "dir_in/e/f.txt", os.O_RDONLY)) == "inside"
    monkeypatch.setattr(safe_open, "USE_OPENAT2", False)
    for path in ("rel_in", "dir_in/e/f.txt", "d/../d/e/f.txt"):  # the walk follows no symlink, no '..'
        with pytest.raises(EscapeError):
            open_beneath(fd, path, os.O_RDONLY)
    with pytest.raises(EscapeError):  # O_PATH opens a final symlink itself: still refused
        open_beneath(fd, "rel_in", safe_open.O_PATH or os.O_RDONLY)


def test_magic_links_are_refused(mode):
    """A /proc magic link (here /proc/self/fd/N) is refused even though its name is beneath the fd."""
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
    target = os.open("/etc/hostname" if os.path.exists("/etc/hostname") else "/", os.O_RDONLY)
    try:
        with pytest.raises(EscapeError):
            open_beneath(proc, f"fd/{target}", os.O_RDONLY)
    finally:
        os.close(target)
        os.close(proc)


# ---------------------------------------------------------------- the host's Python environment


@pytest.fixture
def venv_ws(tmp_path, monkeypatch) -> tuple[Path, dict]:
    """A workspace holding a (fake) virtual environment that is this process's sys.prefix."""
    root = tmp_path / "ws"
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "existing.pth").write_text("/some/path\n")
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setattr(sys, "prefix", str(root / ".venv"))
    monkeypatch.setattr(sys, "exec_prefix", str(root / ".venv"))
    return root, {t.name: t for t in builtin_tools(root)}


def test_writes_into_the_host_python_environment_are_refused(venv_ws, mode):
    root, tools = venv_ws
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    (root / "v").symlink_to(".venv")  # another name for the environment
    (root / "x.pth").symlink_to(site / "new.pth")  # a dangling link into it
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    for path in (
        ".venv/lib/python3.11/site-packages/x.pth",
        ".venv/lib/python3.11/site-packages/existing.pth",
        ".venv/lib/python3.11/site-packages/evil/__init__.py",
        ".venv/pyvenv.cfg",
        "v/lib/python3.11/site-packages/x.pth",
        "x.pth",
        str(site / "y.pth"),
    ):
        for append in (False, True):
            with pytest.raises(PermissionError, match="inside the Python environment of this program"):
                tools["write_file"](path=path, content="import os; os.system('id')\n", append=append)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before
    assert (site / "existing.pth").read_text() == "/some/path\n"
    assert tools["read_file"](path=".venv/pyvenv.cfg") == "home = /usr/bin\n"  # reading stays allowed
    assert tools["write_file"](path="notes/ok.txt", content="fine") == "wrote 4 bytes to notes/ok.txt"
    assert tools["write_file"](path=".venvish/ok.txt", content="fine") == "wrote 4 bytes to .venvish/ok.txt"


def test_hard_links_are_not_written_through(venv_ws, mode):
    """A hard link to a file of the environment (or anywhere) shares its contents: refused."""
    root, tools = venv_ws
    existing = root / ".venv" / "lib" / "python3.11" / "site-packages" / "existing.pth"
    os.link(existing, root / "innocent.txt")
    with pytest.raises(PermissionError, match="has 2 hard links"):
        tools["write_file"](path="innocent.txt", content="import os\n")
    with pytest.raises(PermissionError, match="has 2 hard links"):
        tools["write_file"](path="innocent.txt", content="import os\n", append=True)
    assert existing.read_text() == "/some/path\n"


def test_no_protected_directories_when_the_environment_is_elsewhere(tmp_path):
    assert not Path(sys.prefix).resolve().is_relative_to(tmp_path)
    assert Workspace(tmp_path).protected == []


def test_fifos_neither_block_nor_get_written(tmp_path, mode):
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "pipe")
    tools = {t.name: t for t in builtin_tools(root)}
    with pytest.raises(PermissionError, match="not a regular file"):
        tools["write_file"](path="pipe", content="x")
    with pytest.raises(ValueError, match="not a regular file"):
        tools["read_file"](path="pipe")
    assert tools["list_dir"]() == [{"name": "pipe", "type": "other", "size": None}]
