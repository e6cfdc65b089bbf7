"""The host side of the sandbox: spawns confined workers, relays tool calls, enforces limits, kills on timeout.

Every frame from the worker is hostile: its size is capped, it must be a JSON object of the expected shape,
a call may name only a tool offered in this run (or revealed through Handles), and each run has a call
budget. Anything that breaks the framing ends the run and replaces the worker.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import landlock, seccomp
from .output import cap_output, format_error
from .protocol import Channel, ChannelClosed, FrameTimeout, ProtocolError
from .spawn import HERE, interpreter, kill_group, popen_from_spawner, scrubbed_env
from .spec import CodeResult, Handles, SandboxLimits, SandboxUnavailable, StubSpec

DEFAULT_LIMITS = SandboxLimits()  # frozen, so sharing it as a default is safe
POLICIES = ("auto", "landlock", "bwrap", "none")
STARTUP_TIMEOUT = 15.0
NONE_HINT = ('pass sandbox="none" to run model code without confinement (unsafe: a plain child process '
             "with only rlimits and a timeout)")


def resolve_policy(policy: str) -> str:
    """The mechanism to use for `policy`; SandboxUnavailable when it is missing (fail closed)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown sandbox policy {policy!r}; choose one of {', '.join(POLICIES)}")
    has_landlock = landlock.abi_version() >= 1 and seccomp.available()
    has_bwrap = shutil.which("bwrap") is not None and seccomp.available()
    if policy == "none":
        return "none"
    if policy in ("auto", "landlock") and has_landlock:
        return "landlock"
    if policy in ("auto", "bwrap") and has_bwrap:
        return "bwrap"
    if policy == "landlock":
        raise SandboxUnavailable(f"Landlock is not available in this kernel (needs Linux >= 5.13 on x86_64); {NONE_HINT}")
    if policy == "bwrap":
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed; install it, or {NONE_HINT}")
    raise SandboxUnavailable(
        f"no sandbox available: this kernel has no Landlock and bubblewrap is not installed. Install bubblewrap, or {NONE_HINT}"
    )


def _bwrap_prefix(workspace: Path) -> list[str]:
    argv = ["bwrap", "--die-with-parent", "--unshare-all", "--cap-drop", "ALL", "--dev", "/dev"]
    ro = {os.path.realpath(p) for p in ["/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/localtime", str(HERE),
                                        os.path.dirname(os.path.dirname(interpreter()))]}
    for path in sorted(ro):
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for link in ("/lib", "/lib64", "/bin"):
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
    return argv + ["--bind", str(workspace), str(workspace), "--chdir", str(workspace)]


def _json_default(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _error_reply(cid: Any, exc: BaseException | None = None, message: str = "") -> dict[str, Any]:
    if exc is None:
        return {"op": "result", "id": cid, "ok": False, "exc_type": "ToolError", "message": message}
    cls = type(exc)
    text = str(exc)
    if getattr(builtins, cls.__name__, None) is cls:
        if isinstance(exc, OSError) and exc.errno is not None:
            args: list[Any] = [exc.errno, exc.strerror] + ([str(exc.filename)] if exc.filename is not None else [])
        else:
            args = [a if isinstance(a, (str, int, float, bool)) or a is None else str(a) for a in exc.args]
        return {"op": "result", "id": cid, "ok": False, "exc_type": cls.__name__, "message": text, "args": args}
    return {"op": "result", "id": cid, "ok": False, "exc_type": "ToolError", "message": f"{cls.__name__}: {text}"}


class _Worker:
    """One worker process and its channel."""

    def __init__(self, proc: subprocess.Popen[bytes], chan: Channel) -> None:
        self.proc = proc
        self.chan = chan
        self.ready = False
        self.runs = 0

    def kill(self) -> None:
        """SIGKILL the worker's process group, reap it, close the channel."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        kill_group(self.proc.pid)  # anything else left in its group (there should be nothing)
        self.chan.sock.close()

    def status(self) -> str:
        """How the process ended, in words (after it ended)."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "stopped responding"
        if code < 0:
            sig = signal.Signals(-code)
            why = {signal.SIGXCPU: " (CPU time limit)", signal.SIGSEGV: " (segmentation fault)",
                   signal.SIGKILL: " (CPU or memory limit, or killed)", signal.SIGSYS: " (forbidden system call)",
                   signal.SIGXFSZ: " (file size limit)"}.get(sig, "")
            return f"was killed by {sig.name}{why}"
        return f"exited with status {code}"


class Sandbox:
    """Runs model-written Python in a confined worker; see docs/CONTRACTS.md (Sandbox)."""

    def __init__(self, workspace: Path, limits: SandboxLimits = DEFAULT_LIMITS, policy: str = "auto",
                 persistent: bool = False) -> None:
        self.workspace = Path(workspace).resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.limits = limits
        self.persistent = persistent
        self.policy = resolve_policy(policy)
        self.spawned_pids: list[int] = []
        self._lock = threading.Lock()
        self._closed = False
        self._worker: _Worker | None = None
        self._worker = self._spawn()

    # ------------------------------------------------------------------ lifecycle

    def describe_policy(self) -> str:
        """One line for the start of a run: the mechanism and the limits in force."""
        lim = f"{self.limits.timeout:g} s, {self.limits.memory_mb} MiB"
        if self.policy == "landlock":
            return f"sandbox: landlock (ABI {landlock.abi_version()}) + seccomp, caps dropped, {lim}, no network"
        if self.policy == "bwrap":
            return f"sandbox: bubblewrap + seccomp, caps dropped, {lim}, no network"
        return f"sandbox: NONE (unsafe: plain child process, only rlimits and a timeout), {lim}"

    def _spawn(self) -> _Worker:
        ours, theirs = socket.socketpair()
        try:
            parent = 0 if self.policy == "bwrap" else os.getpid()
            argv = [interpreter(), "-I", "-S", "-B", str(HERE / "worker.py"), str(theirs.fileno()), str(parent)]
            if self.policy == "bwrap":
                argv = _bwrap_prefix(self.workspace) + argv
            proc = popen_from_spawner(argv, pass_fds=(theirs.fileno(),), cwd=self.workspace,
                                      env=scrubbed_env(self.workspace, MALLOC_ARENA_MAX="2"), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      close_fds=True, start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.spawned_pids.append(proc.pid)
        worker = _Worker(proc, Channel(ours, max_in=self.limits.max_frame_bytes))
        lim = self.limits
        worker.chan.send({"op": "init", "workspace": str(self.workspace), "policy": self.policy,
                          "persistent": self.persistent,
                          "limits": {"cpu_seconds": lim.cpu(), "memory_mb": lim.memory_mb,
                                     "file_size_mb": lim.file_size_mb, "open_files": lim.open_files}},
                         deadline=time.monotonic() + STARTUP_TIMEOUT)
        return worker

    def _ready_worker(self) -> tuple[_Worker, bool]:
        """A confined, ready worker; the flag says whether a previous worker's state was lost."""
        lost = False
        w = self._worker
        if w is not None and w.proc.poll() is not None:
            lost = w.runs > 0
            w.kill()
            w = None
        if w is None:
            w = self._worker = self._spawn()
        if not w.ready:
            try:
                msg = w.chan.recv(deadline=time.monotonic() + STARTUP_TIMEOUT)
            except ProtocolError as exc:
                why = w.status() if isinstance(exc, ChannelClosed) else str(exc)
                w.kill()
                self._worker = None
                raise SandboxUnavailable(f"the sandbox worker failed to start ({why})") from None
            if msg.get("op") != "ready":
                w.kill()
                self._worker = None
                raise SandboxUnavailable(f"the sandbox worker could not confine itself: {msg.get('message', msg)}")
            w.ready = True
        return w, lost

    def _replace(self) -> None:
        """Kill the current worker and start the next one now, so it is warm by the next run."""
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
        if not self._closed:
            try:
                self._worker = self._spawn()
            except Exception:
                self._worker = None  # retried at the next run

    def close(self) -> None:
        """Kill the worker; nothing is left running. Idempotent."""
        with self._lock:
            self._closed = True
            if self._worker is not None:
                self._worker.kill()
                self._worker = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed and self._worker is not None:
                self._worker.kill()
        except Exception:
            pass

    # ------------------------------------------------------------------ runs

    def run(self, code: str, stubs: list[StubSpec], call: Callable[[str, dict[str, Any]], Any]) -> CodeResult:
        """Run `code` in the worker with `stubs` as functions; tool calls go to `call(name, kwargs)`."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            worker, lost = self._ready_worker()
            state = _RunState({s.name for s in stubs}, self.limits.max_tool_calls)
            deadline = time.monotonic() + self.limits.timeout
            try:
                worker.chan.send({"op": "run", "code": code, "stubs": [s.to_json() for s in stubs],
                                  "max_output": self.limits.max_output}, deadline)
                worker.runs += 1
                while True:
                    msg = worker.chan.recv(deadline)
                    op = msg.get("op")
                    if op == "call":
                        reply = self._call(msg, state, call)
                        try:
                            worker.chan.send(reply, deadline, default=_json_default)
                        except (ValueError, TypeError) as exc:  # e.g. a circular structure; nothing was sent
                            worker.chan.send(_error_reply(reply["id"], message=f"the result cannot be sent as JSON: {exc}"),
                                             deadline)
                    elif op == "done":
                        return self._finish(code, msg, state, lost)
                    else:
                        raise ProtocolError(f"unexpected frame {str(op)[:40]!r}")
            except FrameTimeout:
                self._replace()
                return self._failure(f"Error: timed out after {self.limits.timeout:g} s", state, timed_out=True)
            except ChannelClosed:
                why = worker.status()
                self._replace()
                return self._failure(f"Error: the program ended the sandbox worker: it {why}", state)
            except ProtocolError as exc:
                self._replace()
                return self._failure(f"Error: the program broke the sandbox protocol ({exc})", state)
            except BaseException:
                self._replace()  # e.g. KeyboardInterrupt inside a host tool: the worker's state is unknown
                raise

    def _failure(self, message: str, state: _RunState, timed_out: bool = False) -> CodeResult:
        reset = self.persistent
        if reset:
            message += "; the worker was restarted and the namespace was reset (variables from earlier runs are gone)"
        else:
            message += "; the worker was restarted"
        return CodeResult(output="", error=message, calls=state.calls, timed_out=timed_out, reset=reset)

    def _finish(self, code: str, msg: dict[str, Any], state: _RunState, lost: bool) -> CodeResult:
        output = msg.get("output")
        dropped = msg.get("dropped")
        error = msg.get("error")
        if not isinstance(output, str) or not isinstance(dropped, int) or not (error is None or isinstance(error, dict)):
            raise ProtocolError("malformed done frame")
        text, truncated = cap_output(output, self.limits.max_output, dropped)
        err_text = line = None
        if error is not None:
            line = error.get("line")
            line = line if isinstance(line, int) and not isinstance(line, bool) else None
            err_text = format_error(code, line, str(error.get("type", "Exception"))[:200], str(error.get("message", "")))
        if lost and self.persistent:
            note = "Note: the previous worker had stopped, so this program ran in a fresh namespace."
            err_text = f"{note}\n{err_text}" if err_text else note
        if msg.get("retire") is True:
            self._replace()
        return CodeResult(output=text, error=err_text, line=line, truncated=truncated, calls=state.calls,
                          reset=lost and self.persistent)

    def _call(self, msg: dict[str, Any], state: _RunState, call: Callable[[str, dict[str, Any]], Any]) -> dict[str, Any]:
        cid = msg.get("id")
        if not isinstance(cid, int) or isinstance(cid, bool):
            return _error_reply(None, message="malformed tool call frame (id)")
        name, args = msg.get("name"), msg.get("args")
        if not isinstance(name, str) or not isinstance(args, dict):
            return _error_reply(cid, message="malformed tool call frame (name/args)")
        state.requests += 1
        if state.requests > state.budget:
            return _error_reply(cid, message=f"tool call budget exceeded: at most {state.budget} calls per run")
        if name not in state.allowed:
            return _error_reply(cid, message=f"tool {name[:100]!r} is not available in this run")
        state.calls += 1
        try:
            value = call(name, args)
        except Exception as exc:
            return _error_reply(cid, exc)
        if isinstance(value, Handles):
            specs = [s for s in value if isinstance(s, StubSpec)]
            state.allowed.update(s.name for s in specs)
            return {"op": "result", "id": cid, "ok": True, "handles": [s.to_json() for s in specs]}
        return {"op": "result", "id": cid, "ok": True, "value": value}


@dataclasses.dataclass
class _RunState:
    allowed: set[str]
    budget: int
    requests: int = 0
    calls: int = 0
