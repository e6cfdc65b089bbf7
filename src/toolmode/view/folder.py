"""The folder `toolmode view` serves: safe relative paths, the walk, and the cached list of runs and benches.

The folder is opened once, as `hostfiles.open_dir` opens the host's own output directories (no link below
the current directory is followed). Every file is then opened beneath that descriptor, from a relative
path checked first (no absolute path, no `..`, no empty or `.` part, no NUL) and resolved by the kernel
without following any symlink (`safe_open.open_beneath(symlinks=False)`), and must be a regular file with a
single link (as `hostfiles` requires): a trace folder often lies in a workspace where model code could plant
a link to a file elsewhere.

The list reads only each trace's first lines and last two (`jsonlines`), and keeps the summary of every
file by (path, size, modification time, inode): a folder of 1,000 runs is read once, then only what changed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode import hostfiles
from toolmode.tools.safe_open import O_SEARCH_DIR, open_beneath
from toolmode.view import jsonlines, loader

SKIP_DIRS = frozenset({"workspace", ".git", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                       ".mypy_cache", ".ruff_cache", ".pytest_cache"})  # an episode's workspace holds no trace
MAX_DEPTH = 8  # runs/bench-X/episodes/<task>/<mode>/run-<k>/trace.jsonl is 5 folders down
MAX_FILES = 200_000  # entries looked at per walk; past this the list says it stopped
MAX_TRACE = 256 * 1024 * 1024  # bytes of one trace read for its run page
HEAD_LINES = 3  # a header line (versioned format), run_start, and one spare
BENCH_FILES = ("bench.json", "results.jsonl")


class BadPath(ValueError):
    """A path from a request that is not a plain relative path inside the folder."""


def check_relative(rel: str, *, allow_root: bool = False) -> str:
    """`rel` if it is a plain relative path (parts joined by `/`, none empty, `.` or `..`, no NUL)."""
    if not isinstance(rel, str) or "\x00" in rel:
        raise BadPath("the path holds a NUL character")
    if rel == "" and allow_root:
        return rel
    if rel.startswith("/"):
        raise BadPath("absolute paths are refused: give a path inside the folder")
    if any(part in ("", ".", "..") for part in rel.split("/")):
        raise BadPath("the path must be plain: no '..', '.' or empty parts")
    return rel


@dataclass
class FileInfo:
    """What identifies one version of a file."""

    size: int
    mtime: float
    key: tuple[int, int, int]  # (size, mtime_ns, inode)


class Folder:
    """The served folder: a directory descriptor and checked opens beneath it."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        self.path = Path(path)
        self.fd = hostfiles.open_dir(self.path, create=False)

    def close(self) -> None:
        """Release the folder's descriptor."""
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def open_file(self, rel: str) -> tuple[int, FileInfo]:
        """A descriptor of the regular file `rel` (checked, no link followed) and its size and times."""
        fd = open_beneath(self.fd, check_relative(rel), os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY,
                          symlinks=False)
        try:
            return fd, checked(fd, rel)
        except BaseException:
            os.close(fd)
            raise

    def read(self, rel: str, limit: int) -> bytes:
        """The bytes of the file `rel`; refused past `limit` bytes."""
        fd, info = self.open_file(rel)
        with open(fd, "rb") as f:
            if info.size > limit:
                raise hostfiles.UnsafeHostPath(f"refused: {rel!r} is larger than {limit:,} bytes")
            return f.read(limit)

    def is_dir(self, rel: str) -> bool:
        """Whether `rel` ("" for the folder itself) is a directory reached without following a link."""
        if check_relative(rel, allow_root=True) == "":
            return True
        try:
            os.close(open_beneath(self.fd, rel, O_SEARCH_DIR, symlinks=False))
        except (OSError, ValueError):
            return False
        return True

    def walk(self) -> Iterator[tuple[str, int, list[str]]]:
        """(relative folder, its descriptor, its file names) for every folder, links never followed."""
        for top, dirs, files, dir_fd in os.fwalk(".", dir_fd=self.fd, follow_symlinks=False):
            rel = "" if top == "." else top[2:]
            if rel.count("/") + (1 if rel else 0) >= MAX_DEPTH:
                dirs[:] = []
            else:
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            yield rel, dir_fd, sorted(files)


def checked(fd: int, shown: str) -> FileInfo:
    """The file's identity, if it is a regular file with one link (else UnsafeHostPath)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise hostfiles.UnsafeHostPath(f"refused: {shown!r} is not a regular file")
    if info.st_nlink > 1:
        raise hostfiles.UnsafeHostPath(f"refused: {shown!r} has {info.st_nlink} hard links")
    return FileInfo(info.st_size, info.st_mtime, (info.st_size, info.st_mtime_ns, info.st_ino))


def join(folder: str, name: str) -> str:
    """A relative path under a relative folder ("" is the top)."""
    return f"{folder}/{name}" if folder else name


class RunList:
    """The runs and benches under a folder, each trace's summary cached by its identity."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self._cache: dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]] = {}
        self._lock = threading.Lock()

    def listing(self) -> dict[str, Any]:
        """{runs, benches, skipped, truncated, seconds} for the whole folder (one walk, cached reads)."""
        started = time.perf_counter()
        with self._lock:
            runs, benches, skipped, truncated = self._scan()
        for run in runs:
            run["bench"] = next((b["path"] for b in benches if _under(run["path"], b["path"])), None)
        return {"folder": str(self.folder.path), "runs": runs, "benches": benches, "skipped": skipped,
                "truncated": truncated, "is_bench": any(b["path"] == "" for b in benches),
                "seconds": round(time.perf_counter() - started, 4)}

    def _scan(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str], bool]:
        runs: list[dict[str, Any]] = []
        benches: list[dict[str, Any]] = []
        skipped: list[str] = []
        seen = 0
        seen_paths: set[str] = set()
        for rel_dir, dir_fd, files in self.folder.walk():
            seen += len(files)
            if seen > MAX_FILES:
                return runs, benches, skipped, True
            if all(name in files for name in BENCH_FILES):
                benches.append({"path": rel_dir, "name": rel_dir or self.folder.path.name or str(self.folder.path)})
            for name in files:
                if not name.endswith(".jsonl") or name == "results.jsonl":
                    continue
                rel = join(rel_dir, name)
                seen_paths.add(rel)
                try:
                    row = self._summary(rel, name, dir_fd)
                except OSError as exc:
                    skipped.append(f"{rel}: {exc.strerror or exc}")
                    continue
                if row is not None:
                    runs.append(row)
        for gone in set(self._cache) - seen_paths:
            del self._cache[gone]
        return runs, benches, skipped, False

    def _summary(self, rel: str, name: str, dir_fd: int) -> dict[str, Any] | None:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(0, "a symlink, not followed")
        if not stat.S_ISREG(info.st_mode):
            return None
        key = (info.st_size, info.st_mtime_ns, info.st_ino)
        cached = self._cache.get(rel)
        if cached is not None and cached[0] == key:
            return None if cached[1] is None else dict(cached[1])
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            now = checked(fd, rel)
            head_raw = jsonlines.head_lines(fd, HEAD_LINES)
            tail_raw, newline = jsonlines.tail_lines(fd, now.size, 2)
            turns, ends = jsonlines.session_ends(fd, now.size)
        finally:
            os.close(fd)
        row = loader.summary(rel, _until_start(head_raw), _last_whole(tail_raw, newline), newline, now.mtime)
        if row is not None:
            loader.add_turns(row, turns, [jsonlines.decode(line) for line in ends])
        self._cache[rel] = (now.key, row)
        return None if row is None else dict(row)

    def run(self, rel: str) -> dict[str, Any]:
        """One run, whole (the run page)."""
        if not check_relative(rel).endswith(".jsonl"):
            raise BadPath("only trace files (.jsonl) are shown")
        fd, info = self.folder.open_file(rel)
        with open(fd, "rb") as f:
            data = f.read(MAX_TRACE)
        lines = data.split(b"\n")
        ends_with_newline = data.endswith(b"\n")
        if ends_with_newline:
            lines.pop()
        run = loader.load_file(rel, [jsonlines.decode(line) for line in lines], ends_with_newline, info.mtime)
        if info.size > MAX_TRACE:
            run["problems"].append(f"the trace is {info.size:,} bytes: only its first {MAX_TRACE:,} are shown")
        if run["summary"] is not None:
            run["summary"]["bench"] = self._bench_of(rel)
        return run

    def _bench_of(self, rel: str) -> str | None:
        """The nearest folder above `rel` that is a bench (holds bench.json and results.jsonl), if any."""
        parts = rel.split("/")[:-1]
        for depth in range(len(parts), -1, -1):
            folder = "/".join(parts[:depth])
            try:
                for name in BENCH_FILES:
                    fd, _ = self.folder.open_file(join(folder, name))
                    os.close(fd)
            except (OSError, ValueError):
                continue
            return folder
        return None


def _until_start(lines: list[bytes]) -> list[jsonlines.Decoded]:
    """The first lines decoded up to `run_start` (the lines after it, e.g. the tool schemas, are not needed)."""
    decoded = []
    for line in lines:
        decoded.append(jsonlines.decode(line))
        value = decoded[-1].value
        if isinstance(value, dict) and value.get("kind") == "run_start":
            break
    return decoded


def _last_whole(lines: list[bytes], ends_with_newline: bool) -> list[jsonlines.Decoded]:
    """The last line decoded, and the one before it only when the last is cut (a long final reply stays unread)."""
    if not lines:
        return []
    last = jsonlines.decode(lines[-1])
    if isinstance(last.value, dict) and ends_with_newline or len(lines) < 2:
        return [last]
    return [jsonlines.decode(lines[-2]), last]


def _under(path: str, folder: str) -> bool:
    return folder == "" or path.startswith(folder + "/")
