"""Workspace confinement: every path a file tool touches must resolve inside one root directory."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from toolmode.hostenv import ENVIRONMENT, CodeDir, code_dirs_inside, enclosing_code_dir
from toolmode.sandbox.view import PROTECTED
from toolmode.tools.safe_open import O_SEARCH_DIR, PATH_MAX, EscapeError, descend, open_beneath

MAX_COMPONENTS = 256  # deeper paths are refused before resolving (each level costs a lookup while resolving)

HOST_STATE = dict(zip(PROTECTED, ("git's directory (its hooks and config run commands)",
                                    "toolmode's own state (traces, bench state)"), strict=True))
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Workspace:
    """A directory the file tools are confined to.

    Relative paths are taken relative to the root. A path is refused (PermissionError) when it resolves
    outside the root after following symlinks: `..` segments, absolute paths elsewhere, and symlinks
    that point out of the root are all caught by the same check.

    `resolve` only checks a path; the file tools open through `open` and `open_for_writing`, which
    resolve the checked path again in the kernel relative to a descriptor of the root (see `safe_open`),
    so a directory swapped for a symlink between the check and the open cannot lead outside.
    """

    def __init__(self, root: str | os.PathLike[str] = ".") -> None:
        self.root = Path(root).expanduser().resolve()
        # the host's code directories inside the root, and the workspace's own state the host trusts (git's
        # hooks and config, toolmode's traces and bench state: read-only inside the sandbox too)
        code_dirs = code_dirs_inside(self.root)
        self.protected = [d.path for d in code_dirs]
        self._code_dirs = code_dirs + [CodeDir(self.root / name, why) for name, why in HOST_STATE.items()]
        self.enclosing = enclosing_code_dir(self.root)  # one the root lies inside: every write is refused
        self._protected_ids: dict[tuple[int, int], CodeDir] = {}  # (st_dev, st_ino) -> what it is
        for code_dir in self._code_dirs:
            with contextlib.suppress(OSError):
                self._protected_ids[_identity(code_dir.path)] = code_dir

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """Return the absolute, symlink-free path for `path`, or raise PermissionError if it is outside."""
        if isinstance(path, str) and "\x00" in path:
            raise ValueError(f"invalid path {path!r}: contains a NUL character")
        _check_size(path)
        candidate = Path(path)
        with contextlib.suppress(RuntimeError):  # "~nosuchuser/...": kept literal, a name in the workspace
            candidate = candidate.expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        # strict=False: the path may not exist yet (write_file); existing parts still have symlinks followed.
        for attempt in range(3):
            try:
                resolved = candidate.resolve(strict=False)
                break
            except OSError as exc:  # EINVAL: a symlink became a directory between lstat and readlink
                if exc.errno != errno.EINVAL or attempt == 2:
                    raise
        if not resolved.is_relative_to(self.root):
            raise self._refusal(path)
        return resolved

    def relative(self, path: Path) -> str:
        """`path` (already resolved) shown relative to the root, `.` for the root itself."""
        return path.relative_to(self.root).as_posix() or "."

    def open(self, path: str | os.PathLike[str], flags: int, mode: int = 0o666) -> tuple[int, Path]:
        """Open `path` inside the workspace: `(fd, resolved path)`; the caller closes the fd.

        The path is checked with `resolve`, then that symlink-free path is opened beneath a descriptor
        of the root, so whatever changes in between, the fd refers to something inside the root.
        """
        target = self.resolve(path)
        with self._root_fd() as root_fd:
            try:
                fd = open_beneath(root_fd, self.relative(target), flags, mode)
            except EscapeError:
                raise self._refusal(path) from None
        return fd, target

    def open_for_writing(self, path: str | os.PathLike[str], *, append: bool = False) -> tuple[int, Path]:
        """Open a regular file inside the workspace for writing, creating it and missing parent directories.

        Returns `(fd, resolved path)`; the file is emptied unless `append`. Refused (PermissionError):
        paths outside the root, files inside the Python environment running this program (when it lies
        in the workspace: a `.pth` file or module written there runs with the host's rights), files with
        more than one hard link (the other name may be anywhere), and anything but a regular file.
        """
        target = self.resolve(path)
        if target == self.root:
            raise IsADirectoryError(f"{str(path)!r} is a directory; give a file path")
        parts = target.relative_to(self.root).parts
        if parts[0] in HOST_STATE:  # refused by name too, so that it cannot be made either
            raise PermissionError(f"refused: {str(path)!r} is inside {self.root / parts[0]}, {HOST_STATE[parts[0]]}; "
                                  "the host trusts what is written there")
        with self._root_fd() as root_fd:
            parent = self._make_dirs(root_fd, target.parent.relative_to(self.root).parts, path)
        try:
            self._refuse_protected(parent, path)
            flags = _WRITE_FLAGS | (os.O_APPEND if append else 0)
            try:
                fd = os.open(target.name, flags, 0o666, dir_fd=parent)  # one name, no symlink followed
            except IsADirectoryError:
                raise IsADirectoryError(f"{str(path)!r} is a directory; give a file path") from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # became a symlink after the check
                    raise self._refusal(path) from None
                if exc.errno == errno.ENXIO:  # a FIFO nobody reads
                    raise PermissionError(f"refused: {str(path)!r} is not a regular file") from None
                raise
        finally:
            os.close(parent)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise PermissionError(f"refused: {str(path)!r} is not a regular file")
            code_file = self._protected_ids.get((info.st_dev, info.st_ino))  # a zip file on sys.path
            if code_file is not None:
                raise PermissionError(f"refused: {str(path)!r} is {code_file.path}, {code_file.why}")
            if info.st_nlink > 1:
                raise PermissionError(
                    f"refused: {str(path)!r} has {info.st_nlink} hard links; writing it would also change "
                    "the file under its other names, which may be outside the workspace"
                )
            os.set_blocking(fd, True)  # O_NONBLOCK only kept a FIFO from blocking the open
            if not append:
                os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        return fd, target

    def _make_dirs(self, root_fd: int, parts: tuple[str, ...], shown: str | os.PathLike[str]) -> int:
        """A descriptor of root/parts..., creating missing directories one at a time beneath the root."""
        return descend(os.dup(root_fd), range(1, len(parts) + 1),
                       lambda fd, depth: self._open_or_make_dir(fd, parts[depth - 1], shown, "/".join(parts[:depth])))

    def _open_or_make_dir(self, dir_fd: int, name: str, shown: str | os.PathLike[str], where: str) -> int:
        try:
            try:
                return open_beneath(dir_fd, name, O_SEARCH_DIR)
            except FileNotFoundError:
                self._refuse_protected(dir_fd, shown)
                with contextlib.suppress(FileExistsError):  # made meanwhile: fine, it is opened next
                    os.mkdir(name, 0o777, dir_fd=dir_fd)  # mkdirat never follows a symlink
                return open_beneath(dir_fd, name, O_SEARCH_DIR)
        except EscapeError:
            raise self._refusal(shown) from None
        except NotADirectoryError:
            raise NotADirectoryError(f"{str(shown)!r}: {where!r} is a file, not a directory") from None

    def _refuse_protected(self, dir_fd: int, shown: str | os.PathLike[str]) -> None:
        if self.enclosing is not None:
            raise PermissionError(
                f"refused: the workspace lies inside {self.enclosing.path}, {self.enclosing.why}; "
                "files written there could run code outside the sandbox"
            )
        where = self._protected_ancestor(dir_fd)
        if where is not None:
            what = (f"the Python environment of this program ({where.path})" if where.why == ENVIRONMENT
                    else f"{where.path}, {where.why}")
            raise PermissionError(
                f"refused: {str(shown)!r} is inside {what}; files written there could run code outside the sandbox"
            )

    def _protected_ancestor(self, dir_fd: int) -> CodeDir | None:
        """The protected directory `dir_fd` is in (itself or an ancestor up to the root), if any.

        Walks up with `..` from the descriptor, comparing device and inode numbers, so the answer is about
        the directory actually opened, however it was reached.
        """
        protected = dict(self._protected_ids)
        for code_dir in self._code_dirs:
            with contextlib.suppress(OSError):
                protected.setdefault(_identity(code_dir.path), code_dir)
        if not protected:
            return None
        with self._root_fd() as root_fd:
            root_id = _fd_identity(root_fd)
        current = os.open(".", O_SEARCH_DIR, dir_fd=dir_fd)
        try:
            while True:
                here = _fd_identity(current)
                if here in protected:
                    return protected[here]
                if here == root_id:
                    return None
                up = os.open("..", O_SEARCH_DIR, dir_fd=current)
                os.close(current)
                current = up
                if _fd_identity(current) == here:  # the file system's root: not under the workspace at all
                    return None
        finally:
            os.close(current)

    @contextlib.contextmanager
    def _root_fd(self) -> Iterator[int]:
        fd = os.open(self.root, O_SEARCH_DIR)
        try:
            yield fd
        finally:
            os.close(fd)

    def _refusal(self, path: str | os.PathLike[str]) -> PermissionError:
        return PermissionError(f"refused: {str(path)!r} resolves outside the workspace {self.root}")

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"


def _check_size(path: str | os.PathLike[str]) -> None:
    """Refuse paths over PATH_MAX bytes or MAX_COMPONENTS levels before any work is spent resolving them."""
    raw = os.fsencode(path)
    if len(raw) >= PATH_MAX:
        raise ValueError(f"path too long ({len(raw):,} bytes; the limit is {PATH_MAX - 1:,}): {os.fsdecode(raw[:60])!r}...")
    if raw.count(b"/") >= MAX_COMPONENTS:
        raise ValueError(f"path has too many components (more than {MAX_COMPONENTS}): {os.fsdecode(raw[:60])!r}...")


def _identity(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _fd_identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
