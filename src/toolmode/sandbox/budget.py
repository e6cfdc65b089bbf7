"""The per-run write budget: how much the workspace's file system grew since the run started.

Measured with one `statvfs` (a few microseconds): the bytes in use, plus every new inode (file,
directory, symlink, FIFO) charged as INODE_BYTES, so a flood of empty files is charged too. It sees
writes by any process on that file system, including host tools and files the program unlinked but
keeps open. On file systems that report no inode counts (btrfs, some FUSE) only bytes are charged.
"""

from __future__ import annotations

import os

MiB = 1024 * 1024
INODE_BYTES = 4096  # one block: what a small file costs on disk anyway


def _usage(path: str) -> tuple[int, int]:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree


class WriteBudget:
    """`max_mb` MiB of growth allowed on the file system holding `path`, counted from construction."""

    def __init__(self, path: str | os.PathLike[str], max_mb: float) -> None:
        self.path = os.fspath(path)
        self.max_mb = max_mb
        self.limit = int(max_mb * MiB)
        self.bytes0, self.inodes0 = _usage(self.path)

    def used(self) -> int:
        """Bytes charged so far: data growth plus INODE_BYTES per new inode, since the lowest level seen.

        Measuring from the lowest level (not the start) keeps files deleted meanwhile, by the program or
        anyone else on the file system, from making room for more writes than the budget.
        """
        data, inodes = _usage(self.path)
        self.bytes0, self.inodes0 = min(self.bytes0, data), min(self.inodes0, inodes)
        return (data - self.bytes0) + (inodes - self.inodes0) * INODE_BYTES

    def exceeded(self) -> bool:
        """Whether the budget is used up."""
        return self.used() > self.limit

    def message(self) -> str:
        """The line the model sees when the budget stopped it."""
        return (f"Error: wrote more than {self.max_mb:g} MiB to the workspace (each new file or directory counts "
                f"as {INODE_BYTES // 1024} KiB)")
