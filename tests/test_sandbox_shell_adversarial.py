"""Every script in tests/adversarial/shell/ must be contained when run through run_confined (`run_shell`).

`{{HOST}}` in a script is replaced by this test process's pid: the launcher's parent, i.e. the host, as an
attacker who guessed it would write it. For each script: its output shows every `# expect:` line and none
of the words the scripts print on success (CHANGED, LEAKED); the host's limits, niceness, scheduler,
affinity and I/O class are unchanged; and the host still runs a command afterwards. Each script runs on every
tier (`# expect[namespaces]:` / `# expect[landlock]:` lines hold for one of them). `{{SENTINEL}}` is a host
directory outside the workspace holding planted files (host_health.plant): their metadata, the device nodes,
the interpreter binary, a 0600 SysV segment of the host's and the set of SysV objects and mounts are compared
before and after; `# absent:` paths must not exist afterwards; `# setup-dir:` directories are made first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from host_health import (
    HOST_SHM_TEXT,
    XATTR_SECRET,
    HostSegment,
    host_objects,
    host_state,
    plant,
    same_host_objects,
    same_host_state,
)
from sandbox_tiers import expectations
from toolmode.sandbox import landlock
from toolmode.sandbox.shell import run_confined
from toolmode.sandbox.spawn import interpreter

SCRIPTS = sorted((Path(__file__).parent / "adversarial" / "shell").glob("*.sh"))

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")


def test_shell_corpus_exists() -> None:
    assert len(SCRIPTS) >= 5


@pytest.fixture(scope="module")
def host_segment() -> Iterator[HostSegment]:
    """A 0600 SysV segment of the host's: no script may attach to it or change it."""
    segment = HostSegment()
    try:
        yield segment
    finally:
        segment.remove()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_shell_script_is_contained(script: Path, tier: str, tmp_path: Path, host_segment: HostSegment) -> None:
    ws, sentinel = tmp_path / "ws", tmp_path / "sentinel"
    ws.mkdir()
    sentinel.mkdir()
    plant(sentinel)
    source = script.read_text()
    for name in expectations(source, "setup-dir", tier):
        (ws / name).mkdir(parents=True)
    expects = expectations(source, "expect", tier)
    absent = [Path(p.replace("{{WORKSPACE}}", str(ws))) for p in expectations(source, "absent", tier)]
    before = host_state()
    objects = host_objects(sentinel, ws, interpreter())
    segment = host_segment.stat()
    command = source.replace("{{HOST}}", str(os.getpid())).replace("{{SENTINEL}}", str(sentinel))
    res = run_confined(command, workspace=ws, timeout=20)
    out = res.stdout + res.stderr
    assert expects, "every script names what its output must show"
    assert not res.timed_out, out
    for expected in expects:
        assert expected in res.stdout, f"{expected!r} not in output:\n{out}"
    for word in ("CHANGED", "LEAKED", XATTR_SECRET, HOST_SHM_TEXT.decode()):
        assert word not in out, out
    same_host_state(before, host_state())
    same_host_objects(objects, host_objects(sentinel, ws, interpreter()))
    assert host_segment.stat() == segment and host_segment.text() == HOST_SHM_TEXT
    assert [p for p in absent if p.exists()] == [], "the script changed what the host trusts"
    assert run_confined("echo alive", workspace=ws, timeout=10).stdout == "alive\n"


def test_shell_filter_without_landlock_scoping_refuses_sigio_owners() -> None:
    # Kernels whose Landlock cannot scope signals (ABI < 6) do not stop SIGIO either: the shell's filter
    # (built as for such a kernel, installed in a throwaway child) refuses the host and process groups as
    # owners, and the pointer forms; the caller itself stays a valid owner.
    from toolmode.sandbox.spawn import HERE

    program = (
        "import fcntl, os, struct, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import caps, seccomp\n"
        "host = os.getppid()\n"
        "caps.prctl(caps.PR_SET_NO_NEW_PRIVS, 1)\n"
        "seccomp.install(seccomp.build_filter(worker=False, protect=(host,)))\n"
        "r, w = os.pipe()\n"
        "for label, action in [('host', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, host)),\n"
        "                      ('group', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -os.getpgid(0))),\n"
        "                      ('ex', lambda: fcntl.fcntl(r, 15, struct.pack('ii', 1, host))),\n"
        "                      ('ioctl', lambda: fcntl.ioctl(r, 0x8901, struct.pack('i', host))),\n"
        "                      ('self', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())),\n"
        "                      ('prlimit host', lambda: __import__('resource').prlimit(host, 7))]:\n"
        "    try:\n        action()\n        print(label, 'allowed')\n"
        "    except PermissionError:\n        print(label, 'EPERM')\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=30)
    assert out.stdout.splitlines() == ["host EPERM", "group EPERM", "ex EPERM", "ioctl EPERM", "self allowed",
                                       "prlimit host EPERM"], out.stdout + out.stderr
