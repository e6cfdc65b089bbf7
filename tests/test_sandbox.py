"""The Sandbox contract: stubs, tool errors, handles, output, errors, timeouts, persistence, policies."""

from __future__ import annotations

import shutil
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
        "body = json.dumps({'op': 'call', 'id': 99, 'name': 'secret_tool', 'args': {'x': 1}}).encode()\n"
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
    assert res.error is not None and res.error.startswith("Error at line 2: y = (\nSyntaxError:")


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
def test_policy_text(sandbox: Sandbox) -> None:
    text = sandbox.describe_policy()
    assert text.startswith("sandbox: landlock (ABI ") and "seccomp, caps dropped, 2 s, 1024 MiB, no network" in text


def test_policy_none_runs_and_says_unsafe(tmp_path: Path) -> None:
    with Sandbox(tmp_path, LIMITS, policy="none") as sb:
        assert "NONE (unsafe" in sb.describe_policy()
        assert run(sb, "print(add(20, 22))").text() == "42"


@pytest.mark.skipif(shutil.which("bwrap") is not None, reason="bwrap is installed")
def test_forced_missing_mechanism_fails_closed(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match='sandbox="none"'):
        Sandbox(tmp_path, LIMITS, policy="bwrap")


def test_unknown_policy(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sandbox policy"):
        Sandbox(tmp_path, LIMITS, policy="docker")
