"""How a stdio MCP server is started: never from the workspace, whatever the command's form.

A server runs unconfined, with the user's environment and credentials; the workspace is writable by
the model's code. So a server must not load code from it:

- **Working directory.** A server starts in the config's `cwd`, which must lie outside the workspace, or
  in the host's current directory when that is outside the workspace, else in `/`. The working directory
  is what `python -m` / `-c` put first on `sys.path`, where `npx` and `uv run` look for a local
  `node_modules` or project, and what relative paths in the environment mean.
- **Python.** The interpreter is found through `env` (options and `NAME=value` included), runners
  (`uv run`, `poetry run`, `pipenv run`, `pdm run`, `hatch run`) and any name or path of a Python
  (`python3.11`, a venv's `bin/python`), with its options parsed (`-W x`, `-X utf8`, `-um`, `-Bc`). Every
  server gets PYTHONSAFEPATH=1 (no directory added to `sys.path` for `-m`, `-c` or stdin; nothing to
  any other program), except a Python script's, whose own folder stays first (it is outside the workspace).
- **Refused** (unless the user accepts it: `allow_env_in_workspace`): a command, a script, a
  `uv run --directory/--project`, a `cwd`, or a `PYTHONPATH` / `NODE_PATH` entry inside the workspace,
  whether named directly, through a link, or found on PATH.

Not covered: what a server does once started (it may read the workspace), Docker volumes, and a
package manager's global state (e.g. `npx` resolving a package name from its cache or the registry).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolmode.mcp.config import ServerSpec

NEUTRAL_CWD = os.path.abspath(os.sep)
_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?[dmtw]?(?:\.exe)?")
_PY_VALUE_OPTIONS = frozenset("WX")  # -W arg, -X arg (attached or separate)
_PY_LONG_VALUE_OPTIONS = frozenset({"--check-hash-based-pycs"})
_RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run"}
_RUNNER_VALUE_OPTIONS = frozenset({
    "--with", "--with-editable", "--with-requirements", "--from", "--python", "-p", "--directory", "--project",
    "--group", "--extra", "--package", "--env-file", "--index", "--default-index", "--index-url", "-i",
    "--extra-index-url", "--find-links", "-f", "--cache-dir", "--config-file", "-C", "--color", "-e", "--env",
})  # fmt: skip
_RUNNER_DIR_OPTIONS = frozenset({"--directory", "--project"})
_SCRIPT_INTERPRETERS = re.compile(r"(?:node|nodejs|deno|bun|ruby|perl|php|bash|sh|dash|zsh|Rscript)(?:\d[\d.]*)?")


class LaunchRefused(ValueError):
    """Starting the server would run code from the workspace; the message says what and how to allow it."""


@dataclass(frozen=True)
class LaunchPlan:
    """Where and with what extra environment a stdio server starts."""

    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)


def plan(spec: ServerSpec, workspace: str | os.PathLike[str] | None = ".", *, allow_workspace: bool = False) -> LaunchPlan:
    """The working directory and environment for `spec`; LaunchRefused when it would load code from the workspace.

    `workspace` None: no workspace is known; the current directory is taken as one for the working
    directory, and nothing is refused.
    """
    here = os.path.realpath(os.getcwd())
    ws = _real(workspace) if workspace is not None else None
    inside = _inside_checker(ws or here)
    base = os.path.join(here, os.path.expanduser(spec.cwd)) if spec.cwd else here  # what relative paths mean
    cwd = _working_directory(spec, base, inside, refuse=ws is not None and not allow_workspace,
                             allow=allow_workspace)
    merged_env = {"PATH": os.environ.get("PATH", os.defpath), **spec.env}  # what the SDK passes, PATH and the spec's
    runs, dirs = _unwrap([spec.command or "", *spec.args])
    found = _which(runs[0], merged_env.get("PATH"), base) if runs and runs[0] else None
    if ws is not None and not allow_workspace:
        problems = _problems(found, runs, dirs, base, cwd, merged_env, inside)
        if problems:
            raise LaunchRefused(
                f"refused: {'; '.join(dict.fromkeys(problems))}: code in the workspace {ws} would run unconfined, "
                "with your credentials, and the model's code can edit it. Move it out of the workspace, or accept "
                "the risk with --allow-env-in-workspace (allow_env_in_workspace=True)"
            )
    script = _python_script(runs) if runs and _is_python(runs[0], found) else None
    return LaunchPlan(cwd=cwd, env={} if script is not None else {"PYTHONSAFEPATH": "1"})


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _inside_checker(ws: str):  # noqa: ANN202 - a small closure
    root = Path(ws)

    def inside(path: str | os.PathLike[str], base: str) -> bool:
        """Whether `path` (relative to `base`) lies in the workspace, as written or after following links."""
        written = Path(os.path.normpath(os.path.join(base, os.fspath(path))))
        return written.is_relative_to(root) or Path(os.path.realpath(written)).is_relative_to(root)

    return inside


def _working_directory(spec: ServerSpec, base: str, inside, *, refuse: bool, allow: bool) -> str:  # noqa: ANN001
    """The config's cwd (refused inside the workspace when `refuse`), else the host's current directory
    when it is outside the workspace (or the user accepts the risk: `allow`), else `/`."""
    if spec.cwd:
        if refuse and inside(base, base):
            raise LaunchRefused(
                f"refused: the server's cwd {spec.cwd} lies inside the workspace; a server started there imports "
                "and runs what the model's code writes. Give a cwd outside the workspace, or accept the risk "
                "with --allow-env-in-workspace (allow_env_in_workspace=True)"
            )
        return base
    return NEUTRAL_CWD if inside(base, base) and not allow else base


def _unwrap(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command line that finally runs, past `env` and project runners (`uv run ...`), and the project
    folders the runners were given (`--directory`, `--project`)."""
    dirs: list[str] = []
    for _ in range(8):  # env env uv run ...: a few levels at most
        if not argv or not argv[0]:
            break
        name = os.path.basename(argv[0])
        if name == "env":
            argv = _after_env(argv[1:])
        elif name in _RUNNERS and len(argv) > 1 and argv[1] == _RUNNERS[name]:
            rest, i = argv[2:], 0
            while i < len(rest) and rest[i].startswith("-"):
                option, attached, value = rest[i].partition("=")
                takes_value = option in _RUNNER_VALUE_OPTIONS and not attached
                if option in _RUNNER_DIR_OPTIONS:
                    dirs.append(value if attached else (rest[i + 1] if i + 1 < len(rest) else ""))
                i += 2 if takes_value else 1
            argv = rest[i:]
        else:
            break
    return argv, dirs


def _after_env(args: list[str]) -> list[str]:
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-S", "--split-string") and i + 1 < len(args):
            return shlex.split(args[i + 1]) + args[i + 2:]
        if word.startswith("--split-string="):
            return shlex.split(word.split("=", 1)[1]) + args[i + 1:]
        if word.startswith("-S") and len(word) > 2:
            return shlex.split(word[2:]) + args[i + 1:]
        if word in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif word.startswith("-") or ("=" in word and not word.startswith("=")):
            i += 1
        else:
            return args[i:]
    return []


def _which(command: str, path: str | None, cwd: str) -> str | None:
    """The program `command` names, as an absolute path (not resolved through links), or None."""
    if os.sep in command:
        return os.path.normpath(os.path.join(cwd, command))
    found = shutil.which(command, path=path)
    return os.path.abspath(found) if found else None


def _is_python(command: str, found: str | None) -> bool:
    names = {os.path.basename(command)}
    if found:
        names |= {os.path.basename(found), os.path.basename(os.path.realpath(found))}
    return any(_PYTHON.fullmatch(n) for n in names)


def _python_script(argv: list[str]) -> str | None:
    """The script a Python command line runs, or None for `-m`, `-c`, stdin or the REPL."""
    args, i = argv[1:], 0
    while i < len(args):
        word = args[i]
        if word == "-" or word == "--":
            return None if word == "-" else (args[i + 1] if i + 1 < len(args) else None)
        if word.startswith("--"):
            i += 2 if word in _PY_LONG_VALUE_OPTIONS else 1
            continue
        if not word.startswith("-"):
            return word
        for k, letter in enumerate(word[1:], 1):
            if letter in "cm":
                return None
            if letter in _PY_VALUE_OPTIONS:
                i += 0 if k + 1 < len(word) else 1  # -Wignore vs -W ignore
                break
        i += 1
    return None


def _script_of(argv: list[str], found: str | None) -> str | None:
    """The script file an interpreter runs (Python, Node, Deno, Bun, a shell, ...), if any."""
    if _is_python(argv[0], found):
        return _python_script(argv)
    if _SCRIPT_INTERPRETERS.fullmatch(os.path.basename(argv[0])):
        return next((a for a in argv[1:] if not a.startswith("-") and a not in ("run",)), None)
    if argv[0].endswith((".py", ".js", ".mjs", ".cjs", ".ts", ".sh")):
        return argv[0]
    return None


def _problems(found: str | None, argv: list[str], dirs: list[str], base: str, cwd: str,  # noqa: PLR0913
              env: Mapping[str, str], inside) -> list[str]:  # noqa: ANN001
    """What in the command line or environment lies inside the workspace. Paths written in the command
    mean what they mean from `base` (the config's cwd or the host's); the environment's from `cwd`."""
    problems = [f"the server's project folder {d} lies inside the workspace" for d in dirs if d and inside(d, base)]
    if found and inside(found, base):
        problems.append(f"the server's program {found} lies inside the workspace")
    script = _script_of(argv, found) if argv else None
    if script and os.path.exists(os.path.join(base, script)) and inside(script, base):  # not `node -e CODE`
        problems.append(f"the server's script {script} lies inside the workspace")
    for name in ("PYTHONPATH", "NODE_PATH"):
        for entry in (env.get(name) or "").split(os.pathsep) if env.get(name) else ():
            if inside(entry or ".", cwd):
                problems.append(f"{name} entry {entry or '(empty: the cwd)'} lies inside the workspace")
    return problems
