"""`python -m toolmode` puts the current directory first on sys.path: take it off before anything is imported.

A module planted in the current directory (a `rich.py`, an `openai/` package, even a `json.py`) would
otherwise be imported by toolmode instead of the installed one, and run with the user's credentials.
The package's `__init__` imports this module first (`-m` imports the package before running
`__main__`). What Python does before that cannot be defended from here: a planted `toolmode/` package in
the current directory is the one `-m` finds. `python -P -m toolmode` and the `toolmode` script never put
the current directory on sys.path.
"""

from __future__ import annotations

import os
import sys

_MODULES = ("toolmode", "toolmode.__main__")


def run_with_m() -> bool:
    """True when this interpreter was started as `python [options] -m toolmode ...`."""
    orig, argv = getattr(sys, "orig_argv", []), sys.argv
    at = len(orig) - len(argv)  # where the module's name is: sys.argv holds only what follows it
    if at < 1 or at >= len(orig) or not argv:
        return False
    name, before = orig[at], orig[at - 1]
    if name in _MODULES:  # `-m toolmode`, also in a cluster such as `-Im toolmode`
        return before.startswith("-") and not before.startswith("--") and before.endswith("m")
    return name.startswith("-") and not name.startswith("--") and any(name.endswith("m" + m) for m in _MODULES)


def forget_cwd() -> None:
    """Remove the current directory that `-m` put first on sys.path (nothing else is touched)."""
    if sys.flags.safe_path or not sys.path or not run_with_m():
        return
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    if sys.path[0] in ("", cwd):
        del sys.path[0]


forget_cwd()
