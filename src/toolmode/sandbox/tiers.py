"""The sandbox's tiers: which world this host can build for model code, chosen once per process.

1. `namespaces`: own user (the caller's uid mapped to itself), mount, IPC, PID, UTS, network and cgroup
   namespaces, a minimal read-only view of the host (`view.plan`) with the workspace the one writable bind and
   a private, size-bounded /tmp; Landlock and seccomp inside. Built by bubblewrap where `bwrap` is installed
   and works, else directly (`namespaces.enter`) where the kernel lets this process make a user namespace.
2. `landlock`: no namespaces can be made. Landlock and seccomp, the filter adding what Landlock does not cover
   (file metadata of host paths: chmod, chown, times, extended attributes).
3. `none`: unsafe, explicit only.

`resolve(policy)` answers for "auto" (the best available), "namespaces" (either builder), "bwrap" and
"unshare" (one builder), "landlock" and "none"; a forced tier that is unavailable raises SandboxUnavailable
(fail closed). Each builder is probed once per process by running `true` through the real shell launcher on
it (shell.py hands its launcher in: `set_launcher_probe`). When "auto" cannot make namespaces, one SandboxWarning says what to install and what the weaker tier
does not hold.
"""

from __future__ import annotations

import os
import shutil
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from . import confine, landlock, seccomp, view
from .spawn import SAFE_PATH
from .spec import SandboxUnavailable

POLICIES = ("auto", "namespaces", "bwrap", "unshare", "landlock", "none")
DEFAULT_POLICY = "auto"  # the policy of run_shell (tests point it at one tier)
NONE_HINT = ('pass sandbox="none" (Python) or --sandbox none (CLI) to run model code without confinement '
             "(unsafe: a plain child process with only rlimits and a timeout)")
INSTALL = "apt install bubblewrap (or your distribution's bubblewrap package)"
WEAKER = ("without namespaces, code can stat host paths (sizes and times, e.g. under /root), read what Landlock "
          "allows, write `.git` and `runs/` in the workspace, and has no private /tmp; chmod, chown, utime and "
          "extended attributes are refused, so `chmod +x`, `cp -p` and `touch` of an existing file fail")


class SandboxWarning(UserWarning):
    """The sandbox runs on a weaker tier than this machine could offer with a package installed."""


@dataclass(frozen=True)
class Tier:
    """A tier: `name` is "namespaces", "landlock" or "none"; `builder` ("bwrap" or "unshare") says how the
    namespaces tier's world is made."""

    name: str
    builder: str = ""

    @property
    def namespaces(self) -> bool:
        """Whether the confined process gets its own namespaces and view."""
        return self.name == "namespaces"

    def describe(self) -> str:
        """The walls, in a few words, for the line printed at the start of each run."""
        abi = landlock.abi_version()
        lock = f"landlock (ABI {abi})" if abi >= 1 else "no landlock (kernel)"
        if self.namespaces:
            how = "bubblewrap" if self.builder == "bwrap" else "unshare"
            return f"namespaces ({how}) + {lock} + seccomp"
        if self.name == "landlock":
            return f"{lock} + seccomp, no namespaces (metadata calls refused; install bubblewrap for more)"
        return "NONE (unsafe: plain child process, only rlimits and a timeout)"


BWRAP = Tier("namespaces", "bwrap")
UNSHARE = Tier("namespaces", "unshare")
LANDLOCK = Tier("landlock")
NONE = Tier("none")

_probed: dict[str, tuple[bool, str]] = {}
_probe_lock = threading.Lock()
_launcher_probe: Callable[[Tier], tuple[bool, str]] | None = None
_warned = False


def bwrap_path() -> str | None:
    """The bubblewrap binary, looked up on the system's own directories only (never a PATH entry the
    workspace could hold)."""
    return shutil.which("bwrap", path=SAFE_PATH)


def set_launcher_probe(probe: Callable[[Tier], tuple[bool, str]]) -> None:
    """Use `probe` (run `true` through the shell launcher on a tier: (works, why not)) to find which builders
    work. shell.py registers its launcher at import: the launcher is what every later run uses, and the shell
    module chooses its tier through this one, so the dependency is handed in rather than imported back."""
    global _launcher_probe
    _launcher_probe = probe


def _probe(tier: Tier) -> tuple[bool, str]:
    """Run `true` through the shell launcher on `tier` (once per process): (works, why not)."""
    if _launcher_probe is None:  # a programming error, not a host without namespaces: never a silent fallback
        raise RuntimeError("toolmode.sandbox.shell must be imported before a tier is chosen")
    with _probe_lock:
        if tier.builder not in _probed:
            try:
                _probed[tier.builder] = _launcher_probe(tier)
            except (OSError, SandboxUnavailable) as exc:
                _probed[tier.builder] = (False, str(exc))
        return _probed[tier.builder]


def available(tier: Tier) -> tuple[bool, str]:
    """Whether `tier` can be built here, and why not."""
    if tier.name == "none":
        return True, ""
    if not seccomp.available():
        return False, "the seccomp filters are written for x86_64 Linux only"
    if tier.name == "landlock":
        return (landlock.abi_version() >= 1, "Landlock is not available in this kernel (needs Linux >= 5.13)")
    if tier.builder == "bwrap" and bwrap_path() is None:
        return False, "bubblewrap (bwrap) is not installed"
    return _probe(tier)


def resolve_candidates(policy: str) -> list[Tier]:
    """The tiers `policy` may use, best first."""
    return {"auto": [BWRAP, UNSHARE, LANDLOCK], "namespaces": [BWRAP, UNSHARE], "bwrap": [BWRAP],
            "unshare": [UNSHARE], "landlock": [LANDLOCK], "none": [NONE]}[policy]


def resolve(policy: str) -> Tier:
    """The tier for `policy`; SandboxUnavailable when it cannot be built (fail closed), ValueError when
    `policy` is unknown."""
    if policy not in POLICIES:
        raise ValueError(f"unknown sandbox policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if policy == "none":
        return NONE
    reasons: list[str] = []
    for tier in resolve_candidates(policy):
        ok, why = available(tier)
        if ok:
            if policy == "auto" and not tier.namespaces:
                _warn_once(reasons)
            return tier
        reasons.append(f"{tier.builder or tier.name}: {why}")
    raise SandboxUnavailable(f"no sandbox of policy {policy!r} can be built here ({'; '.join(reasons)}). "
                             f"For the namespaces tier: {INSTALL}. Or {NONE_HINT}")


def _warn_once(reasons: list[str]) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(SandboxWarning(
            f"toolmode sandbox: no namespaces on this host ({'; '.join(reasons)}); using the landlock tier. "
            f"Install bubblewrap for the strongest tier: {INSTALL}. The landlock tier holds less: {WEAKER}."),
            stacklevel=3)


def bwrap_argv(plan: list[tuple[str, ...]], workspace: str) -> list[str]:
    """The bubblewrap command line that builds `plan` (view.plan) and runs what follows it in `workspace`.

    The program starts as pid 1 (--as-pid-1) and makes itself an init there (`namespaces.start_init`), so
    bubblewrap reaps that init, and its I/O counters, which hold every process of the run, are still readable
    from bubblewrap's zombie when the run ends (bubblewrap's own init may outlive bubblewrap and take them
    along). Where this process is root, bubblewrap
    lets the program keep CAP_SYS_ADMIN (and CAP_SETPCAP) in its own user namespace until it drops every capability, so that it
    can make the device binds read-only (`namespaces.seal_devices`), which bubblewrap's own read-only remount
    cannot do without also cutting device access."""
    binary = bwrap_path()
    if binary is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed; {INSTALL}")
    argv = [binary, "--unshare-all", "--unshare-user", "--die-with-parent", "--as-pid-1", "--hostname", "toolmode",
            "--cap-drop", "ALL"]
    if os.getuid() == 0:
        argv += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"]  # CAP_SETPCAP: to empty the bounding set
    flag = {view.RO: "--ro-bind", view.RX: "--ro-bind", view.DEV: "--dev-bind", view.DEV_RW: "--dev-bind",
            view.RW: "--bind"}
    for op in plan:
        if op[0] == "bind":
            argv += [flag[op[3]], op[2], op[1]]
        elif op[0] == "symlink":
            argv += ["--symlink", op[2], op[1]]
        elif op[0] == "tmpfs":
            argv += ["--perms", "1777", "--size", op[2], "--tmpfs", op[1]]
    return argv + ["--remount-ro", "/", "--chdir", workspace, "--"]


def sealed_devices(plan: list[tuple[str, ...]]) -> list[str]:
    """The device binds of `plan` that the program makes read-only itself (bubblewrap, as root)."""
    return [op[1] for op in plan if op[0] == "bind" and op[3] in (view.DEV, view.DEV_RW)]


def child_config(tier: Tier, plan: list[tuple[str, ...]]) -> dict[str, object]:
    """What the worker or launcher needs to finish its world: the tier, the plan to build (unshare) or the
    device binds to seal (bubblewrap as root)."""
    cfg: dict[str, object] = {"name": tier.name, "builder": tier.builder}
    if tier.builder == "unshare":
        cfg["plan"] = [list(op) for op in plan]
    elif tier.builder == "bwrap" and os.getuid() == 0:
        cfg["seal"] = sealed_devices(plan)
    return cfg


_programs: dict[tuple[bool, str, int, tuple[int, ...]], str] = {}


def seccomp_program(*, worker: bool, tier: Tier, pid: int, protect: tuple[int, ...] = ()) -> str:
    """The confined process's seccomp program (hex), built here once per (kind, tier, pid) and sent along:
    in the namespaces tier the worker is always pid 2, so every worker of a process shares one."""
    key = (worker, tier.name, pid, protect)
    program = _programs.get(key)
    if program is None:
        program = confine.seccomp_filter(worker=worker, tier=tier.name, pid=pid, abi=landlock.abi_version(),
                                         protect=protect).hex()
        if pid in (0, 2):  # the same for every run (a landlock-tier worker's own pid is not)
            _programs[key] = program
    return program
