"""Workspace confinement: every path a file tool touches must resolve inside one root directory."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


class Workspace:
    """A directory the file tools are confined to.

    Relative paths are taken relative to the root. A path is refused (PermissionError) when it resolves
    outside the root after following symlinks: `..` segments, absolute paths elsewhere, and symlinks
    that point out of the root are all caught by the same check.
    """

    def __init__(self, root: str | os.PathLike[str] = ".") -> None:
        self.root = Path(root).expanduser().resolve()

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """Return the absolute, symlink-free path for `path`, or raise PermissionError if it is outside."""
        if isinstance(path, str) and "\x00" in path:
            raise ValueError(f"invalid path {path!r}: contains a NUL character")
        candidate = Path(path)
        with contextlib.suppress(RuntimeError):  # "~nosuchuser/...": kept literal, a name in the workspace
            candidate = candidate.expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        # strict=False: the path may not exist yet (write_file); existing parts still have symlinks followed.
        resolved = candidate.resolve(strict=False)
        if not resolved.is_relative_to(self.root):
            raise PermissionError(f"refused: {str(path)!r} resolves outside the workspace {self.root}")
        return resolved

    def relative(self, path: Path) -> str:
        """`path` (already resolved) shown relative to the root, `.` for the root itself."""
        return path.relative_to(self.root).as_posix() or "."

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"
