"""Files the host itself writes or reads (traces, bench results, reports): no symlink is ever followed.

These directories often lie inside a workspace that model code can write (the CLI's `./runs` sits in the
default workspace `.`), so a symlink planted there would make the host write a trace anywhere, or read a
FIFO and hang. Every path is therefore opened one component at a time beneath a directory descriptor
(`safe_open.open_beneath(..., symlinks=False)`):

- a relative path: no component below the current directory is followed;
- an absolute path: its parent is resolved normally (the user named it), its last component is not;
- directories are made with mkdirat (which never follows a link); files are opened with O_NOFOLLOW and
  must be regular files with a single link (a planted hard link could name a file anywhere).

A refusal raises `UnsafeHostPath` (a PermissionError) whose message is one line for the user.

Every text written here first goes through `redact.redact` (no credential reaches these files, which
the model's code can read): `write_text`, `append_text` and `TextAppender` are the host's only text writers.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path

from toolmode.errors import ToolmodeError
from toolmode.redact import redact
from toolmode.tools.safe_open import O_SEARCH_DIR, EscapeError, descend, open_beneath

READ_LIMIT = 256 * 1024 * 1024  # more than any results file; stops a planted /dev/zero-like file early


class UnsafeHostPath(ToolmodeError, PermissionError):
    """A host output path goes through a symlink, a hard-linked file or something that is not a file."""


def _refusal(path: os.PathLike[str] | str, why: str) -> UnsafeHostPath:
    return UnsafeHostPath(
        f"refused: {os.fspath(path)!r} {why}; toolmode does not follow links in its own output files and "
        "directories (sandboxed code may have planted it). Remove it or choose another directory"
    )


def _split(path: Path) -> tuple[str, list[str]]:
    """(anchor opened normally, the components below it that are walked without following links)."""
    if ".." in path.parts:
        path = Path(os.path.abspath(path))  # `a/../b` means b: the link `a` is not followed
    if path.is_absolute():
        if path.parent == path:
            return str(path), []
        return str(path.parent), [path.name]
    return ".", [p for p in path.parts if p != "."]


def open_dir(path: os.PathLike[str] | str, *, create: bool = True) -> int:
    """A descriptor of the directory `path` (made if missing when `create`), reached without following links."""
    path = Path(path)
    anchor, parts = _split(path)
    if create and anchor != ".":
        os.makedirs(anchor, exist_ok=True)
    return descend(os.open(anchor, O_SEARCH_DIR), parts, lambda fd, part: _open_component(fd, part, path, create))


def _open_component(dir_fd: int, name: str, shown: Path, create: bool) -> int:
    for _ in range(2):
        try:
            return open_beneath(dir_fd, name, O_SEARCH_DIR, symlinks=False)
        except EscapeError:
            raise _refusal(shown, f"goes through the symlink {name!r}") from None
        except NotADirectoryError:
            if _is_link(dir_fd, name):
                raise _refusal(shown, f"goes through the symlink {name!r}") from None
            raise NotADirectoryError(f"{os.fspath(shown)!r}: {name!r} is a file, not a directory") from None
        except FileNotFoundError:
            if not create:
                raise
            if _is_link(dir_fd, name):  # a dangling link: refused like any other
                raise _refusal(shown, f"goes through the symlink {name!r}") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=dir_fd)
    raise FileNotFoundError(errno.ENOENT, "directory vanished while it was made", os.fspath(shown))


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_file(path: os.PathLike[str] | str, flags: int, mode: int = 0o666) -> int:
    """Open the file `path` with `flags` (O_CREAT makes it, and its directory); no link is followed.

    O_TRUNC is applied only after the file is known to be a regular file with one link.
    """
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise IsADirectoryError(f"{os.fspath(path)!r} is a directory, not a file")
    parent = open_dir(path.parent, create=bool(flags & os.O_CREAT))
    try:
        opened = flags & ~os.O_TRUNC
        try:
            fd = os.open(path.name, opened | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, mode,
                         dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOENT and _is_link(parent, path.name)):
                raise _refusal(path, "is a symlink") from None
            raise
    finally:
        os.close(parent)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refusal(path, "is not a regular file")
        if info.st_nlink > 1:
            raise _refusal(path, f"has {info.st_nlink} hard links")
        os.set_blocking(fd, True)
        if flags & os.O_TRUNC:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_text(path: os.PathLike[str] | str, text: str) -> None:
    """Replace the file's content with `text` (UTF-8), credentials redacted."""
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open(fd, "w", encoding="utf-8", newline="") as out:
        out.write(redact(text))


def append_text(path: os.PathLike[str] | str, text: str) -> None:
    """Append `text` (UTF-8) to the file, creating it; credentials redacted."""
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with open(fd, "a", encoding="utf-8", newline="") as out:
        out.write(redact(text))


class TextAppender:
    """A file kept open for appending (a trace): each `write` is redacted, written and flushed at once."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        self._file = open(fd, "a", encoding="utf-8", newline="")  # noqa: SIM115 - closed by close()

    def empty(self) -> bool:
        """Whether the file holds nothing yet."""
        return os.fstat(self._file.fileno()).st_size == 0

    def write(self, text: str, *, flush: bool = True) -> None:
        """Append `text` with its credentials redacted, and flush (unless told that a flushed write follows at once)."""
        self._file.write(redact(text))
        if flush:
            self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def read_text(path: os.PathLike[str] | str, limit: int = READ_LIMIT) -> str:
    """The file's text (UTF-8); FileNotFoundError if missing; refused past `limit` bytes."""
    fd = open_file(path, os.O_RDONLY)
    with open(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _refusal(path, f"is larger than {limit:,} bytes")
    return data.decode("utf-8")


def is_file(path: os.PathLike[str] | str) -> bool:
    """Whether `path` is a regular file reached without following links."""
    try:
        os.close(open_file(path, os.O_RDONLY))
    except OSError:
        return False
    return True


def remove_tree(path: os.PathLike[str] | str) -> None:
    """Delete `path` (a directory tree, a file or a link) without following any link; missing is fine."""
    path = Path(path)
    try:
        parent = open_dir(path.parent, create=False)
    except FileNotFoundError:
        return
    try:
        try:
            info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path.name, dir_fd=parent)  # fd-based on Linux: never follows a link
        else:
            os.unlink(path.name, dir_fd=parent)
    finally:
        os.close(parent)
