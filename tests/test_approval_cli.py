"""Approval in the CLI: `toolmode run` / `chat` ask in a pseudo-terminal (the test answers through the pty and
checks what was shown and what ran), `--approve all|none|ask`, the user config, and no terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from toolmode.testing import call, reply

ROOT = Path(__file__).resolve().parents[1]
WAIT = 60.0  # seconds at most for an expected piece of output (a loaded machine is slow; the test waits on output)


class Terminal:
    """A `toolmode` process on a pseudo-terminal: `expect(text)` reads until `text` appears, `send(line)` types."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True)
        os.close(slave)
        self.output = ""
        self.seen = 0  # output before this was matched already: each expect waits for new output

    def expect(self, text: str) -> str:
        end = time.monotonic() + WAIT
        while text not in self.output[self.seen:]:
            left = end - time.monotonic()
            assert left > 0, f"{text!r} never appeared; output so far:\n{self.output}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process ended and closed the terminal
                    chunk = b""
                assert chunk, f"the process ended before {text!r}; output:\n{self.output}"
                self.output += chunk.decode("utf-8", "replace")
        self.seen = self.output.index(text, self.seen) + len(text)
        return self.output

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self) -> int:
        code = self.proc.wait(timeout=WAIT)
        while True:  # what is left to read
            ready, _, _ = select.select([self.master], [], [], 0)
            if not ready:
                break
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.output += chunk.decode("utf-8", "replace")
        os.close(self.master)
        return code


def environment(tmp_path: Path, config: str | None = None) -> dict[str, str]:
    home = tmp_path / "config-home"
    if config is not None:
        (home / "toolmode").mkdir(parents=True)
        (home / "toolmode" / "config.toml").write_text(config)
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CONFIG_HOME": str(home), "COLUMNS": "200",
            "TERM": "dumb"}


def run_argv(server, tmp_path: Path, *extra: str, command: str = "run", task: str | None = "tidy") -> list[str]:
    argv = [sys.executable, "-m", "toolmode", command, "--mode", "react", "--base-url", server.base_url, "--model",
            "m", "--runs-dir", str(tmp_path / "runs"), "--workspace", str(tmp_path / "ws"), *extra]
    return argv + ([task] if task is not None else [])


def trace_events(tmp_path: Path) -> list[dict]:
    [trace] = list((tmp_path / "runs").iterdir())
    return [json.loads(x) for x in trace.read_text().splitlines()[1:]]


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("keep me")
    return ws


def test_run_asks_in_the_terminal_and_a_refusal_never_runs(scripted, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    evil = "notes.txt\x1b[2J\u202e"  # terminal escapes and a bidi override in the model's arguments
    server = scripted([call("write_file", path="notes.txt", content=evil), reply("gave up")])
    term = Terminal(run_argv(server, tmp_path, "--approve", "ask"), environment(tmp_path), tmp_path)
    shown = term.expect("[e]dit: ")
    assert "  ? approval needed: write_file (step 1)" in shown
    assert "\x1b[2J" not in shown and "\u202e" not in shown  # escaped, never acted on by the terminal
    assert "\\u001b[2J" in shown or "\\x1b" in shown
    term.send("n not that file")
    term.expect("gave up")
    assert term.finish() == 0
    assert (ws / "notes.txt").read_text() == "keep me"  # the tool never ran
    decided = [e for e in trace_events(tmp_path) if e["kind"] == "approval"]
    assert [(e["decision"], e["by"], e["reason"]) for e in decided] == [("denied", "terminal", "not that file")]
    tool_message = server.requests[1]["messages"][-1]["content"]
    assert tool_message.startswith("Refused by the user: write_file was not run: not that file")


def test_run_edit_then_approve_runs_with_the_edited_arguments(scripted, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server = scripted([call("write_file", path="notes.txt", content="overwritten"), reply("written")])
    term = Terminal(run_argv(server, tmp_path, "--approve", "ask"), environment(tmp_path), tmp_path)
    term.expect("[e]dit: ")
    term.send("e")
    term.expect("arguments as JSON: ")
    term.send("{not json")
    term.expect("asking again")
    term.expect("[e]dit: ")
    term.send("e")
    term.expect("arguments as JSON: ")
    term.send(json.dumps({"path": "other.txt"}))  # content is missing: the tool's own check refuses it
    term.expect("asking again")
    term.expect("[e]dit: ")
    term.send("e")
    term.expect("arguments as JSON: ")
    term.send(json.dumps({"path": "other.txt", "content": "edited"}))
    term.expect("written")
    assert term.finish() == 0
    assert (ws / "notes.txt").read_text() == "keep me" and (ws / "other.txt").read_text() == "edited"
    [decided] = [e for e in trace_events(tmp_path) if e["kind"] == "approval"]
    assert decided["arguments"] == {"path": "other.txt", "content": "edited"} and decided["by"] == "terminal"


def test_chat_always_approves_the_tool_for_the_session(scripted, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server = scripted([call("write_file", path="a.txt", content="1"), reply("turn-one-done"),
                       call("write_file", path="b.txt", content="2"), reply("turn-two-done")])
    term = Terminal(run_argv(server, tmp_path, command="chat", task=None),
                    environment(tmp_path, '[approval]\nwrite_file = "ask"\n'), tmp_path)
    term.expect("you> ")
    term.send("first")
    term.expect("[e]dit: ")
    term.send("a")
    term.expect("turn-one-done")
    term.expect("you> ")
    term.send("second")
    term.expect("turn-two-done")
    term.expect("you> ")
    os.write(term.master, b"\x04")  # Ctrl-D leaves
    assert term.finish() == 0
    assert term.output.count("[e]dit: ") == 1  # asked once; the second call was approved by "always"
    assert (ws / "a.txt").read_text() == "1" and (ws / "b.txt").read_text() == "2"


def test_flags_and_no_terminal(scripted, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    config = '[approval]\nwrite_file = "ask"\n'
    env = environment(tmp_path, config)
    server = scripted([call("write_file", path="a.txt", content="x"), reply("ok")] * 3)

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(run_argv(server, tmp_path, *flags), capture_output=True, text=True, timeout=120,
                              env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)

    refused = run()  # no flag, stdin not a terminal: refused with a clear line
    assert refused.returncode == 0, refused.stderr
    assert "refused write_file: no one to ask: stdin is not a terminal" in refused.stderr
    assert not (ws / "a.txt").exists()
    none = run("--approve", "none")
    assert "✗ write_file refused (rule): refused by --approve none" in none.stdout and not (ws / "a.txt").exists()
    approved = run("--approve", "all")
    assert "✓ write_file approved (rule)" in approved.stdout and (ws / "a.txt").read_text() == "x"


def test_a_config_inside_the_workspace_is_never_read(scripted, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "toolmode").mkdir()
    (ws / "toolmode" / "config.toml").write_text('[approval]\ndefault = "allow"\nwrite_file = "deny"\n')
    server = scripted([call("write_file", path="a.txt", content="x"), reply("ok")])
    env = {**environment(tmp_path), "XDG_CONFIG_HOME": str(ws)}
    proc = subprocess.run(run_argv(server, tmp_path), capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "lies inside the workspace" in proc.stderr
    assert (ws / "a.txt").read_text() == "x"  # the planted deny was not applied


def test_a_bad_config_is_one_clear_line(scripted, tmp_path: Path) -> None:
    workspace(tmp_path)
    server = scripted([reply("never")])
    proc = subprocess.run(run_argv(server, tmp_path), capture_output=True, text=True, timeout=120,
                          env=environment(tmp_path, '[approval]\nrun_shell = "maybe"\n'), cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "[approval] run_shell must be 'allow', 'ask' or 'deny', not 'maybe'" in proc.stderr
    assert "Traceback" not in proc.stderr and server.requests == []


def test_bench_episodes_never_ask_a_call_marked_ask_is_refused(tmp_path: Path) -> None:
    """A bench task whose tool says `ask`: the episode neither waits nor stops for approval; the call is refused
    (the tool never runs) and the episode's trace says so."""
    import dataclasses

    from toolmode.bench.episode import BenchConfig
    from toolmode.bench.modespec import parse_modes
    from toolmode.bench.runner import run_bench
    from toolmode.bench.suite import builtin_suite, select
    from toolmode.bench.task import Task, TaskEnv

    (log_stats,) = select(builtin_suite(), ["log_stats"])
    ran: list[str] = []

    def tools(env: TaskEnv) -> list:
        offered = log_stats.tools(env)
        out = []
        for t in offered:
            if t.name == "read_file":
                def recorded(_real: Any = t.fn, **kw: object) -> object:
                    ran.append("read_file")
                    return _real(**kw)

                t = dataclasses.replace(t, fn=recorded, approval="ask")
            out.append(t)
        return out

    guarded = Task(**{**log_stats.__dict__, "tools": tools})
    (record,) = run_bench([guarded], parse_modes("react"), 1, tmp_path, BenchConfig(scripted=True), progress=False)
    assert record["ok"] is False and record["error"] is None and ran == []
    [trace] = list((tmp_path / "episodes").rglob("*.jsonl"))
    decided = [json.loads(x) for x in trace.read_text().splitlines()[1:] if '"kind": "approval"' in x]
    assert decided and all(d["decision"] == "denied" and "bench runs unattended" in d["reason"] for d in decided)
