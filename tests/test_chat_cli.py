"""`toolmode chat` as a subprocess against the scripted server: piped turns, commands, one trace per
session, and Ctrl-C (SIGINT) stopping a turn without leaving."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolmode.testing import call, reply

ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "COLUMNS": "200"}


def chat_command(server, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolmode", "chat", "--mode", "react", "--base-url", server.base_url, "--model",
            "m", "--runs-dir", str(tmp_path / "runs"), "--workspace", str(tmp_path), *extra]


def test_piped_session_with_commands_and_one_trace(scripted, tmp_path: Path) -> None:
    server = scripted([reply("Hello there."), call("calculator", expression="6*7"), reply("It is 42."),
                       reply("Fresh start.")])
    stdin = "hi\n/cost\nwhat is\\\nsix times seven\n/bogus\n/reset\nagain\n"
    proc = subprocess.run(chat_command(server, tmp_path), input=stdin, capture_output=True, text=True,
                          timeout=120, env=ENV, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Hello there." in out and "It is 42." in out and "Fresh start." in out
    assert "→ calculator" in out and "← calculator: 42" in out  # the same step view as `toolmode run`
    assert "1 turns · 1 requests" in out
    assert "conversation cleared" in out
    assert "unknown command '/bogus'" in proc.stderr
    assert "Traceback" not in proc.stderr
    # the continued line became one message; the second turn carried the first
    second = server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[-1]["content"] == "what is\nsix times seven"
    # /reset: the last turn starts over (the new message only)
    assert [m["role"] for m in server.requests[3]["messages"]] == ["user"]
    [trace] = list((tmp_path / "runs").iterdir())
    kinds = [json.loads(line)["kind"] for line in trace.read_text().splitlines()]
    assert kinds.count("run_start") == 3 and kinds.count("run_end") == 3


def test_mode_switch_keeps_the_conversation(scripted, tmp_path: Path) -> None:
    server = scripted([reply("first"), reply("second")])
    stdin = "one\n/mode hybrid\ntwo\n/mode nonsense\n"
    proc = subprocess.run(chat_command(server, tmp_path, "--sandbox", "none"), input=stdin, capture_output=True,
                          text=True, timeout=120, env=ENV, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mode hybrid" in proc.stdout
    second = server.requests[1]
    assert "run_code" in [t["function"]["name"] for t in second["tools"]]
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # hybrid's prompt, then the earlier turn
    assert second["messages"][1]["content"] == "one"
    assert "unknown command '/mode nonsense'" in proc.stderr


def test_ctrl_c_stops_the_turn_and_the_session_goes_on(scripted, tmp_path: Path) -> None:
    server = scripted([call("run_shell", command="sleep 30"), reply("back again")])
    proc = subprocess.Popen(chat_command(server, tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("sleep please\n")
        proc.stdin.flush()
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until the tool call is under way
            line = proc.stdout.readline()
            lines.append(line)
            if "→ run_shell" in line or not line:
                break
        assert any("→ run_shell" in x for x in lines), lines
        proc.send_signal(signal.SIGINT)  # the turn is under way (its Ctrl-C handler is set before the request)
        out, err = proc.communicate("are you there?\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopping this turn" in err
    assert "stopped: cancelled" in out
    assert "back again" in out
    # the cancelled turn stays in the conversation, its call answered: the 30 s command was not waited for
    sent = server.requests[1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "user"]
    assert "stopped before this call finished" in sent[-2]["content"]
