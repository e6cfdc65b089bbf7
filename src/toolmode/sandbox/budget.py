"""The per-run write budget, charged to what the run itself wrote, never to other processes' writes.

Four parts, added up:

- the run's processes: the kernel's per-task `write_bytes` (usage.py) of the worker, or of the shell's whole
  process tree, since the run started. Data and directory and inode-table blocks are counted when their
  pages are dirtied, so deleting a file gives nothing back and a flood of empty files is charged too (about
  0.3 KiB per empty file on ext4, 4 KiB per directory);
- the host tools the program called (write_file and the like: their thread's own counter around each call)
  and the run_shell commands it started (their own charge), added by the caller (`charge`);
- the private /tmp of the namespaces tier: a tmpfs, which has no writeback and so no write_bytes; its size
  is the budget (the kernel refuses writes beyond it) and its growth is charged: bytes in use plus INODE_BYTES
  per new inode, from the lowest level seen;
- only when the workspace's file system keeps no per-task write accounting (tmpfs, FUSE, anything not in
  ACCOUNTED): the growth of that file system, as for /tmp. That is the one case where other processes'
  writes to the same file system are charged too.

Checks come every 10 ms, every 1 ms past half of the budget or when the recent rate of writing would reach it
sooner (longer only where reading a large process tree costs much: see `check_interval`), so the overshoot
is about what the run can write in one such interval. A reading over the limit is read again before it
counts (the run's processes are stopped meanwhile): the total only ever grows, so a real overrun is still
there, while a child counted twice (read, then reaped into its parent, which was read after it) is not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

INTERVAL = 0.01  # how often a running program's writes are read while far from the limit
FASTEST = 0.001  # ... past half of the budget, or when the recent rate would reach the limit sooner
SLOWEST = 0.1  # the longest interval (reading a large process tree is costly)
CHECK_SHARE = 20  # the interval is at least this many times what one check costs (<= 5% of a CPU)

MiB = 1024 * 1024
INODE_BYTES = 4096  # what a new inode on a tmpfs (or an unaccounted file system) is charged
# File systems whose writes go through the page cache's dirty accounting (write_bytes counts them).
ACCOUNTED = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "nilfs2", "bcachefs", "nfs", "nfs4",
             "vfat", "exfat", "ntfs3", "hfsplus"}


def _unescape(path: str) -> str:
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        path = path.replace(code, char)
    return path


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, file system type, super options) of this process's mounts, from mountinfo."""
    found: list[tuple[str, str, str]] = []
    try:
        with open("/proc/self/mountinfo") as f:
            text = f.read()
    except OSError:
        return found
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if sep and len(fields) >= 5 and len(rest) >= 3:
            found.append((_unescape(fields[4]), rest[0], rest[2]))
    return found


def file_system(path: str, mounts: list[tuple[str, str, str]] | None = None) -> tuple[str, str]:
    """(type, super options) of the file system holding `path` (the longest mount point above it)."""
    best = ("", "", "")
    path = os.path.realpath(path)
    for point, fstype, opts in _mounts() if mounts is None else mounts:
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best[0]):
            best = (point, fstype, opts)
    return best[1], best[2]


def accounted(path: str) -> bool:
    """Whether writes under `path` are counted in the writers' write_bytes (an overlay: its upper layer)."""
    mounts = _mounts()
    fstype, opts = file_system(path, mounts)
    if fstype == "overlay":
        upper = [o.split("=", 1)[1] for o in opts.split(",") if o.startswith("upperdir=")]
        return bool(upper) and file_system(upper[0], mounts)[0] in ACCOUNTED
    return fstype in ACCOUNTED


class _Growth:
    """How much a file system grew (bytes in use plus INODE_BYTES per inode) from the lowest level seen.

    Measuring from the lowest level (not the start) keeps files deleted meanwhile from making room for more
    writes than the budget."""

    def __init__(self, target: int | str) -> None:
        self.target = target  # a path or a descriptor of the file system
        self.low = self.last = self._level()

    def _level(self) -> int:
        st = os.statvfs(self.target)
        return (st.f_blocks - st.f_bfree) * st.f_frsize + max(0, st.f_files - st.f_ffree) * INODE_BYTES

    def grown(self) -> int:
        self.last = self._level()
        self.low = min(self.low, self.last)
        return self.last - self.low


class WriteBudget:
    """`max_mb` MiB of writes allowed to one run, from construction (or `restart`).

    `written`: the run's processes' write_bytes total now (None when it cannot be read: e.g. the process
    ended; the last reading is kept). `tmp`: a descriptor (or path) of the run's private tmpfs. `workspace`:
    charged by file-system growth only when its file system is not ACCOUNTED."""

    def __init__(self, max_mb: float, *, written: Callable[[], int | None] | None = None,
                 tmp: int | str | None = None, workspace: str | os.PathLike[str] | None = None,
                 fallback: bool | None = None) -> None:
        self.max_mb = max_mb
        self.limit = int(max_mb * MiB)
        self._written = written
        self._tmp = _Growth(tmp) if tmp is not None else None
        if fallback is None:
            fallback = workspace is not None and not accounted(os.fspath(workspace))
        self._workspace = _Growth(os.fspath(workspace)) if fallback and workspace is not None else None
        self.extra = 0  # host tools and run_shell commands started by the run (`charge`)
        self._last = 0
        self.last_used = 0  # the charge at the latest reading
        self._readings = ((time.monotonic(), 0), (time.monotonic(), 0))  # (when, charge) of the last two
        self._base = self._read() or 0

    def _read(self) -> int | None:
        if self._written is None:
            return 0
        value = self._written()
        if value is not None:
            self._last = value
        return value

    def restart(self) -> None:
        """Count from the last reading (a persistent worker's next run starts where the last one was read
        after its stop, so nothing that ran in between goes uncharged)."""
        self._base = self._last
        self.extra = 0
        for part in (self._tmp, self._workspace):
            if part is not None:
                part.low = part.last

    def charge(self, nbytes: int) -> None:
        """Add `nbytes` written on the run's behalf by something else (a host tool, a run_shell command)."""
        self.extra += max(0, nbytes)

    def used(self) -> int:
        """Bytes charged so far."""
        self._read()
        total = max(0, self._last - self._base) + self.extra
        for part in (self._tmp, self._workspace):
            if part is not None:
                total += part.grown()
        self.last_used = total
        self._readings = (self._readings[1], (time.monotonic(), total))
        return total

    def check_interval(self, cost: float) -> float:
        """Seconds until the next check, given that the last one took `cost` seconds: INTERVAL while far from
        the limit; FASTEST past half of it, or sooner than INTERVAL when the rate between the last two readings
        would use up half of what is left before then; never so often that checking takes more than
        1/CHECK_SHARE of a CPU (a large process tree), nor less often than SLOWEST. The overshoot is what the
        run writes in one interval, plus the time it takes to stop it."""
        floor = min(SLOWEST, max(FASTEST, cost * CHECK_SHARE))
        (t0, u0), (t1, u1) = self._readings
        left = self.limit - u1
        if left * 2 < self.limit:
            return floor
        rate = (u1 - u0) / (t1 - t0) if t1 > t0 else 0.0
        paced = left / rate / 2 if rate > 0 else INTERVAL
        return max(floor, min(INTERVAL, paced))

    def exceeded(self, hold: Callable[[bool], None] | None = None) -> bool:
        """Whether the budget is used up (a reading over it is confirmed by a second one). `hold(True)`, when
        given, is called at once on a first reading over it (to stop the writers while the second is taken),
        `hold(False)` when the second one clears it."""
        if self.used() <= self.limit:
            return False
        if hold is not None:
            hold(True)
        over = self.used() > self.limit
        if not over and hold is not None:
            hold(False)
        return over

    def message(self) -> str:
        """The line the model sees when the budget stopped it."""
        return (f"Error: wrote more than {self.max_mb:g} MiB to the workspace (counted: what this run's processes "
                f"and tools wrote{', /tmp included' if self._tmp is not None else ''})")
