"""Where the code the host runs lives (its Python environment, toolmode's own package, every `sys.path`
entry), so no agent can write into it.

A model that can write `site-packages/x.pth`, `toolmode/sandbox/worker.py` (an editable checkout) or any
module on `sys.path` gets code run later by the host, with its credentials. The file tools refuse such
writes; the sandbox and the shell refuse a workspace that overlaps such a directory, because Landlock
can only grant whole directory trees.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
from dataclasses import dataclass
from pathlib import Path

ENVIRONMENT = "the Python environment toolmode runs from"
PACKAGE = "toolmode's own package directory (its modules, including the sandbox's worker and launcher)"
IMPORT_PATH = "a directory Python imports modules from (an entry of sys.path)"
EDITABLE = "the source directory of an editable install (modules are imported from it)"


@dataclass(frozen=True)
class CodeDir:
    """A directory whose files the host process may execute, and why (one of the constants above)."""

    path: Path
    why: str


def _resolved(path: str | os.PathLike[str]) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _environment() -> list[str]:
    return [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            os.path.dirname(os.path.realpath(sys.executable or "/")),
            os.path.dirname(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable or "/"))]


def _user_site() -> list[str]:
    """The user site-packages directory when Python reads it, whether or not it exists yet: a workspace
    that could create `~/.local/lib/pythonX.Y/site-packages/x.pth` gets code run by every later start."""
    if site.ENABLE_USER_SITE:
        with contextlib.suppress(Exception):
            return [site.getusersitepackages()]
    return []


def _editable_sources() -> list[str]:
    """Source directories that setuptools' editable finders (on sys.meta_path) import packages from."""
    found: list[str] = []
    for finder in sys.meta_path:
        module = sys.modules.get(getattr(finder, "__module__", "") or "")
        mapping = getattr(module, "MAPPING", None)
        if isinstance(mapping, dict):
            found += [str(p) for p in mapping.values() if isinstance(p, str)]
    return found


def host_code_dirs() -> list[CodeDir]:
    """Every directory the running host imports or executes code from: its Python environment (prefixes,
    the interpreter's directory, the user site), toolmode's package directory, the `sys.path` entries
    (`""` is the current directory) and editable-install source directories. Missing ones count too:
    Python imports from a `sys.path` entry or the user site-packages as soon as it is made."""
    package = str(Path(__file__).parent)
    groups = [(_environment() + _user_site(), ENVIRONMENT), ([package], PACKAGE),
              ([entry or os.getcwd() for entry in sys.path], IMPORT_PATH), (_editable_sources(), EDITABLE)]
    found: list[CodeDir] = []
    seen: set[Path] = set()
    for paths, why in groups:
        for raw in paths:
            path = _resolved(raw) if raw else None
            if path is None or path in seen or path == Path("/"):
                continue
            seen.add(path)
            found.append(CodeDir(path, why))
    return found


def code_dirs_inside(root: Path | str, dirs: list[CodeDir] | None = None) -> list[CodeDir]:
    """The host's code directories (`dirs`, default `host_code_dirs()`) that lie inside `root` or are it."""
    root = Path(root).resolve()
    return [d for d in (host_code_dirs() if dirs is None else dirs) if d.path.is_relative_to(root)]


def python_environment_dirs(root: Path | str) -> list[Path]:
    """The directories of the host's code (see `host_code_dirs`) that lie inside `root`: the file tools
    never write into these."""
    return [d.path for d in code_dirs_inside(root)]


def enclosing_code_dir(root: Path | str, dirs: list[CodeDir] | None = None) -> CodeDir | None:
    """A code directory that `root` lies strictly inside, where every file below is importable: toolmode's
    package, and the stdlib and site-packages directories (sys.path entries inside the environment)."""
    root = Path(root).resolve()
    dirs = host_code_dirs() if dirs is None else dirs
    env = [d.path for d in dirs if d.why == ENVIRONMENT]
    for d in dirs:
        if not root.is_relative_to(d.path) or root == d.path:
            continue
        if d.why == PACKAGE or d.why == IMPORT_PATH and any(d.path.is_relative_to(e) for e in env):
            return d
    return None


def environment_refusal(workspace: Path | str) -> str | None:
    """Why `workspace` must not be writable by confined code, or None when it is fine.

    Refused: a workspace that contains any of the host's code directories, or lies inside toolmode's
    package or inside an import directory of the environment (stdlib, site-packages).
    """
    ws = Path(workspace).resolve()
    dirs = host_code_dirs()
    inside = code_dirs_inside(ws, dirs)
    around = None if inside else enclosing_code_dir(ws, dirs)
    if inside and inside[0].why == ENVIRONMENT:
        where = f"contains {ENVIRONMENT} ({inside[0].path})"
    elif inside:
        where = f"contains {inside[0].path}, {inside[0].why}"
    elif around is not None:
        where = f"lies inside {around.path}, {around.why}"
    else:
        return None
    return (
        f"refused: the workspace {ws} {where}; code confined to the workspace could change it and so run later "
        "with your credentials. Choose another workspace (workspace= in Python, --workspace DIR on the command "
        "line), or accept the risk (allow_env_in_workspace=True, --allow-env-in-workspace)."
    )


def config_refusal(config: str | os.PathLike[str], workspace: str | os.PathLike[str], what: str) -> str | None:
    """Why the host must not read `config` (a file naming commands the host runs), or None when it is fine.

    Refused: a config inside the workspace (after following links), since code confined to the workspace
    could edit it and so have the host run any command at its next start.
    """
    path, ws = _resolved(config), _resolved(workspace)
    if path is None or ws is None or not path.is_relative_to(ws):
        return None
    return (
        f"refused: {what} {path} lies inside the workspace {ws}; code confined to the workspace could edit it "
        "and so have toolmode run any command with your credentials. Move it out of the workspace, or accept "
        "the risk with --allow-env-in-workspace (allow_env_in_workspace=True)."
    )
