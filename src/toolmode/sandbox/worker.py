"""The code worker, started by the host (never forked from it) from an in-memory copy of its code (see
boot.py): `python -I -S -B -c BOOTSTRAP ... <socket-fd> <host-pid>`.

It receives its policy in the first frame, finishes its world for the tier (namespaces without bubblewrap:
`namespaces.enter`; under bubblewrap: the device binds sealed and an init made, so the worker is pid 2),
confines itself (rlimits, nice, capabilities, Landlock, the seccomp program the host built), answers `ready`,
then serves `run` frames: executes the program with stdout/stderr captured and tools as stubs that call back
to the host over the same socket, and answers `done` (a persistent worker also answers `ping` between runs,
and disarms its timers and restores its handlers after each). Nothing here is trusted by the host: the
program can reach every object in this process; containment is the OS policy.

Start-up time matters (a fresh worker per run): no `typing`, `traceback`, `threading`, `signal` (`_signal`
is built in), `json` or `re` is imported (`socket` stays: the channel is a `socket.socket`, as the
adversarial corpus expects);
`caps`, `confine`, `namespaces` and `protocol` are already in sys.modules, put there by the bootstrap.
"""

from __future__ import annotations

import _signal
import _thread
import builtins
import io
import os
import resource
import socket
import sys
import time

import caps
import confine
import namespaces
import protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_HOST_FRAME = 1 << 30
# The clock RLIMIT_CPU is checked against: the process's CPUCLOCK_PROF clock, MAKE_PROCESS_CPUCLOCK(0,
# CPUCLOCK_PROF) = (~0 << 3) | 0. It is utime + stime as sampled at each timer tick, not the scheduler's exact
# runtime that getrusage() and process_time() report: under CPU contention the two drift apart by a tenth or
# more, and the drift adds up over a persistent worker's runs.
PROF_CLOCK = -8
TICK_SKEW = 0.25  # a run's share of that drift the soft limit leaves room for (the host's exact check bounds it)


class ToolError(Exception):
    """A tool failed on the host with an exception that is not a Python builtin: `<Type>: <message>`."""


class ToolDenied(PermissionError):
    """A tool call was refused by the user or an approval policy; the tool did not run."""


# Names a small model puts beside its tools because its request listed them as tools: the tool that runs this
# program and act_first's final_answer (the 1.5B sent `from tools import run_code, final_answer` in 6 programs of
# one M3ToolEval episode, each an ImportError; issue 18).
CODE_TOOL = "run_code"


def final_answer(answer: Any) -> Any:
    """Show the final answer: printed as `Answer: <answer>` (then reply with it); returns `answer`."""
    print(f"Answer: {answer}")
    return answer


def run_code(*args: Any, **kwargs: Any) -> Any:
    """Not callable here: run_code is the tool that runs this program."""
    raise RuntimeError("run_code is the tool that runs this program: inside it, call the tools directly")


def tools_module(stubs: dict[str, Any]) -> Any:
    """The module `tools`: the run's tools, `final_answer` and `run_code` (see above); any other name is an
    AttributeError (so `hasattr` works), and `from tools import <it>`'s ImportError lists the tools
    (`_describe`)."""
    module = type(sys)("tools", "The tools of this run (also defined as globals).")
    extra = {"final_answer": final_answer, CODE_TOOL: run_code}

    def __getattr__(name: str) -> Any:
        if name in extra:
            return extra[name]
        raise AttributeError(f"module 'tools' has no attribute {name!r}")

    vars(module).update(stubs)
    vars(module)["__getattr__"] = __getattr__
    return module


class Capture(io.TextIOBase):
    """stdout and stderr together: keeps the first `limit` characters and counts the rest."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.dropped = 0

    def write(self, s: str) -> int:  # type: ignore[override]
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        room = self.limit - self.size
        if room > 0:
            part = s[:room]
            self.parts.append(part)
            self.size += len(part)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"tool arguments must be JSON values; got {type(obj).__name__}")


class Rpc:
    """Tool calls from the program: one request frame, then wait for the result with the same id.

    Every frame to the host carries the id of the current run (`run_id`, chosen by the host per run);
    outside a run (a thread left over in a persistent worker) no call can be made.
    """

    def __init__(self, chan: protocol.Channel) -> None:
        self.chan = chan
        self.lock = _thread.allocate_lock()  # not threading: its import is start-up time
        self.next_id = 0
        self.run_id: str | None = None

    def call(self, name: str, kwargs: dict[str, Any]) -> Any:
        with self.lock:
            if self.run_id is None:
                raise ToolError(f"{name}(): tools can be called only while a program runs")
            self.next_id += 1
            cid = self.next_id
            try:
                self.chan.send({"op": "call", "run": self.run_id, "id": cid, "name": name, "args": kwargs},
                               default=_json_default)
                while True:
                    msg = self.chan.recv()
                    if msg.get("op") == "result" and msg.get("id") == cid:
                        break
            except protocol.ProtocolError as exc:
                raise ToolError(f"{name}(): the connection to the host is broken ({exc})") from None
            except ValueError as exc:
                raise TypeError(f"{name}(): arguments cannot be sent as JSON: {exc}") from None
        if msg.get("ok"):
            if "handles" in msg:
                return [ToolHandle(spec, self) for spec in msg["handles"]]
            return msg.get("value")
        raise _exception(msg) from None


def _exception(msg: dict[str, Any]) -> BaseException:
    name = str(msg.get("exc_type", "ToolError"))
    message = str(msg.get("message", ""))
    if name == "ToolDenied":
        return ToolDenied(message)
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and name != "ToolError":
        try:
            return cls(*msg.get("args", [message]))
        except Exception:
            return cls(message)
    return ToolError(message)


def make_stub(spec: dict[str, Any], rpc: Rpc) -> Any:
    """A plain function that calls the tool on the host; positional arguments map to spec['params']."""
    name = str(spec["name"])
    params = [str(p) for p in spec.get("params", [])]
    varargs = spec.get("varargs")
    if varargs in params:  # `f(a, *rest)`: positional arguments after `a` are collected into `rest`
        params = params[: params.index(varargs)]

    def stub(*args: Any, **kwargs: Any) -> Any:
        if varargs in spec.get("params", []):
            if varargs in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{varargs}'")
            kwargs[varargs] = list(args[len(params):])  # type: ignore[index]  # a str here: it is in params
            args = args[: len(params)]
        if len(args) > len(params):
            raise TypeError(f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
        for param, value in zip(params, args, strict=False):
            if param in kwargs:
                raise TypeError(f"{name}() got multiple values for argument '{param}'")
            kwargs[param] = value
        return rpc.call(name, kwargs)

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = f"{spec.get('signature', name)}\n\n{spec.get('doc', '')}".strip()
    return stub


class ToolHandle:
    """A tool returned by search: call it like a function; describe() gives its signature and docs."""

    __slots__ = ("name", "_signature", "_doc", "_fn")

    def __init__(self, spec: dict[str, Any], rpc: Rpc) -> None:
        self.name = str(spec["name"])
        self._signature = str(spec.get("signature", self.name))
        self._doc = str(spec.get("doc", ""))
        self._fn = make_stub(spec, rpc)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def describe(self) -> str:
        return f"{self._signature}\n\n{self._doc}".strip()

    def __repr__(self) -> str:
        return self._signature


def _describe(exc: BaseException) -> dict[str, Any]:
    line = None
    tb = exc.__traceback__
    while tb is not None:  # the innermost frame of the program's own code
        if tb.tb_frame.f_code.co_filename == "<code>":
            line = tb.tb_lineno
        tb = tb.tb_next
    try:
        message = str(exc)
    except Exception:
        message = "<exception message could not be printed>"
    tools = sys.modules.get("tools")
    if isinstance(exc, ImportError) and exc.name == "tools" and tools is not None:  # `from tools import nope`
        names = sorted(n for n, v in vars(tools).items() if callable(v) and not n.startswith("_"))
        message += f"; the tools are: {', '.join(names) or 'none'}"
    return {"type": type(exc).__name__, "message": message, "line": line}


def charged_cpu() -> float:
    """CPU seconds the kernel has charged this process for RLIMIT_CPU (PROF_CLOCK); getrusage() where that
    clock cannot be read."""
    try:
        return time.clock_gettime(PROF_CLOCK)
    except OSError:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime


class Runner:
    """Executes programs in a fresh (or, if persistent, the kept) namespace."""

    def __init__(self, rpc: Rpc, persistent: bool, cpu_seconds: int, cpu_hard: int) -> None:
        self.rpc = rpc
        self.persistent = persistent
        self.cpu_seconds = cpu_seconds
        self.cpu_hard = cpu_hard
        self.ns: dict[str, Any] = {}

    def _next_cpu_limit(self) -> int:
        """The CPU soft limit that gives a run starting now its full `cpu_seconds`. rlimits count whole seconds
        of the process's lifetime on the kernel's tick-sampled clock (`charged_cpu`), so the limit moves with
        what earlier runs were charged on that clock, plus TICK_SKEW for this run's own drift from exact time."""
        return int(charged_cpu() + self.cpu_seconds * (1 + TICK_SKEW)) + 1

    def _arm_cpu_limit(self) -> None:
        """Per-run CPU soft limit, set when the run starts (the hard ceiling cannot be raised again)."""
        resource.setrlimit(resource.RLIMIT_CPU, (min(self._next_cpu_limit(), self.cpu_hard), self.cpu_hard))

    def run(self, msg: dict[str, Any]) -> dict[str, Any]:
        code = str(msg["code"])
        run_id = str(msg.get("run", ""))
        self._arm_cpu_limit()
        self.rpc.run_id = run_id
        capture = Capture(int(msg.get("max_output", 4000)))
        if not self.persistent or not self.ns:
            self.ns = {"__name__": "__main__", "__builtins__": builtins}
        ns = self.ns
        ns["ToolError"] = ToolError
        ns["ToolDenied"] = ToolDenied
        ns["final_answer"] = final_answer  # a tool of the same name (below) takes its place
        ns[CODE_TOOL] = run_code
        stubs = {str(spec["name"]): make_stub(spec, self.rpc) for spec in msg.get("stubs", [])}
        ns.update(stubs)
        # Small models often write `from tools import find_flights` (the 1.5B on M3ToolEval: 4 of 15 episodes, 6 of
        # 16 programs; issue 18): the tools are importable from a module of that name as well.
        sys.modules["tools"] = tools_module(stubs)
        error = None
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        repaired = None
        skipped: list[str] = []
        redefined: list[str] = []
        try:
            compiled, repaired = compile_program(code)
            if any(f"def {n}" in code or f"{n} =" in code or f"{n}=" in code for n in stubs):  # else no AST read
                try:
                    compiled, skipped, redefined = tool_definitions(repaired["code"] if repaired else code, compiled,
                                                                    set(stubs), bool(msg.get("skip_stubs")))
                except Exception:  # noqa: BLE001 - a help for small models: never the reason a program fails
                    skipped, redefined = [], []
        except SyntaxError as exc:
            error = {"type": type(exc).__name__, "message": str(exc.msg), "line": exc.lineno, "column": exc.offset}
        else:
            try:
                exec(compiled, ns)
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    error = _describe(exc)
            except BaseException as exc:
                error = _describe(exc)
                exc.__traceback__ = None
        finally:
            sys.stdout, sys.stderr = saved
        leftover_threads = _thread._count() > 0  # type: ignore[attr-defined]
        # Retire when the hard ceiling cannot give the next run its full CPU allowance (the host then
        # tells the model that the namespace was reset).
        retire = (leftover_threads and not self.persistent) or self._next_cpu_limit() > self.cpu_hard
        done = {"op": "done", "run": run_id, "output": capture.text(), "dropped": capture.dropped, "error": error,
                "retire": retire, "threads": leftover_threads}
        if repaired is not None:
            done["repaired"] = repaired
        if skipped:
            done["skipped"] = skipped
        if redefined:
            done["redefined"] = redefined
        return done


def tool_definitions(code: str, compiled: Any, tools: set[str], skip: bool) -> tuple[Any, list[str], list[str]]:
    """With `skip`, the program without its top-level definitions of tool names whose body is empty (`pass`,
    `...`, a docstring): small models declare the tools they saw before calling them (the 1.5B: `def
    find_flights(...): pass`, so every call returned None). Line numbers stay the program's. Also the tool
    names the program gives code of its own at the top level (`def`, `name = lambda ...`; an empty `def` too
    without `skip`): the 1.5B rewrote the trade tools as lambdas and called none. Returns (code object,
    names skipped, names redefined)."""
    import ast

    tree = ast.parse(code, "<code>")
    kept, skipped, redefined = [], [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in tools:
            if skip and _empty(node.body):
                skipped.append(node.name)
                continue
            redefined.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            redefined += [t.id for t in targets if isinstance(t, ast.Name) and t.id in tools]
        kept.append(node)
    if not skipped:
        return compiled, [], redefined
    tree.body = kept
    return compile(tree, "<code>", "exec"), skipped, redefined


def _empty(body: list[Any]) -> bool:
    import ast

    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
               for s in body)


def compile_program(code: str) -> tuple[Any, dict[str, str] | None]:
    r"""compile() the program; when it does not parse, try the two slips small models make when they write a
    program inside a JSON string, and run the first variant that parses: a string escape written in the JSON
    as `\n` where `\\n` was needed (so the decoded program has a real line break inside a one-line string)
    becomes the escape again, and escaped quotes left outside any string (`d[\"key\"]`) become plain quotes.
    Returns the code object and, for a variant, `{"note": what was changed, "code": the program that ran}`;
    raises the original SyntaxError when no variant parses."""
    try:
        return compile(code, "<code>", "exec"), None
    except SyntaxError as exc:
        first = exc
    for variant, what in _variants(code):  # made one at a time: the first that parses is run
        if variant is None:
            continue
        text, compiled = variant
        if compiled is None:
            try:
                compiled = compile(text, "<code>", "exec")
            except (SyntaxError, ValueError):
                continue
        note = f"the program did not parse (line {first.lineno}: {first.msg}); it ran with {what}"  # spec.REPAIRED_WITH
        return compiled, {"note": note, "code": text}
    raise first


def _variants(code: str) -> Any:
    """(program, its code object or None when not compiled yet) or None, and what was changed; lazily."""
    rejoined = "each line break inside a one-line string written as \\n"
    yield _rejoin_strings(code), rejoined
    unquoted = code.replace('\\"', '"').replace("\\'", "'")
    if unquoted != code:
        yield (unquoted, None), 'each \\" read as a plain quote'
        yield _rejoin_strings(unquoted), f'each \\" read as a plain quote and {rejoined}'
    yield _split_compound(code), "each for / if / while after ';' moved to its own line"


def _split_compound(code: str) -> tuple[str, None] | None:
    """`code` with each top-level `; for ...:` / `; if ...:` / `; while ...:` of a line moved to a line of its own
    (same indentation): a block cannot follow `;` (the 1.5B joins a whole program onto one line that way);
    None when there is none. Imports tokenize only here, on a program that did not parse."""
    import tokenize

    out, changed = [], False
    for line in code.split("\n"):
        cuts, depth, previous = [], 0, None
        try:
            for tok in tokenize.generate_tokens(io.StringIO(line).readline):
                if tok.type == tokenize.OP and tok.string in ("(", "[", "{"):
                    depth += 1
                elif tok.type == tokenize.OP and tok.string in (")", "]", "}"):
                    depth -= 1
                elif (tok.type == tokenize.NAME and tok.string in ("for", "if", "while") and depth == 0
                      and previous is not None and previous.string == ";"):
                    cuts.append(previous.start[1])
                previous = tok
        except (tokenize.TokenError, SyntaxError):
            pass  # a line that does not tokenize to its end: the cuts found before the problem
        if not cuts:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        starts = [0, *(c + 1 for c in cuts)]
        ends = [*cuts, len(line)]
        out.extend([line[:ends[0]].rstrip(), *(indent + line[a:b].strip() for a, b in zip(starts[1:], ends[1:], strict=True))])
        changed = True
    return ("\n".join(out), None) if changed else None


def _rejoin_strings(code: str, limit: int = 50) -> tuple[str, Any] | None:
    r"""`code` with each line break that cuts a one-line string literal written as the escape `\n`, and its
    code object; None when there is no such cut or the result still does not parse (at most `limit` cuts)."""
    lines = code.split("\n")
    for _ in range(limit):
        text = "\n".join(lines)
        try:
            return text, compile(text, "<code>", "exec")
        except SyntaxError as exc:
            line = exc.lineno
            if not str(exc.msg).startswith("unterminated string literal") or not line or line >= len(lines):
                return None
            lines[line - 1:line + 1] = [lines[line - 1] + "\\n" + lines[line]]
    return None


def _no_processes(command: Any = None) -> int:
    """os.system under the seccomp policy: it would fail silently; say why in the output, same return code."""
    sys.stderr.write("os.system: no processes here: use run_shell()\n")
    return 127 << 8


def _nproc(tier: dict[str, Any], max_tasks: int) -> int | None:
    """RLIMIT_NPROC for the worker's threads: exact per run in its own user namespace (Linux >= 5.14 counts
    tasks per user namespace, the namespace's init and the waiter too: OWN_TASKS; uid 0 is exempt and held by
    the cgroup or the host's sampling), else unset."""
    return max_tasks + confine.OWN_TASKS if tier.get("name") == confine.NAMESPACES and os.getuid() != 0 else None


def main() -> None:
    """Finish the world for the tier, confine, report ready, serve runs until the channel closes."""
    fd, parent = int(sys.argv[1]), int(sys.argv[2])
    if parent:
        caps.die_with_parent(parent)
    sock = socket.socket(fileno=fd)
    chan = protocol.Channel(sock, max_in=MAX_HOST_FRAME)
    init = chan.recv()
    try:
        tier = init["tier"]
        if tier.get("builder") == "unshare":
            namespaces.enter(tier["plan"])
        elif tier.get("builder") == "bwrap":
            namespaces.seal_devices(tier.get("seal", []))
            namespaces.start_init()
        limits = init["limits"]
        cpu = int(limits["cpu_seconds"])
        cpu_hard = int(limits.get("cpu_hard", cpu + 2))
        confine.set_limits(cpu_soft=cpu + 1, cpu_hard=cpu_hard, memory_mb=limits["memory_mb"],
                           file_size_mb=limits["file_size_mb"], open_files=limits["open_files"],
                           nproc=_nproc(tier, int(limits.get("max_tasks", 128))))
        os.chdir(init["workspace"])
        program = bytes.fromhex(init["seccomp"]) if init.get("seccomp") else None  # built by the host
        applied = (confine.lock_down(init["workspace"], worker=True, tier=tier["name"], program=program)
                   if tier["name"] != "none" else {})
        compile("pass", "<code>", "exec")  # the first compile() of a process sets up the parser (~0.7 ms)
    except Exception as exc:  # fail closed: report and never run code
        chan.send({"op": "fatal", "message": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    if tier["name"] != "none":  # processes are refused; os.system alone would return 127 << 8 silently
        os.system = _no_processes
    persistent = bool(init.get("persistent"))
    runner = Runner(Rpc(chan), persistent, cpu, cpu_hard)
    if tier.get("builder"):
        _warm_up(runner)
    try:
        confine.lower_priority()
    except OSError as exc:  # fail closed, as for the rest of the confinement
        chan.send({"op": "fatal", "message": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    chan.send({"op": "ready", **applied})
    handlers = _handlers() if persistent else {}
    while True:
        try:
            msg = chan.recv()
        except protocol.ProtocolError:
            os._exit(0)
        except Exception:  # a persistent program's signal handler raised while the worker waited
            continue
        if msg.get("op") == "ping":  # a persistent worker between runs: the host checks it is idle
            try:
                chan.send({"op": "pong", "nonce": str(msg.get("nonce", ""))})
            except protocol.ProtocolError:
                os._exit(3)
            continue
        if msg.get("op") != "run":
            continue
        done = runner.run(msg)
        if persistent:
            _quiet_between_runs(handlers)
        try:
            with runner.rpc.lock:  # after a call still in flight from a leftover thread; none can start after
                runner.rpc.run_id = None
                chan.send(done, default=str)
        except protocol.ProtocolError:
            os._exit(3)  # the program closed or broke the channel
        if done["retire"]:
            os._exit(0)


def _warm_up(runner: Runner) -> None:
    """Run an empty program and code a frame both ways once, before `ready`. In the namespaces tier the worker
    is a fork of the namespace's init and shares its memory copy-on-write: a run's first writes would each copy
    a page (28 page faults, 0.2 ms of a print(1) round trip measured in a VM); a spare pays them here instead."""
    runner.run({"op": "run", "run": "", "code": "print(end='')", "stubs": [], "max_output": 1})
    protocol.decode(protocol.encode({"op": "done", "run": "", "output": "", "dropped": 0, "error": None})[4:])
    runner.ns = {}
    runner.rpc.run_id = None


def _handlers() -> dict[int, Any]:
    """The signal handlers the worker started with (those Python can read)."""
    found = {}
    for sig in range(1, _signal.NSIG):
        try:
            found[sig] = _signal.getsignal(sig)
        except (OSError, ValueError):
            continue
    return found


def _quiet_between_runs(handlers: dict[int, Any]) -> None:
    """A persistent worker's run is over: disarm its interval timers and put back the handlers it started with.
    Belt and braces: the host stops the worker (SIGSTOP) until the next run, which is the wall, since code
    that persists can change this very function."""
    for which in (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF):
        try:  # noqa: SIM105 (contextlib is not imported: start-up time)
            _signal.setitimer(which, 0, 0)
        except (OSError, ValueError):
            pass
    for sig, handler in handlers.items():
        try:  # noqa: SIM105
            if _signal.getsignal(sig) is not handler:
                _signal.signal(sig, handler)
        except (OSError, ValueError, TypeError):
            pass


if __name__ == "__main__":
    main()
