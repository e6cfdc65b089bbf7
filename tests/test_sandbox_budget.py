"""The write budget is charged to what the run itself wrote (budget.py), on every tier.

- No false kill: another process writes 1 GiB on the workspace's file system beside a program (and a
  run_shell command) that writes nothing; both finish and nothing is charged to them.
- What the run writes is charged however it writes: plain writes, a shared file mapping, its private /tmp
  (a tmpfs: no per-task accounting), a workspace on a tmpfs (the file system's growth instead).
Every wait is on a signal (a pipe, a tool call that returns when the writer is done), never on a sleep.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec, landlock
from toolmode.sandbox.budget import WriteBudget
from toolmode.sandbox.shell import run_confined

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")
MiB = 1024 * 1024
WRITER = """
import os, sys
path, total = sys.argv[1], int(sys.argv[2])
chunk = b"\\1" * (8 << 20)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
written = 0
while written < total:
    written += os.write(fd, chunk)
    os.fsync(fd)  # on disk, not only in the page cache: the file system's used space grows for real
print(written, flush=True)
os.close(fd)
os.unlink(path)
"""
WAIT = StubSpec("writer_done", [], "writer_done() -> int", "Block until the other process wrote; its byte count.")


class Writer:
    """A process that is not the run's: writes `total` bytes (fsync'd) on the workspace's file system, then
    deletes them. `done()` blocks until it has written everything (its line on a pipe)."""

    def __init__(self, directory: Path, total: int) -> None:
        directory.mkdir(exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", WRITER, str(directory / "big.bin"), str(total)],
                                     stdout=subprocess.PIPE, text=True)

    def done(self) -> int:
        assert self.proc.stdout is not None
        written = int(self.proc.stdout.readline())
        self.proc.wait()
        return written


def test_another_process_writing_1_gib_is_not_charged_to_a_program(tier: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    limits = SandboxLimits(timeout=300, max_write_mb=64)
    with Sandbox(ws, limits, policy=tier) as sb:
        writer = Writer(tmp_path / "other", 1024 * MiB)  # on the same file system as the workspace
        res = sb.run("n = writer_done()\nprint('the other process wrote', n >> 20, 'MiB; this one nothing')",
                     [WAIT], lambda name, kwargs: writer.done())
    assert res.error is None, res.text()
    assert res.text() == "the other process wrote 1024 MiB; this one nothing"
    assert res.written < MiB, res.written  # the program's own: a few pages at most


def test_another_process_writing_1_gib_is_not_charged_to_run_shell(tier: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    writer = Writer(tmp_path / "other", 1024 * MiB)
    # The command waits on a FIFO in the workspace that the host opens for writing once the writer is done.
    fifo = ws / "go"
    os.mkfifo(fifo)
    results: list[Any] = []
    shell = threading.Thread(target=lambda: results.append(
        run_confined("read line < go && echo resumed", workspace=ws, timeout=300, max_write_mb=64)))
    shell.start()
    assert writer.done() == 1024 * MiB
    with open(fifo, "w") as f:  # blocks until the command opened it: then both sides go on
        f.write("go\n")
    shell.join(300)  # a bound for a broken build, not a timing assertion
    assert results, "run_confined did not return"
    res = results[0]
    assert (res.exit_code, res.stdout) == (0, "resumed\n"), res
    assert "wrote more than" not in res.stderr and res.written < MiB, res


@pytest.mark.parametrize("how", ["write", "mmap", "tmp"])
def test_what_the_run_writes_is_charged(tier: str, tmp_path: Path, how: str) -> None:
    if how == "tmp" and tier == "landlock":
        pytest.skip("the landlock tier has no private /tmp")
    program = {
        "write": "with open('f', 'wb') as f:\n    for _ in range(64):\n        f.write(b'\\1' * (1 << 20))\n",
        "mmap": ("import mmap, os\nfd = os.open('m', os.O_RDWR | os.O_CREAT)\nos.ftruncate(fd, 64 << 20)\n"
                 "m = mmap.mmap(fd, 64 << 20)\nfor i in range(0, 64 << 20, 4096):\n    m[i] = 1\nm.flush()\n"),
        "tmp": "with open('/tmp/t', 'wb') as f:\n    for _ in range(64):\n        f.write(b'\\1' * (1 << 20))\n",
    }[how]
    with Sandbox(tmp_path / "ws", SandboxLimits(timeout=30, max_write_mb=8, file_size_mb=128), policy=tier) as sb:
        res = sb.run(program + "print('WROTE 64 MiB')", [], lambda name, kwargs: None)
    assert "wrote more than 8 MiB" in res.text() or "No space left" in res.text(), res.text()
    assert "WROTE" not in res.text()


def test_a_workspace_on_a_tmpfs_is_charged_by_its_growth(tier: str) -> None:
    # tmpfs has no writeback, so no per-task count: there (and only there) the file system's growth is
    # charged, other writers to it included.
    if not os.path.isdir("/dev/shm") or os.statvfs("/dev/shm").f_bavail * os.statvfs("/dev/shm").f_frsize < 256 * MiB:
        pytest.skip("no tmpfs with room at /dev/shm")
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as ws:
        assert WriteBudget(8, workspace=ws)._workspace is not None  # the fallback is in force there
        with Sandbox(Path(ws), SandboxLimits(timeout=30, max_write_mb=8), policy=tier) as sb:
            res = sb.run("with open('f', 'wb') as f:\n    for _ in range(64):\n        f.write(b'\\1' * (1 << 20))\n"
                         "print('WROTE 64 MiB')", [], lambda name, kwargs: None)
    assert "wrote more than 8 MiB" in res.text() and "WROTE" not in res.text(), res.text()
