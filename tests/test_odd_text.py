"""Text that is not valid UTF-8 never crashes a run, the trace writer or the console.

Undecodable bytes reach Python as lone surrogates (surrogateescape): a file name with a Latin-1 byte, a
Latin-1 task on argv. Each boundary (request body, trace line, console) writes them as the byte they stand
for, `\\xe9`; the run goes on and the trace keeps every event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolmode.events import Notice, ToolsSent
from toolmode.testing import call, reply
from toolmode.trace import JsonlSink, Trace

LATIN1_NAME = os.fsencode("caf\udce9.txt")  # the bytes b"caf\xe9.txt": not UTF-8


def toolmode(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """`python -m toolmode ARGS` with a real argv (bytes allowed, as a shell would pass them)."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base.update(env or {}, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "toolmode", *args], capture_output=True, timeout=60, env=base)


def trace_events(runs: Path) -> list[dict[str, Any]]:
    """The events of the one trace file under `runs` (after its format header line)."""
    (path,) = runs.iterdir()
    header, *events = [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
    assert header["kind"] == "trajectory"
    return events


@pytest.mark.parametrize("mode", ["react", "hybrid"])
def test_a_latin1_file_name_is_listed_and_the_run_goes_on(scripted, tmp_path: Path, mode: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(os.fsencode(workspace) + b"/" + LATIN1_NAME, "w") as f:
        f.write("x")
    server = scripted([call("list_dir", path="."), reply("one file")])
    extra = ["--direct", "list_dir"] if mode == "hybrid" else []
    proc = toolmode("run", "--mode", mode, *extra, "--base-url", server.base_url, "--model", "m",
                    "--workspace", str(workspace), "--runs-dir", str(tmp_path / "runs"), "list the files")
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err and "Warning" not in err  # no sink was removed
    assert "← list_dir" in out and 'caf\\xe9.txt' in out  # the console shows the byte, escaped
    sent = server.requests[1]["messages"][-1]
    assert sent["role"] == "tool" and '"name": "caf\\xe9.txt"' in sent["content"]  # as the model reads it
    events = trace_events(tmp_path / "runs")
    kinds = [e["kind"] for e in events]
    assert kinds[-1] == "run_end" and events[-1]["stopped"] == "answer" and events[-1]["answer"] == "one file"
    (result,) = [e for e in events if e["kind"] == "tool_result"]
    assert '"name": "caf\\xe9.txt"' in result["result"] and result["error"] is False


def test_a_latin1_task_on_argv_is_sent_and_traced_escaped(scripted, tmp_path: Path) -> None:
    server = scripted([reply("done")])
    proc = toolmode("run", "--mode", "react", "--no-builtin", "--base-url", server.base_url, "--model", "m",
                    "--runs-dir", str(tmp_path / "runs"), b"r\xe9sum\xe9 this")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert "Warning" not in proc.stderr.decode()
    assert server.requests[0]["messages"][-1]["content"] == "r\\xe9sum\\xe9 this"
    events = trace_events(tmp_path / "runs")
    assert events[0]["kind"] == "run_start" and events[0]["task"] == "r\\xe9sum\\xe9 this"
    assert events[-1]["kind"] == "run_end" and events[-1]["answer"] == "done"


def test_a_terminal_that_cannot_show_a_character_gets_an_escape(scripted, tmp_path: Path) -> None:
    server = scripted([reply("答案 is 42")])
    proc = toolmode("run", "--mode", "react", "--no-builtin", "--base-url", server.base_url, "--model", "m",
                    "--runs-dir", str(tmp_path / "runs"), "任务", env={"PYTHONIOENCODING": "ascii"})
    out, err = proc.stdout.decode("ascii"), proc.stderr.decode("ascii")
    assert proc.returncode == 0, out + err
    assert "failed and was removed" not in err  # the step view was not silenced
    assert "\\u7b54\\u6848 is 42" in out and "step 1" in out and "total 1 requests" in out


def test_the_trace_writer_writes_every_event_it_is_given(tmp_path: Path) -> None:
    loop: list[Any] = []
    loop.append(loop)  # no JSON for this
    path = tmp_path / "t.jsonl"
    with Trace([JsonlSink(path)]) as trace:
        trace.publish(Notice("bad byte: caf\udce9 and \ud800"))
        trace.publish(ToolsSent(step=1, names=["odd"], schemas=[{"odd": loop}]))  # e.g. from a custom mode
        trace.publish(Notice("after"))
        assert len(trace.sinks) == 1  # the writer was never removed
    header, *lines = [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
    assert header["kind"] == "trajectory"
    assert [e["kind"] for e in lines] == ["notice", "tools", "notice"]
    assert lines[0]["message"] == "bad byte: caf\\xe9 and \\ud800"
    assert lines[1]["unwritable"].startswith("ValueError: Circular reference")
    assert lines[2]["message"] == "after"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_request_body_with_lone_surrogates_is_sent_escaped(scripted, stream: bool) -> None:
    from toolmode.models import ModelClient

    server = scripted([reply("ok")])
    model = ModelClient("m", base_url=server.base_url, stream=stream, deadline=5)
    assert model.chat([{"role": "user", "content": "caf\udce9 \ud800"}]).content == "ok"
    model.close()
    assert server.requests[0]["messages"][0]["content"] == "caf\\xe9 \\ud800"
