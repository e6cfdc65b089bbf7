"""The host side of the sandbox: spawns workers confined on the tier tiers.py chose (workerproc.py is one
worker as the host sees it), relays tool calls, enforces limits (the write budget, CPU, tasks and memory where
no cgroup holds them), stops a persistent worker between runs, kills on timeout.

Every frame from the worker is hostile: its size is capped, it must be a JSON object of the expected shape,
a call may name only a tool offered in this run (or revealed through Handles), and each run has a call
budget. Anything that breaks the framing ends the run and replaces the worker.
"""

from __future__ import annotations

import builtins
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import os
import queue
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import callscope
from ..callscope import CallScope, ToolCancelled
from ..callscope import remaining_time as remaining_time
from ..hostenv import environment_refusal
from . import boot, runlimits, tiers, usage, view
from . import shell as _shell  # noqa: F401  # its launcher is the tiers' probe (set_launcher_probe)
from .budget import INTERVAL
from .output import cap_output, escape_control, format_error
from .protocol import Channel, ChannelClosed, FrameTimeout, ProtocolError, encode
from .spawn import interpreter, on_spawner, scrubbed_env
from .spec import CodeResult, Handles, SandboxLimits, SandboxUnavailable, StubSpec, UnsafeWorkspace
from .workerproc import WorkerProcess, cpu_seconds

DEFAULT_LIMITS = SandboxLimits()  # frozen, so sharing it as a default is safe
REPAIR_SLACK = 64  # characters a repaired program may add (50 rejoined strings at most)
POLICIES = tiers.POLICIES
STARTUP_TIMEOUT = 15.0
CHECK_INTERVAL = 0.1  # how often a running program is checked when it has no write budget (budget.py: 10 ms)
WRITE_CHECK_GAP = 0.001  # the write budget is also checked on frames and after tool calls, at most this often
CPU_SLACK = 0.5  # the host's CPU check allows this much over the limit (RLIMIT_CPU normally acts first)
CLOSE_WAIT = 30.0  # close() waits this long at most for the (idle) tool thread to end (a bound: it ends at once,
# but on a starved machine it may not be scheduled within seconds)
CPU_LIFETIME_RUNS = 1000  # persistent workers: the CPU hard ceiling is this many runs' worth
NONE_HINT = tiers.NONE_HINT


def resolve_policy(policy: str) -> tiers.Tier:
    """The tier for `policy` (see tiers.resolve); SandboxUnavailable when it cannot be built (fail closed)."""
    return tiers.resolve(policy)


def _kill_when_started(future: Any) -> None:
    """Kill a pre-started worker once its start-up finished (if it started at all)."""
    if future.exception() is None:
        future.result().signal_kill()


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
    if cls.__name__ == "ToolDenied" and isinstance(exc, PermissionError):  # a refused call (toolmode.approval)
        return {"op": "result", "id": cid, "ok": False, "exc_type": "ToolDenied", "message": text}
    if getattr(builtins, cls.__name__, None) is cls:
        if isinstance(exc, OSError) and exc.errno is not None:
            args: list[Any] = [exc.errno, exc.strerror] + ([str(exc.filename)] if exc.filename is not None else [])
        else:
            args = [a if isinstance(a, (str, int, float, bool)) or a is None else str(a) for a in exc.args]
        return {"op": "result", "id": cid, "ok": False, "exc_type": cls.__name__, "message": text, "args": args}
    return {"op": "result", "id": cid, "ok": False, "exc_type": "ToolError", "message": f"{cls.__name__}: {text}"}


class _Abort(Exception):
    """A run is ended by the host (write budget, CPU, close): `message` is what the model sees."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_CPUS = os.cpu_count() or 1  # all CPUs of the machine: more threads than this cannot run at once


def _threads_left(pid: int) -> bool:
    """Whether worker `pid` still has threads besides its main one (its /proc task entries, so raw clone()
    threads count too). A thread the program joined may take a moment to leave the list: looked at a few
    times. False when unknown."""
    for _ in range(40):
        try:
            if not pid or len(os.listdir(f"/proc/{pid}/task")) <= 1:
                return False
        except OSError:
            return False
        time.sleep(0.005)
    return True


def _join_lines(first: str | None, second: str) -> str:
    return f"{first}\n{second}" if first else second


class _Guard:
    """Checks made while a run is in progress: every interval while the host waits (10 ms, 1 ms near the
    write budget's limit: `WriteBudget.check_interval`), and on every frame.

    - write budget (the worker's `budget.WriteBudget`: what the worker wrote, its /tmp, the host tools and
      run_shell commands it called): checked after every tool call (at most every WRITE_CHECK_GAP) and at the
      `done` frame, so a program that keeps the host busy cannot outrun it, and at every check while the
      host waits (the overshoot: what the program writes in one interval);
    - CPU: the worker's CPU time since the run started (backs up RLIMIT_CPU, whose SIGXCPU a program can
      ignore), busy or not; /proc is read only once the wall time since the baseline, times the machine's
      CPUs, could hold half the allowance (a print(1) run reads it not at all);
    - threads and memory (anonymous and shared) of the worker, where no cgroup holds them (runlimits);
    - close(): a concurrent close ends the run at once.
    """

    def __init__(self, sb: Sandbox, worker: WorkerProcess) -> None:
        self.sb = sb
        self.worker = worker
        self.budget = worker.budget
        if self.budget is not None:
            self.budget.restart()  # from the reading taken when the last run ended (after its freeze)
        self.cpu = sb.limits.cpu()
        self.pid = worker.pid
        # The CPU baseline. A worker's first run counts from 0, the process's birth (no /proc read on the
        # hot path): its start-up CPU (~15 ms) is charged to the run, which is stricter, never looser.
        # Later runs (persistent) count from the reading taken when the last one ended, after the freeze.
        if not self.pid:
            self.cpu0: float | None = None
            self.since = 0.0
        elif worker.runs == 0:
            self.cpu0, self.since = 0.0, worker.started
        else:
            self.since = time.monotonic()
            self.cpu0 = worker.cpu_mark if worker.cpu_mark is not None else cpu_seconds(self.pid)
        self.interval = INTERVAL if self.budget is not None else CHECK_INTERVAL
        self.next_full = self.last_write = time.monotonic()

    def _check_budget(self) -> None:
        if self.budget is not None and self.budget.exceeded(hold=self.worker.hold):
            raise _Abort(self.budget.message())

    def tick(self) -> None:
        """The cheap check made on every frame and after every tool call."""
        now = time.monotonic()
        if now >= self.next_full:
            self.check()
        elif now - self.last_write >= WRITE_CHECK_GAP:
            self.last_write = now
            self._check_budget()

    def check(self) -> None:
        """Every check, now."""
        start = self.last_write = time.monotonic()
        if self.sb._closed:
            raise _Abort("Error: the sandbox was closed while the program ran")
        self._check_budget()
        # CPU time since the baseline is at most its wall time times the machine's CPUs; below half the
        # allowance there is nothing to read (tick accounting cannot add that much).
        if self.cpu0 is not None and (time.monotonic() - self.since) * _CPUS > (self.cpu + CPU_SLACK) / 2:
            used = cpu_seconds(self.pid)
            if used is not None and used - self.cpu0 > self.cpu + CPU_SLACK:
                raise _Abort(f"Error: the program used more than {self.cpu} s of CPU time")
        group = self.worker.group
        if group is not None and group.supervised and self.pid:
            over = group.over(usage.sample(self.pid, tree=False))
            if over:
                raise _Abort(f"Error: {over}")
        done = time.monotonic()
        self.interval = self.budget.check_interval(done - start) if self.budget is not None else CHECK_INTERVAL
        self.next_full = done + self.interval

    def finish(self) -> None:
        """The last check of a run, and the readings the next one (a persistent worker's) starts from."""
        self.check()
        if self.pid and self.sb.persistent:
            self.worker.cpu_mark = cpu_seconds(self.pid)


class _ToolThread:
    """Runs host tool calls off the run's thread, so the run's deadline holds while a tool works.

    A daemon thread fed by a queue (cheaper than a thread per call). When a run ends while a call is
    still running, the thread is abandoned: it finishes that call in the background, its result is
    discarded, and the next call gets a new thread.
    """

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue())
        self.thread = threading.Thread(target=self._loop, name="toolmode-sandbox-tool", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            try:
                item = self.queue.get()
                if item is None:
                    return
                fut, fn = item
                if fut.set_running_or_notify_cancel():
                    try:
                        fut.set_result(fn())
                    except BaseException as exc:  # handed to the run's thread, which decides
                        fut.set_exception(exc)
                del fut, fn, item
            except ToolCancelled:  # arrived after its call ended; only an abandoned thread gets it: end
                return

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.queue.put((fut, fn))
        return fut

    def stop(self) -> None:
        self.queue.put(None)


class Sandbox:
    """Runs model-written Python in a confined worker; see docs/CONTRACTS.md (Sandbox).

    Without persistence every run gets a worker that has never run anything: the used worker is killed
    when the run ends and a spare, started in the background, takes its place (so no run can change the
    interpreter the next run executes in). With persistence the worker is kept, and every frame carries
    the run's random id, so frames forged or left over from an earlier run are recognised and the worker
    is replaced.
    """

    def __init__(self, workspace: Path, limits: SandboxLimits = DEFAULT_LIMITS, policy: str = "auto",
                 persistent: bool = False, *, allow_env_in_workspace: bool = False) -> None:
        self.workspace = Path(workspace).resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        refusal = None if allow_env_in_workspace or policy == "none" else environment_refusal(self.workspace)
        if refusal:
            raise UnsafeWorkspace(refusal)
        self.limits = limits
        self.persistent = persistent
        self.tier = resolve_policy(policy)
        self.policy = self.tier.name
        self.spawned_pids: list[int] = []
        self._lock = threading.Lock()
        self._closed = False
        self._worker: WorkerProcess | None = None
        self._next: concurrent.futures.Future[WorkerProcess] | None = None  # the spare being started
        self._reaping: list[concurrent.futures.Future[None]] = []
        self._tools: _ToolThread | None = None
        self._state_lost = False  # persistent: the next run starts in a fresh namespace; tell the model
        self._worker = self._spawn()

    # ------------------------------------------------------------------ lifecycle

    def describe_policy(self) -> str:
        """One line for the start of a run: the tier and the limits in force."""
        lim = f"{self.limits.timeout:g} s, {self.limits.memory_mb} MiB"
        if self.tier.name == "none":
            return f"sandbox: {self.tier.describe()}, {lim}"
        return f"sandbox: {self.tier.describe()}, caps dropped, {lim}, no network"

    def _start(self) -> WorkerProcess:
        """Start a worker process, send it its policy, wait until it is confined and ready, and attach to it
        (runs on the spawner thread: a spare is ready by the time the next run takes it)."""
        ours, theirs = socket.socketpair()
        tier = self.tier
        plan = view.plan(str(self.workspace), shell=False, tmp_bytes=max(self.limits.max_write_mb, 1) * 1024 * 1024
                         ) if tier.namespaces else []
        # Tasks and memory of the worker as a whole (threads, kernel memory; root ignores RLIMIT_NPROC). The
        # worker joins them at `ready` (WorkerProcess.attach), before it runs anything of the model's.
        group = (runlimits.create(max_tasks=self.limits.max_tasks, memory_mb=self.limits.memory_mb)
                 if tier.name != "none" else None)
        try:
            parent = 0 if tier.builder == "bwrap" else os.getpid()
            argv, code_fd = boot.command(interpreter(), "worker")  # never worker.py from disk
            argv += [str(theirs.fileno()), str(parent)]
            if tier.builder == "bwrap":
                argv = tiers.bwrap_argv(plan, str(self.workspace)) + argv
            started = time.monotonic()
            proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(), code_fd), cwd=self.workspace,
                                    env=scrubbed_env(self.workspace, MALLOC_ARENA_MAX="2",
                                                     **({"TMPDIR": view.TMP} if view.has_private_tmp(plan) else {})),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    close_fds=True, start_new_session=True)
        except BaseException:
            ours.close()
            if group is not None:
                group.close()
            raise
        finally:
            theirs.close()
        self.spawned_pids.append(proc.pid)
        worker = WorkerProcess(proc, Channel(ours, max_in=self.limits.max_frame_bytes), tier, group, started)
        worker.protected = [op[1] for op in plan if op[0] == "bind" and op[1] in view.protected(str(self.workspace))]
        worker.private_tmp = view.has_private_tmp(plan)
        lim = self.limits
        cpu = lim.cpu()
        # One run per worker without persistence; with it, a ceiling for a long session (each run's own
        # limit is the soft limit, re-armed when the run starts, and the host's CPU check).
        cpu_hard = cpu * CPU_LIFETIME_RUNS + 2 if self.persistent else cpu + 3
        deadline = time.monotonic() + STARTUP_TIMEOUT
        try:
            program = (tiers.seccomp_program(worker=True, tier=tier, pid=2 if tier.namespaces else proc.pid)
                       if tier.name != "none" else "")
            worker.chan.send({"op": "init", "workspace": str(self.workspace), "tier": tiers.child_config(tier, plan),
                              "persistent": self.persistent, "seccomp": program,
                              "limits": {"cpu_seconds": cpu, "cpu_hard": cpu_hard, "memory_mb": lim.memory_mb,
                                         "file_size_mb": lim.file_size_mb, "open_files": lim.open_files,
                                         "max_tasks": lim.max_tasks}}, deadline=deadline)
            msg = worker.chan.recv(deadline=deadline)
            if msg.get("op") != "ready":
                raise SandboxUnavailable(f"the sandbox worker could not confine itself: {msg.get('message', msg)}")
            worker.attach(str(self.workspace), self.limits.max_write_mb)
        except ProtocolError as exc:
            why = worker.status() if isinstance(exc, ChannelClosed) else str(exc)
            worker.kill()
            raise SandboxUnavailable(f"the sandbox worker failed to start ({why})") from None
        except OSError as exc:
            worker.kill()
            raise SandboxUnavailable(f"the sandbox worker could not be measured: {exc}") from None
        except BaseException:
            worker.kill()
            raise
        worker.ready = True
        return worker

    def _spawn(self) -> WorkerProcess:
        return on_spawner(self._start).result()

    def _spawn_spare(self) -> None:
        """Start the next worker in the background; the next run picks it up (warm by then)."""
        if not self._closed and self._next is None:
            self._next = on_spawner(self._start)

    def _discard(self, worker: WorkerProcess) -> None:
        """Kill `worker` now; reap it in the background (close() waits for that)."""
        worker.signal_kill()
        self._reaping = [f for f in self._reaping if not f.done()]
        self._reaping.append(on_spawner(worker.kill))

    def _ready_worker(self) -> WorkerProcess:
        """A confined, ready worker (the spare if one was started)."""
        w = self._worker
        if w is not None and w.proc.poll() is not None:
            self._state_lost |= self.persistent and w.runs > 0
            self._discard(w)
            w = self._worker = None
        if w is None and self._next is not None:
            fut, self._next = self._next, None
            try:
                w = self._worker = fut.result()
            except Exception:
                w = None  # started again below; a second failure is reported
        if w is None:
            w = self._worker = self._spawn()
        return w

    def _wait_ready(self) -> None:
        """Block until the next run would start on a ready worker (used by the benchmark)."""
        with self._lock:
            if not self._closed:
                self._ready_worker()

    def _replace(self) -> None:
        """Kill the current worker and start the next one in the background, so it is warm by the next run."""
        if self._worker is not None:
            self._discard(self._worker)
            self._worker = None
        self._spawn_spare()

    def close(self) -> None:
        """Kill the workers; nothing is left running. Idempotent.

        A program running in another thread is not waited for: its worker is killed first (that run
        returns an error), then the run's thread is joined.
        """
        self._closed = True
        current, spare = self._worker, self._next  # read once: a run may be swapping them
        if current is not None:
            current.signal_kill()
        if spare is not None and spare.done() and spare.exception() is None:
            spare.result().signal_kill()
        with self._lock:
            if self._next is not None:
                with contextlib.suppress(Exception):
                    self._next.result().kill()
                self._next = None
            if self._worker is not None:
                self._worker.kill()
                self._worker = None
            for fut in self._reaping:
                with contextlib.suppress(Exception):
                    fut.result()
            self._reaping = []
            if self._tools is not None:
                self._tools.stop()
                self._tools.thread.join(CLOSE_WAIT)  # idle: it ends at once
                self._tools = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                if self._worker is not None:
                    self._worker.signal_kill()
                if self._next is not None:
                    self._next.add_done_callback(_kill_when_started)
        except Exception:
            pass

    # ------------------------------------------------------------------ runs

    def run(self, code: str, stubs: list[StubSpec], call: Callable[[str, dict[str, Any]], Any],
            deadline: float | None = None, *, skip_empty_tool_defs: bool = False) -> CodeResult:
        """Run `code` in the worker with `stubs` as functions; tool calls go to `call(name, kwargs)`.
        `skip_empty_tool_defs`: the program's top-level `def <tool>(...): pass` definitions are left out, so the
        tools are called (small models declare the tools before calling them; a strong model's empty definition
        may be a deliberate dry run, so the mode asks for this only with the small-model prompts).

        `deadline` (a `time.monotonic()` value, e.g. the agent run's time budget) ends the program
        earlier than `limits.timeout` when it comes first.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            timeout = self.limits.timeout
            if deadline is not None and deadline < time.monotonic() + timeout:
                timeout = max(0.0, deadline - time.monotonic())
            deadline = time.monotonic() + timeout
            worker = self._ready_worker()
            if worker.runs == 0 and worker.tier.namespaces and worker.protected != view.protected(str(self.workspace)):
                # `.git` or `runs/` appeared after this worker was started (the first trace of a session makes
                # runs/): start one that binds them read-only, before anything of the model's runs.
                self._replace()
                worker = self._ready_worker()
            if worker.chan.pending() or not self._idle(worker, deadline):
                # Bytes from an earlier run (e.g. the rest of one that forged its `done`): not trusted.
                self._state_lost |= self.persistent and worker.runs > 0
                self._replace()
                worker = self._ready_worker()
            lost, self._state_lost = self._state_lost, False
            run_id = secrets.token_hex(16)
            state = _RunState({s.name for s in stubs}, self.limits.max_tool_calls)
            try:
                guard = _Guard(self, worker)  # from the readings taken when the last run ended (after the stop)
                worker.thaw()
                worker.chan.send({"op": "run", "run": run_id, "code": code, "stubs": [s.to_json() for s in stubs],
                                  "max_output": self.limits.max_output, "skip_stubs": skip_empty_tool_defs}, deadline)
                worker.runs += 1
                while True:
                    msg = self._recv(worker, deadline, guard)
                    op = msg.get("op")
                    if msg.get("run") != run_id:
                        raise ProtocolError(f"{str(op)[:40]!r} frame without this run's id")
                    if op == "call":
                        reply = self._call(msg, state, call, deadline, guard)
                        deadline += state.held  # a person decided on the call meanwhile: that time is not the program's
                        state.held = 0.0
                        guard.tick()  # on every call frame: fast write_file floods, a busy program, a big write
                        self._send_reply(worker, reply, deadline)
                    elif op == "done":
                        # Persistent: nothing of the model's runs until the next run frame (timers, handlers,
                        # threads); what ran between `done` and the stop is charged by the last check here.
                        # Threads the program joined may take a moment to leave: looked for before the stop.
                        left = self.persistent and (msg.get("threads") is True or _threads_left(guard.pid))
                        frozen = not self.persistent or left or worker.freeze()
                        guard.finish()  # a program quicker than one check interval is held to the budget too
                        result = self._finish(code, msg, state, lost)
                        if guard.budget is not None:
                            result.written = guard.budget.last_used
                        if self.persistent and self._worker is worker and (left or not frozen):
                            # A thread left running would write and use CPU between runs, unchecked.
                            self._replace()
                            result = dataclasses.replace(result, reset=True, error=_join_lines(result.error, (
                                "Note: the program left threads running; they were stopped and the namespace was "
                                "reset (variables are gone). Join threads before the program ends.")))
                        if not self.persistent:
                            self._replace()  # never reuse a worker a program has run in
                        return result
                    else:
                        raise ProtocolError(f"unexpected frame {str(op)[:40]!r}")
            except FrameTimeout:
                self._replace()
                return self._failure(f"Error: timed out after {timeout:.3g} s", state, timed_out=True)
            except _Abort as exc:
                self._replace()
                return self._failure(exc.message, state)
            except ChannelClosed:
                why = worker.status()
                self._replace()
                if self._closed:
                    return self._failure("Error: the sandbox was closed while the program ran", state)
                return self._failure(f"Error: the program ended the sandbox worker: it {why}", state)
            except ProtocolError as exc:
                self._replace()
                return self._failure(f"Error: the program broke the sandbox protocol ({exc})", state)
            except BaseException:
                self._replace()  # e.g. KeyboardInterrupt inside a host tool: the worker's state is unknown
                raise

    def _idle(self, worker: WorkerProcess, deadline: float) -> bool:
        """Whether a persistent worker that ran before waits for its next frame: thawed, it answers a ping
        before anything else. A program that forged its `done` was stopped in the middle; once thawed it
        finishes, and the worker's real `done` (or whatever the program sends) comes first: not idle."""
        if not worker.frozen:
            return True
        nonce = secrets.token_hex(8)
        worker.thaw()
        try:
            worker.chan.send({"op": "ping", "nonce": nonce}, deadline)
            reply = worker.chan.recv(deadline)
        except ProtocolError:
            return False
        return reply.get("op") == "pong" and reply.get("nonce") == nonce

    def _recv(self, worker: WorkerProcess, deadline: float, guard: _Guard) -> dict[str, Any]:
        """The worker's next frame, checking the guard every interval (guard.interval) while waiting."""
        while True:
            try:
                return worker.chan.recv(min(deadline, time.monotonic() + guard.interval))
            except FrameTimeout:
                if time.monotonic() >= deadline:
                    raise
                guard.check()

    def _send_reply(self, worker: WorkerProcess, reply: dict[str, Any], deadline: float) -> None:
        """Send a tool's result, refusing one larger than max_frame_bytes (the program gets a ToolError)."""
        limit = self.limits.max_frame_bytes
        value = reply.get("value")
        size = len(value) if isinstance(value, (str, bytes)) else 0  # JSON is at least this long: skip encoding
        data = b""
        if size <= limit:
            try:
                data = encode(reply, default=_json_default)
            except (ValueError, TypeError, RecursionError) as exc:  # e.g. a circular structure
                data = encode(_error_reply(reply["id"], message=f"the result cannot be sent as JSON: {exc}"))
            size = len(data) - 4
        if size > limit:
            data = encode(_error_reply(reply["id"], message=(
                f"result of {size:,} bytes exceeds the {limit:,}-byte limit; filter or paginate on the host side")))
        worker.chan.send_bytes(data, deadline)

    def _failure(self, message: str, state: _RunState, timed_out: bool = False) -> CodeResult:
        if state.cancelled:
            message += f"; the host tool {state.cancelled!r} was still running: it was told to stop, its result is discarded"
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
        repaired = msg.get("repaired")
        repair_note = None
        if isinstance(repaired, dict) and isinstance(repaired.get("note"), str) and isinstance(repaired.get("code"), str):
            repair_note = escape_control(repaired["note"][:300])
            # Error lines refer to the program that ran. A repair adds at most one character per cut string
            # (worker.compile_program): anything longer is not trusted as the program (the frame is the worker's).
            if len(repaired["code"]) <= len(code) + REPAIR_SLACK:
                code = repaired["code"]
        err_text = line = None
        if error is not None:
            line = error.get("line")
            line = line if isinstance(line, int) and not isinstance(line, bool) else None
            column = error.get("column")
            column = column if isinstance(column, int) and not isinstance(column, bool) else None
            err_text = format_error(code, line, str(error.get("type", "Exception"))[:200], str(error.get("message", "")),
                                    column)
        if lost:
            note = ("Note: the previous worker had stopped or reached its CPU ceiling, so this program ran in a "
                    "fresh namespace (variables from earlier runs are gone).")
            err_text = f"{note}\n{err_text}" if err_text else note
        if msg.get("retire") is True and self.persistent:
            self._state_lost = True  # the next run starts in a fresh namespace and is told so
            self._replace()
        skipped, redefined = (_tool_names(msg.get(key), state.allowed) for key in ("skipped", "redefined"))
        return CodeResult(output=text, error=err_text, line=line, truncated=truncated, calls=state.calls, reset=lost,
                          repaired=repair_note, skipped=skipped, redefined=redefined)

    def _call(self, msg: dict[str, Any], state: _RunState, call: Callable[[str, dict[str, Any]], Any],
              deadline: float, guard: _Guard) -> dict[str, Any]:
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
        ok, value = self._call_tool(call, name, args, deadline, guard, state)
        if not ok:
            return _error_reply(cid, value)
        if isinstance(value, Handles):
            specs = [s for s in value if isinstance(s, StubSpec)]
            state.allowed.update(s.name for s in specs)
            return {"op": "result", "id": cid, "ok": True, "handles": [s.to_json() for s in specs]}
        return {"op": "result", "id": cid, "ok": True, "value": value}

    def _call_tool(self, call: Callable[[str, dict[str, Any]], Any], name: str, args: dict[str, Any],
                   deadline: float, guard: _Guard, state: _RunState) -> tuple[bool, Any]:
        """Run `call(name, args)` on the tool thread, waiting at most until the run's deadline.

        Returns (True, value) or (False, the Exception the tool raised); raises FrameTimeout (deadline)
        or _Abort (guard).
        """
        if self._tools is None:
            self._tools = _ToolThread()
        budget = guard.budget
        if budget is None:
            scope = CallScope(name, deadline)
        else:  # run_shell started from the program is bounded by, and charged to, this run's budget
            scope = CallScope(name, deadline, write_left=lambda: budget.limit - budget.last_used, charge=budget.charge)
        ctx = contextvars.copy_context()
        ctx.run(callscope.enter, scope)

        def measured() -> Any:
            """The tool, charged with what its own thread wrote (write_file and the like)."""
            before = usage.written("thread-self")
            try:
                return ctx.run(call, name, args)
            finally:
                after = usage.written("thread-self")
                if budget is not None and before is not None and after is not None:
                    budget.charge(after - before)

        fut = self._tools.submit(measured)
        try:
            while True:
                left = deadline + scope.held_now() - time.monotonic()  # time held for an approval does not count
                if left <= 0:
                    raise FrameTimeout("deadline passed while a host tool ran")
                try:  # TimeoutError here means only that the wait expired (a tool's own is returned)
                    exc = fut.exception(timeout=min(left, guard.interval))
                    break
                except TimeoutError:
                    guard.check()
        except BaseException:
            if not fut.cancel():  # running: stop it; whatever cannot be stopped ends on an abandoned thread
                callscope.abandon(scope, self._tools.thread)
                self._tools.stop()
                self._tools = None
                state.cancelled = name
            raise
        finally:
            state.held += scope.held
        if exc is None:
            return True, fut.result()
        if isinstance(exc, Exception):
            return False, exc
        raise exc  # KeyboardInterrupt, SystemExit: not the program's business


def _tool_names(value: Any, allowed: set[str]) -> tuple[str, ...]:
    """The tool names in a done frame's list (the worker's word: only names of this run's tools, at most 50)."""
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(n for n in value if isinstance(n, str) and n in allowed))[:50]


@dataclasses.dataclass
class _RunState:
    allowed: set[str]
    budget: int
    requests: int = 0
    calls: int = 0
    cancelled: str = ""  # a host tool still running when the run ended
    held: float = 0.0  # seconds the last call waited for a person's decision (toolmode.approval)
