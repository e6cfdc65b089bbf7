"""The Sandbox contract: stubs, tool errors, handles, output, errors, timeouts, persistence, policies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmode.sandbox import (
    CodeResult,
    Handles,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
    StubSpec,
    landlock,
)
from toolmode.sandbox.spec import EMPTY_OUTPUT

needs_landlock = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")
LIMITS = SandboxLimits(timeout=2, max_output=200)

ADD = StubSpec("add", ["a", "b"], "add(a: int, b: int) -> int", "Add two numbers.")
FAIL = StubSpec("fail", ["kind"], "fail(kind: str) -> None", "Raise an exception of the given kind.")
SEARCH = StubSpec("search_tools", ["query", "k"], "search_tools(query: str, k: int = 5) -> list[Handle]", "Find tools.")
HIDDEN = StubSpec("secret_tool", ["x"], "secret_tool(x: int) -> int", "Double x. Full documentation here.")


class CustomError(Exception):
    pass


def host_call(name: str, kwargs: dict[str, Any]) -> Any:
    if name == "add":
        return kwargs["a"] + kwargs["b"]
    if name == "fail":
        kind = kwargs["kind"]
        if kind == "missing":
            raise FileNotFoundError(2, "No such file or directory", "nope.txt")
        if kind == "value":
            raise ValueError("bad value")
        raise CustomError("custom trouble")
    if name == "search_tools":
        return Handles([HIDDEN])
    if name == "secret_tool":
        return kwargs["x"] * 2
    raise AssertionError(f"host called with {name}")


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(tmp_path / "ws", LIMITS) as sb:
        yield sb


def run(sb: Sandbox, code: str, stubs: list[StubSpec] | None = None) -> CodeResult:
    return sb.run(code, [ADD, FAIL, SEARCH] if stubs is None else stubs, host_call)


@needs_landlock
def test_stub_positional_and_keyword_arguments(sandbox: Sandbox) -> None:
    res = run(sandbox, "print(add(1, 2), add(a=3, b=4), add(5, b=6))")
    assert res.text() == "3 7 11"
    assert res.calls == 3 and res.error is None


@needs_landlock
def test_stub_argument_errors_are_python_errors(sandbox: Sandbox) -> None:
    res = run(sandbox, "try:\n    add(1, 2, 3)\nexcept TypeError as e:\n    print('TypeError', e)")
    assert res.text() == "TypeError add() takes 2 positional arguments but 3 were given"


@needs_landlock
def test_builtin_tool_exceptions_keep_their_type(sandbox: Sandbox) -> None:
    code = (
        "try:\n    fail('missing')\nexcept FileNotFoundError as e:\n    print(type(e).__name__, e.errno, e.filename)\n"
        "try:\n    fail('value')\nexcept ValueError as e:\n    print('ValueError', e)\n"
    )
    assert run(sandbox, code).text() == "FileNotFoundError 2 nope.txt\nValueError bad value"


@needs_landlock
def test_other_tool_exceptions_become_tool_error(sandbox: Sandbox) -> None:
    res = run(sandbox, "try:\n    fail('custom')\nexcept ToolError as e:\n    print('caught:', e)")
    assert res.text() == "caught: CustomError: custom trouble"
    res = run(sandbox, "x = 1\nfail('custom')")
    assert res.text() == "Error at line 2: fail('custom')\nToolError: CustomError: custom trouble"


@needs_landlock
def test_handles_are_callable_and_describe_themselves(sandbox: Sandbox) -> None:
    code = "hs = search_tools('double', 3)\nh = hs[0]\nprint(repr(h))\nprint(h(21))\nprint(h.describe())"
    res = run(sandbox, code)
    assert res.text() == (
        "secret_tool(x: int) -> int\n42\nsecret_tool(x: int) -> int\n\nDouble x. Full documentation here."
    )


@needs_landlock
def test_tool_not_offered_is_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    # secret_tool was revealed in another run only: the host must refuse it here.
    run(sandbox, "search_tools('x', 1)")
    code = (
        "import socket, json, struct, gc\n"
        "s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]\n"
        "rid = [o for o in gc.get_objects() if type(o).__name__ == 'Rpc'][0].run_id\n"
        "body = json.dumps({'op': 'call', 'run': rid, 'id': 99, 'name': 'secret_tool', 'args': {'x': 1}}).encode()\n"
        "s.sendall(struct.pack('>I', len(body)) + body)\n"
        "n = struct.unpack('>I', s.recv(4))[0]\nprint(json.loads(s.recv(n))['message'])"
    )
    assert run(sandbox, code).text() == "tool 'secret_tool' is not available in this run"


@needs_landlock
def test_call_budget(tmp_path: Path) -> None:
    with Sandbox(tmp_path, SandboxLimits(timeout=5, max_tool_calls=3)) as sb:
        res = sb.run("for i in range(5):\n    print(add(i, 0))", [ADD], host_call)
    assert res.text().splitlines() == [
        "0", "1", "2", "Error at line 2: print(add(i, 0))",
        "ToolError: tool call budget exceeded: at most 3 calls per run",
    ]


@needs_landlock
def test_output_cap_marker(sandbox: Sandbox) -> None:
    res = run(sandbox, "print('x' * 1000)")
    assert res.truncated
    assert res.text() == "x" * 200 + "\n... [output truncated: 801 more characters; print a summary instead of raw data]"


@needs_landlock
def test_control_characters_escaped(sandbox: Sandbox) -> None:
    res = run(sandbox, r"print('a\x1b[31mred\tb\rc\x00')")
    assert res.text() == "a\\x1b[31mred\tb\\rc\\x00"


@needs_landlock
def test_empty_output_message(sandbox: Sandbox) -> None:
    assert run(sandbox, "x = 1").text() == EMPTY_OUTPUT == "(no output -- use print() to return results)"


@needs_landlock
def test_stdout_and_stderr_interleaved(sandbox: Sandbox) -> None:
    res = run(sandbox, "import sys\nprint('out1')\nprint('err', file=sys.stderr)\nprint('out2')")
    assert res.text() == "out1\nerr\nout2"


@needs_landlock
def test_error_points_at_the_models_line_without_runner_frames(sandbox: Sandbox) -> None:
    code = "def f(d):\n    return d['missing']\n\nprint('before')\nf({})\n"
    res = run(sandbox, code)
    assert res.line == 2
    assert res.text() == "before\nError at line 2: return d['missing']\nKeyError: 'missing'"
    assert "worker" not in res.text() and "File " not in res.text()


@needs_landlock
def test_syntax_error_line(sandbox: Sandbox) -> None:
    res = run(sandbox, "x = 1\ny = (\nprint(x)")
    assert res.error is not None and res.error.startswith("Error at line 2, column 5: y = (\nSyntaxError:")


@needs_landlock
def test_a_line_break_that_cuts_a_string_is_read_as_backslash_n(sandbox: Sandbox) -> None:
    # JSON "print('a\nb')" decodes to a real line break inside the literal (recorded from the 1.5B)
    res = run(sandbox, "for w in ['x', 'y']:\n    print(w + ': ' + str('a\nb'.count('\n')))\n")
    assert res.error is None and res.output == "x: 1\ny: 1\n"
    assert res.repaired is not None and res.repaired.startswith("the program did not parse (line 2: unterminated")
    # The model sees the output first and one short note line after it (the 1.5B answered a note put first).
    assert res.text() == "x: 1\ny: 1\n[note: repaired to parse: each line break inside a one-line string written as \\n]"


@needs_landlock
def test_escaped_quotes_outside_strings_are_read_as_quotes(sandbox: Sandbox) -> None:
    res = run(sandbox, "d = {'lines': 3}\nprint(f'{d[\\\"lines\\\"]} lines')\n")
    assert res.output == "3 lines\n" and "read as a plain quote" in (res.repaired or "")


@needs_landlock
def test_errors_in_a_repaired_program_point_at_the_program_that_ran(sandbox: Sandbox) -> None:
    res = run(sandbox, "s = 'a\nb'\nprint(len(s))\nprint(s[10])\n")
    assert res.output == "3\n" and res.line == 3
    assert "Error at line 3: print(s[10])\nIndexError" in (res.error or "")


@needs_landlock
def test_a_program_no_repair_fixes_keeps_its_own_syntax_error(sandbox: Sandbox) -> None:
    res = run(sandbox, "print('a\nprint(1 +)\n")
    assert res.repaired is None
    assert (res.error or "").startswith("Error at line 1, column 7: print('a\nSyntaxError: unterminated string literal")
    res = run(sandbox, "print('ok')\n")  # a program that parses is never touched
    assert res.repaired is None and res.text() == "ok"


@needs_landlock
def test_a_syntax_error_gives_its_column_and_the_text_there(sandbox: Sandbox) -> None:
    # hybrid shortest_caesar: `Error at line 1: <a 400-character line>` + `SyntaxError: invalid syntax` told the
    # model neither where nor what; it sent the identical program again.
    res = run(sandbox, "x = [1, 2]\ny = x +* 2\n")
    assert res.error == "Error at line 2, column 8: y = x +* 2\nSyntaxError: invalid syntax at '* 2'"


@needs_landlock
def test_a_block_joined_after_a_semicolon_is_moved_to_its_own_line(sandbox: Sandbox) -> None:
    # The 1.5B's one-line program (hybrid shortest_caesar): `...; for h in hexes: ...` does not parse.
    code = "hexes = ['7374', '78797a']; out = []; for h in hexes: out.append(add(len(h), 0)); print(out)"
    res = run(sandbox, code)
    assert res.error is None and res.output == "[4]\n[4, 6]\n" and res.calls == 2
    assert res.repaired is not None and "moved to its own line" in res.repaired
    # A `;` inside a string or brackets is left alone; `if` after `;` is split too.
    res = run(sandbox, "s = 'a; for b'; if s: print(s, [i for i in (1, 2) if i > 1])")
    assert res.error is None and res.output == "a; for b [2]\n"


@needs_landlock
def test_a_forged_repair_in_a_done_frame_is_escaped_and_bounded(sandbox: Sandbox) -> None:
    # The done frame comes from the worker, which the program controls: the note is escaped and capped, and a
    # "repaired program" longer than any repair makes is not used to quote the error line.
    from toolmode.sandbox.host import _RunState

    frame = {"output": "", "dropped": 0, "error": {"type": "SyntaxError", "message": "x", "line": 2},
             "repaired": {"note": "\x1b[31mred" + "n" * 1000, "code": "a\n" + "LONG" * 1000}}
    res = sandbox._finish("x = 1\ny = (\n", frame, _RunState(set(), 10), False)
    assert res.repaired is not None and "\x1b" not in res.repaired and len(res.repaired) < 320
    assert (res.error or "").startswith("Error at line 2: y = (")


@needs_landlock
def test_timeout_then_next_run_works(sandbox: Sandbox) -> None:
    res = run(sandbox, "print('start')\nwhile True:\n    pass")
    assert res.timed_out
    assert res.text() == "Error: timed out after 2 s; the worker was restarted"
    assert run(sandbox, "print(add(2, 2))").text() == "4"


@needs_landlock
def test_persistence_and_reset(tmp_path: Path) -> None:
    with Sandbox(tmp_path, LIMITS, persistent=True) as sb:
        run(sb, "import math\ncounter = 41")
        assert run(sb, "counter += 1\nprint(counter, math.pi > 3)").text() == "42 True"
        res = run(sb, "import time\ntime.sleep(10)")
        assert res.timed_out and res.reset
        assert "namespace was reset" in res.text()
        res = run(sb, "print(counter)")
        assert res.text() == "Error at line 1: print(counter)\nNameError: name 'counter' is not defined"


@needs_landlock
def test_fresh_namespace_without_persistence(sandbox: Sandbox) -> None:
    run(sandbox, "counter = 1")
    assert "NameError" in run(sandbox, "print(counter)").text()


@needs_landlock
def test_crash_is_reported_and_worker_replaced(sandbox: Sandbox) -> None:
    res = run(sandbox, "import ctypes\nctypes.string_at(0)")
    assert res.error is not None and "SIGSEGV" in res.error and "restarted" in res.error
    assert run(sandbox, "print('alive')").text() == "alive"


@needs_landlock
@pytest.mark.parametrize(("policy", "start"), [("bwrap", "sandbox: namespaces (bubblewrap) + landlock (ABI "),
                                               ("unshare", "sandbox: namespaces (unshare) + landlock (ABI "),
                                               ("landlock", "sandbox: landlock (ABI ")])
def test_policy_text(tmp_path: Path, policy: str, start: str) -> None:
    with Sandbox(tmp_path, LIMITS, policy=policy) as sb:
        text = sb.describe_policy()
    assert text.startswith(start) and "seccomp" in text and "caps dropped, 2 s, 1024 MiB, no network" in text
    if policy == "landlock":
        assert "no namespaces" in text and "install bubblewrap" in text


def test_policy_none_runs_and_says_unsafe(tmp_path: Path) -> None:
    with Sandbox(tmp_path, LIMITS, policy="none") as sb:
        assert "NONE (unsafe" in sb.describe_policy()
        assert run(sb, "print(add(20, 22))").text() == "42"


def test_forced_missing_mechanism_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolmode.sandbox import tiers

    monkeypatch.setattr(tiers, "bwrap_path", lambda: None)  # as on a host without bubblewrap
    with pytest.raises(SandboxUnavailable, match="bubblewrap") as info:
        Sandbox(tmp_path, LIMITS, policy="bwrap")
    assert 'sandbox="none"' in str(info.value) and "apt install bubblewrap" in str(info.value)


def test_unknown_policy(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sandbox policy"):
        Sandbox(tmp_path, LIMITS, policy="docker")


# ---------------------------------------------------------------------------------------------- audit fixes


@needs_landlock
def test_non_persistent_run_cannot_tamper_with_the_next(sandbox: Sandbox) -> None:
    # Replace print and the runner's stub factory: the next run must not see either.
    code = (
        "import builtins, sys\n_p = builtins.print\n"
        "builtins.print = lambda *a, **k: _p('FAKED', *a, **k)\n"
        "m = sys.modules['__main__']\n_mk = m.make_stub\n"
        "def evil(spec, rpc):\n    f = _mk(spec, rpc)\n    return lambda *a, **k: 999\n"
        "m.make_stub = evil\n_p('installed')"
    )
    assert run(sandbox, code).text() == "installed"
    assert run(sandbox, "print(add(1, 2))").text() == "3"


def _forge_done(with_run_id: bool) -> str:
    find_id = (
        "import sys\nf = sys._getframe()\nrid = None\n"
        "while f is not None:\n"
        "    m = f.f_locals.get('msg')\n"
        "    if isinstance(m, dict) and m.get('op') == 'run':\n        rid = m.get('run')\n"
        "    f = f.f_back\n"
    ) if with_run_id else "rid = None\n"
    return find_id + (
        "import gc, json, socket, struct, time\n"
        "s = [o for o in gc.get_objects() if isinstance(o, socket.socket)][0]\n"
        "frame = {'op': 'done', 'output': 'FORGED\\n', 'dropped': 0, 'error': None, 'retire': False}\n"
        "if rid is not None:\n    frame['run'] = rid\n"
        "b = json.dumps(frame).encode()\ns.sendall(struct.pack('>I', len(b)) + b)\n"
        "time.sleep(0.3)\nprint('real output of run 1')"
    )


@needs_landlock
@pytest.mark.parametrize("with_run_id", [False, True])
def test_forged_done_frame_cannot_desync_a_persistent_worker(tmp_path: Path, with_run_id: bool) -> None:
    # The worker is stopped when the (forged) `done` arrives; before run 2 it is continued and must answer a
    # ping first: the rest of run 1 (its real `done`) comes before the answer, so the worker is replaced.
    with Sandbox(tmp_path, LIMITS, persistent=True) as sb:
        first = run(sb, _forge_done(with_run_id))
        if not with_run_id:
            assert "broke the sandbox protocol" in first.text() and first.reset
        second = run(sb, "print('run 2')")
        assert second.output == "run 2\n"
        assert "real output of run 1" not in second.text() and "FORGED" not in second.text()


@needs_landlock
def test_lone_surrogates_do_not_break_the_channel(tmp_path: Path) -> None:
    echo = StubSpec("echo", ["s"], "echo(s: str) -> str", "")

    def call(name: str, kwargs: dict[str, Any]) -> Any:
        return {"got": kwargs["s"], "host": "bad\udcfename"}

    with Sandbox(tmp_path, LIMITS) as sb:
        res = sb.run("print('before')\nprint('\\ud800 lone')\nr = echo('\\udcff')\n"
                     "print(r['got'] == '\\udcff', r['host'])", [echo], call)
        assert res.error is None, res.text()
        assert res.text() == "before\n\\ud800 lone\nTrue bad\\xfename"
        res.text().encode("utf-8")  # the model's text is always encodable


@needs_landlock
def test_timeout_is_enforced_while_a_host_tool_runs(tmp_path: Path) -> None:
    # The tool blocks until the test lets it go: the run returned at its deadline while the tool still ran.
    import threading

    slow = StubSpec("slow", ["s"], "slow(s: float) -> str", "")
    release, finished = threading.Event(), threading.Event()

    def blocking(name: str, kwargs: dict[str, Any]) -> str:
        release.wait(600)  # a bound for a broken build
        finished.set()
        return "ok"

    with Sandbox(tmp_path, SandboxLimits(timeout=1)) as sb:
        res = sb.run("print('start')\nprint(slow(4))", [slow], blocking)
        still_running = not finished.is_set()
        release.set()
        assert res.timed_out and res.text() == ("Error: timed out after 1 s; the host tool 'slow' was still running: "
                                                "it was told to stop, its result is discarded; the worker was restarted")
        assert still_running
        assert sb.run("print(add(1, 1))", [ADD], host_call).text() == "2"


@needs_landlock
def test_persistent_runs_each_get_their_full_cpu_allowance(tmp_path: Path) -> None:
    # RLIMIT_CPU is checked against the kernel's tick-sampled CPU clock, not the exact time getrusage() gives;
    # under contention the two drift apart and the drift adds up over a persistent worker's runs. When the
    # worker armed each run's soft limit from getrusage(), a run that used 0.85 s of a 1 s allowance was
    # killed by SIGXCPU once the earlier runs' drift had eaten into it (on a loaded machine: within a few runs).
    # Every run here must finish in the namespace it started in.
    burn = (
        "import time\nt0 = time.process_time()\n"
        "while time.process_time() - t0 < 0.85:\n    pass\n"
        "print('done')"
    )
    with Sandbox(tmp_path, SandboxLimits(timeout=60, cpu_seconds=1), persistent=True) as sb:
        for run in range(8):
            res = sb.run(burn, [], host_call)
            assert res.text() == "done", f"run {run}: {res.text()}"
            assert not res.reset


@needs_landlock
def test_persistent_cpu_is_accounted_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each run uses ~0.85 s of CPU (two threads) with a 1 s per-run CPU limit: no run may be killed, the
    # namespace survives, and when the worker's lifetime CPU ceiling (made small here) forces a new
    # worker, the next result says the namespace was reset. Before the fix the ceiling silently
    # replaced the worker (fresh namespace, reset=False, no note): checked with 15 runs at the real ceiling.
    from toolmode.sandbox import host

    monkeypatch.setattr(host, "CPU_LIFETIME_RUNS", 4)  # hard ceiling 6 s: room for ~5 such runs
    burn = (
        "import threading, time\n"
        "try:\n    x\nexcept NameError:\n    x = 0\n"
        "x += 1\nt0 = time.process_time()\n"
        "def spin():\n    while time.process_time() - t0 < 0.85:\n        pass\n"
        "ts = [threading.Thread(target=spin) for _ in range(2)]\n"
        "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(x)"
    )
    with Sandbox(tmp_path, SandboxLimits(timeout=5, cpu_seconds=1), persistent=True) as sb:
        expected = 1
        for _ in range(7):
            res = sb.run(burn, [], host_call)
            if res.reset:
                assert expected > 3, res.text()  # the ceiling leaves room for several full runs
                assert res.text() == "1\nNote: the previous worker had stopped or reached its CPU ceiling, so " \
                    "this program ran in a fresh namespace (variables from earlier runs are gone)."
                break
            assert res.text() == str(expected), res.text()
            expected += 1
        else:
            raise AssertionError("the CPU ceiling never replaced the worker")


@needs_landlock
def test_tool_result_size_is_capped(tmp_path: Path) -> None:
    big = StubSpec("big", ["n"], "big(n: int) -> str", "")
    with Sandbox(tmp_path, SandboxLimits(timeout=5, max_frame_bytes=1024 * 1024)) as sb:
        res = sb.run("try:\n    big(2_000_000)\nexcept ToolError as e:\n    print('caught', e)\nprint(len(big(1000)))",
                     [big], lambda n, k: "x" * k["n"])
    assert res.text().startswith("caught result of 2,000,")
    assert "exceeds the 1,048,576-byte limit; filter or paginate on the host side" in res.text()
    assert res.text().endswith("\n1000")


@needs_landlock
def test_unicode_format_characters_escaped(sandbox: Sandbox) -> None:
    res = run(sandbox, r"print('a\u202eb \u2066c\u2069 d\u2028e\u200bf \x85 统计 ok')")
    assert res.text() == "a\\u202eb \\u2066c\\u2069 d\\u2028e\\u200bf \\x85 统计 ok"


@needs_landlock
@pytest.mark.parametrize("program", ["started()\nwhile True:\n    pass", "started()\nslow()"])
def test_close_does_not_wait_for_a_running_program(tmp_path: Path, program: str) -> None:
    # The program tells the host it runs; close() then ends it at once. Neither the program (its timeout is
    # 600 s) nor the tool (it waits for the test) would end by itself: close() returning is the proof.
    import threading

    running, release = threading.Event(), threading.Event()
    stubs = [StubSpec("started", [], "started() -> None", ""), StubSpec("slow", [], "slow() -> None", "")]

    def call(name: str, kwargs: dict[str, Any]) -> None:
        if name == "started":
            running.set()
        else:
            release.wait(600)  # a bound for a broken build

    sb = Sandbox(tmp_path, SandboxLimits(timeout=600))
    results: list[CodeResult] = []
    runner = threading.Thread(target=lambda: results.append(sb.run(program, stubs, call)))
    runner.start()
    assert running.wait(60)  # a bound for a broken build
    sb.close()
    runner.join(60)
    release.set()
    assert not runner.is_alive() and results and results[0].error is not None
    assert "closed while the program ran" in results[0].error


def test_fail_closed_message_names_both_ways_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host with no Landlock, no bubblewrap and no user namespaces: nothing can be built.
    from toolmode.sandbox import tiers

    monkeypatch.setattr(tiers.landlock, "abi_version", lambda: 0)
    monkeypatch.setattr(tiers, "bwrap_path", lambda: None)
    monkeypatch.setattr(tiers, "_probe", lambda tier: (False, "user namespaces cannot be made"))
    with pytest.raises(SandboxUnavailable) as info:
        Sandbox(tmp_path, LIMITS)
    assert 'sandbox="none"' in str(info.value) and "--sandbox none" in str(info.value)
    assert "apt install bubblewrap" in str(info.value)


@needs_landlock
def test_a_pure_python_host_tool_still_running_when_the_run_ends_is_stopped(tmp_path: Path) -> None:
    # A host function that never returns (and catches Exception) would burn host CPU forever on an
    # abandoned thread; it is interrupted, the result says so, and its thread ends.
    from toolmode import callscope

    spin = StubSpec("spin", [], "spin() -> None", "")
    counted: list[int] = []

    def forever(name: str, kwargs: dict[str, Any]) -> Any:
        n = 0
        while True:
            try:
                n += 1
                if n % 100_000 == 0:
                    counted.append(n)
            except Exception:  # noqa: BLE001 - a tool that swallows errors is not stopped by one
                pass

    with Sandbox(tmp_path, SandboxLimits(timeout=1)) as sb:
        res = sb.run("spin()", [spin], forever)
        assert res.timed_out and "the host tool 'spin' was still running: it was told to stop" in res.text()
        assert callscope.join_abandoned(60) == []  # a bound for a broken build: it ends at once
        assert sb.run("print(add(1, 1))", [ADD], host_call).text() == "2"
    assert counted  # it did run
