"""Host-side checks shared by the adversarial tests: what no sandboxed program may change about the host."""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
from pathlib import Path


def host_state() -> dict[str, object]:
    """What a program must not change about the host process: every rlimit, and per thread the niceness,
    scheduler, CPU affinity and I/O priority (a program could aim at any of the host's thread ids)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    state: dict[str, object] = {name: resource.getrlimit(getattr(resource, name))
                                for name in dir(resource) if name.startswith("RLIMIT_")}
    for tid in os.listdir("/proc/self/task"):
        ioprio = libc.syscall(252, 1, int(tid))  # ioprio_get(IOPRIO_WHO_PROCESS, tid)
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            cpus = [line for line in Path(f"/proc/self/task/{tid}/status").read_text().splitlines()
                    if line.startswith("Cpus_allowed_list")]
        except OSError:
            continue
        if ioprio < 0 or stat[0] in ("Z", "X"):  # the thread ended meanwhile
            continue
        state[f"task {tid}"] = (stat[16], stat[37], stat[38], cpus, ioprio)
    return state


def same_host_state(before: dict[str, object], after: dict[str, object]) -> None:
    """Assert that nothing in `before` changed (threads started or ended meanwhile are not compared)."""
    common = before.keys() & after.keys()
    changed = {k: (before[k], after[k]) for k in common if before[k] != after[k]}
    assert not changed, f"the host's limits or scheduling changed: {changed}"


# ---------------------------------------------------------------------------------------------------- host objects
# What the sandbox v2 corpus attacks outside the workspace (issue 16): file metadata, extended attributes,
# SysV IPC, mounts. Planted by the test, compared before and after on the host, never through the sandbox.

XATTR_SECRET = "xattr-SECRET-61d0a9"  # stored in an extended attribute of a host file: must never be read
XATTR_NAME = "user.toolmode_secret"
HOST_SHM_KEY = 0x70016001  # a 0600 SysV segment of the host's: must stay unread and unchanged
HOST_SHM_TEXT = b"host-shm-SECRET-5e11"
LOCK_PATH = "/tmp/toolmode-tests-host-shm.lock"  # noqa: S108 (shared by every test run on the machine, on purpose)
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
_IPC_CREAT, _IPC_RMID, _IPC_STAT = 0o1000, 0, 2


def plant(sentinel: Path) -> None:
    """Files outside the workspace a program must not change or read: a 0600 file holding a secret in an
    extended attribute, a 0666 file, and a program (0755) that must not get the setuid bit."""
    secret = sentinel / "secret.txt"
    secret.write_text("secret")
    secret.chmod(0o600)
    os.setxattr(secret, XATTR_NAME, XATTR_SECRET.encode())
    (sentinel / "open.txt").write_text("open")
    (sentinel / "open.txt").chmod(0o666)
    (sentinel / "tool").write_bytes(b"#!/bin/sh\nexit 0\n")
    (sentinel / "tool").chmod(0o755)


def metadata(paths: list[Path]) -> dict[str, object]:
    """Mode, owner, size, modification and change times and extended attributes of each path (no
    symlink followed)."""
    out: dict[str, object] = {}
    for path in paths:
        try:
            st = os.lstat(path)
            names = os.listxattr(path, follow_symlinks=False) if not os.path.islink(path) else []
            xattrs = {n: os.getxattr(path, n, follow_symlinks=False) for n in names}
        except OSError as exc:
            out[str(path)] = type(exc).__name__
            continue
        out[str(path)] = (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, st.st_ctime_ns, xattrs)
    return out


def sysv_objects() -> set[tuple[str, str, str]]:
    """(kind, key, id) of every SysV shared memory segment, message queue and semaphore set the host sees."""
    found = set()
    for kind in ("shm", "msg", "sem"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) >= 2:
                found.add((kind, fields[0], fields[1]))
    return found


def mounts_under(*roots: Path) -> list[str]:
    """The host's mount points inside any of `roots`."""
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [p for p in points for r in roots if p == str(r) or p.startswith(f"{r}/")]


class HostSegment:
    """A 0600 SysV shared memory segment of the host's (key HOST_SHM_KEY) holding HOST_SHM_TEXT."""

    def __init__(self) -> None:
        # The key is fixed (the corpus programs name it), so two test runs on one machine would share the segment
        # and each one's reads would change the other's attach times: one run at a time holds it.
        self._lock = open(LOCK_PATH, "a+")  # noqa: SIM115 (held until remove())
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.shmat.restype = ctypes.c_void_p
        self.libc.shmget.restype = ctypes.c_int
        self.id = self.libc.shmget(HOST_SHM_KEY, 4096, _IPC_CREAT | 0o600)
        if self.id < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        addr = self.libc.shmat(self.id, None, 0)
        ctypes.memmove(addr, HOST_SHM_TEXT, len(HOST_SHM_TEXT))
        self.libc.shmdt(ctypes.c_void_p(addr))

    def stat(self) -> bytes:
        """Its shmid_ds: attach, detach and change times, last pid, attach count (reading it changes none)."""
        ds = ctypes.create_string_buffer(256)
        if self.libc.shmctl(self.id, _IPC_STAT, ds) < 0:
            raise OSError(ctypes.get_errno(), "shmctl")
        return ds.raw

    def text(self) -> bytes:
        """Its first bytes (attaching to read them changes its attach times: take `stat` first)."""
        addr = self.libc.shmat(self.id, None, 0o10000)  # SHM_RDONLY
        text = ctypes.string_at(addr, len(HOST_SHM_TEXT))
        self.libc.shmdt(ctypes.c_void_p(addr))
        return text

    def remove(self) -> None:
        self.libc.shmctl(self.id, _IPC_RMID, None)
        self._lock.close()  # releases the lock


def host_objects(sentinel: Path, workspace: Path, interpreter: str) -> dict[str, object]:
    """Everything of the host the v2 corpus attacks: the planted files, the device nodes, the interpreter's
    binary, the SysV objects and the mounts inside the workspace and the sentinel."""
    paths = [sentinel, *sorted(sentinel.rglob("*")), *(Path(d) for d in DEVICES), Path(interpreter),
             Path("/etc/ld.so.cache")]  # the host file the programs open read-only to attack through a descriptor
    return {"metadata": metadata(paths), "sysv": sysv_objects(), "mounts": mounts_under(workspace, sentinel)}


def same_host_objects(before: dict[str, object], after: dict[str, object]) -> None:
    """Assert that nothing of `before` changed and that no SysV object or mount appeared."""
    assert before["metadata"] == after["metadata"], "host files' metadata changed"
    assert after["sysv"] - before["sysv"] == set(), "a SysV object outlives the run"  # type: ignore[operator]
    assert after["mounts"] == before["mounts"] == [], "a mount appeared in the workspace"
