"""Where the Python environment running toolmode lives, so no agent can write into it.

A model that can write `site-packages/x.pth` (or any module the host imports) gets code run later by the
host, with its credentials. The file tools refuse such writes; the sandbox and the shell refuse a
workspace that contains the environment, because Landlock can only grant whole directory trees.
"""

from __future__ import annotations

import contextlib
import site
import sys
from pathlib import Path


def python_environment_dirs(root: Path | str) -> list[Path]:
    """The installation and environment directories of this interpreter that lie inside `root`."""
    root = Path(root).resolve()
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    if site.ENABLE_USER_SITE:
        with contextlib.suppress(Exception):
            candidates.add(site.getusersitepackages())
    found: list[Path] = []
    for candidate in sorted(c for c in candidates if c):
        path = Path(candidate).resolve()
        if path.is_relative_to(root) and path not in found:
            found.append(path)
    return found


def environment_refusal(workspace: Path | str) -> str | None:
    """Why `workspace` must not be writable by confined code, or None when it is fine."""
    inside = python_environment_dirs(workspace)
    if not inside:
        return None
    return (
        f"refused: the workspace {Path(workspace).resolve()} contains the Python environment toolmode runs from "
        f"({inside[0]}); code confined to the workspace could change it and so run later with your credentials. "
        "Choose another workspace (--workspace DIR), or accept the risk with --allow-env-in-workspace "
        "(allow_env_in_workspace=True)."
    )
