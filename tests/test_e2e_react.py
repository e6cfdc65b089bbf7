"""End-to-end react runs with the builtin tools: the log-statistics task over real files, and parallel
current_time + fetch_url against a local HTTP server. The scripted model computes its answer from the
tool results it receives, so the answer is only right if the real file and page content reached it."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from toolmode import Agent
from toolmode.tools.builtin import builtin_tools

LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
MESSAGES = ["disk usage at 71%", "user login ok", "request timed out", "cache miss", "retrying upstream",
            "connection reset by peer", "配置已重新加载"]


def make_logs(workspace: Path, seed: int = 7) -> dict[str, tuple[int, int]]:
    """Five log files of different sizes (and a distractor); returns {name: (lines, lines with ERROR)}."""
    rng = random.Random(seed)
    expected = {}
    for i in range(1, 6):
        lines = []
        for n in range(rng.randint(15, 45)):
            level = rng.choice(LEVELS)
            lines.append(f"2025-06-0{i} 10:{n % 60:02d}:{rng.randint(0, 59):02d} {level} {rng.choice(MESSAGES)}")
        if i == 3:
            lines.append("2025-06-03 11:00:00 INFO nothing wrong, no ERRORS here")  # contains ERROR too
        text = "\n".join(lines) + "\n"
        (workspace / f"log{i}.txt").write_text(text, encoding="utf-8")
        expected[f"log{i}.txt"] = (len(lines), sum("ERROR" in line for line in lines))
    (workspace / "notes.md").write_text("ERROR ERROR not a log\n", encoding="utf-8")
    return expected


def tool_results_by_call(request: dict[str, Any]) -> list[tuple[str, dict, str]]:
    """(tool name, arguments, result text) of the last assistant turn's calls, from a request."""
    messages = request["messages"]
    assistant = next(m for m in reversed(messages) if m["role"] == "assistant")
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]), results[c["id"]])
        for c in assistant["tool_calls"]
    ]


def log_stats_model(request: dict[str, Any], index: int) -> dict[str, Any] | None:
    """A scripted model for the log task: list the directory, read every .txt in parallel, then count."""
    if index == 0:
        return {"content": None, "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
    if index == 1:
        [(_, _, listing)] = tool_results_by_call(request)
        names = sorted(e["name"] for e in json.loads(listing) if e["name"].endswith(".txt"))
        return {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": n}} for n in names]}
    if index == 2:
        rows = []
        for _, args, text in tool_results_by_call(request):
            lines = text.splitlines()
            rows.append(f"{args['path']}: {len(lines)} lines, {sum('ERROR' in x for x in lines)} ERROR")
        return {"content": "\n".join(rows)}
    return None


def test_log_statistics_task(scripted, workspace: Path, tmp_path: Path) -> None:
    expected = make_logs(workspace)
    server = scripted(log_stats_model)
    tools = builtin_tools(workspace)
    with Agent(tools=tools, mode="react", model="m", base_url=server.base_url, workspace=workspace,
               console=False, runs_dir=tmp_path / "runs") as agent:
        result = agent.run("统计当前目录下每个 .txt 文件的总行数和包含 ERROR 的行数")
    assert result.stopped == "answer", result.error
    assert result.answer == "\n".join(f"{name}: {n} lines, {e} ERROR" for name, (n, e) in sorted(expected.items()))
    assert result.steps == 3
    # all builtin tools were offered
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {
        "list_dir", "read_file", "write_file", "run_shell", "fetch_url", "current_time", "calculator"}
    # the five reads were one parallel turn, and the tool results hold the real file content, in order
    reads = tool_results_by_call(server.requests[2])
    assert [args["path"] for _, args, _ in reads] == sorted(expected)
    for name, args, text in reads:
        assert name == "read_file"
        assert text == (workspace / args["path"]).read_text(encoding="utf-8")
    assert [c.name for c in result.records[1].calls] == ["read_file"] * 5
    assert not any(c.error for c in result.records[1].calls)
    # the trace has the same five results
    events = [json.loads(line) for line in result.trace_path.read_text(encoding="utf-8").splitlines()]
    assert sum(e["kind"] == "tool_result" and e["name"] == "read_file" for e in events) == 5


def test_file_tools_refuse_paths_outside_the_workspace(scripted, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret", encoding="utf-8")
    server = scripted([
        {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "../secret.txt"}}]},
        {"content": "refused"},
    ])
    # act_first off: this test is about the refusal; an answer after calls that all failed would otherwise get
    # one act_first_failed check first (tests/test_act_first.py covers that on every other setting).
    with Agent(tools=builtin_tools(workspace), model="m", base_url=server.base_url, console=False,
               runs_dir=None, act_first="off") as agent:
        result = agent.run("read ../secret.txt")
    [(_, _, text)] = tool_results_by_call(server.requests[1])
    assert text.startswith("Error: ")
    assert "top secret" not in text
    assert result.records[0].calls[0].error is True
    assert result.answer == "refused"


def time_and_title_model(request: dict[str, Any], index: int) -> dict[str, Any] | None:
    if index == 0:
        url = request["messages"][-1]["content"].rsplit(" ", 1)[-1]
        return {"content": None, "tool_calls": [
            {"name": "current_time", "arguments": {"timezone": "Asia/Shanghai"}},
            {"name": "fetch_url", "arguments": {"url": url}},
        ]}
    if index == 1:
        (_, _, now), (_, _, page) = tool_results_by_call(request)
        now, page = json.loads(now), json.loads(page)
        return {"content": f"北京时间 {now['time']} ({now['timezone']}); title: {page['title']}"}
    return None


def test_parallel_current_time_and_fetch_url(scripted, page_server: str, page_title: str, tmp_path: Path) -> None:
    server = scripted(time_and_title_model)
    tools = builtin_tools(tmp_path, allow_private_network=True)
    with Agent(tools=tools, model="m", base_url=server.base_url, console=False, runs_dir=None) as agent:
        result = agent.run(f"现在北京时间几点？再抓取这个网页告诉我标题 {page_server}")
    assert result.stopped == "answer", result.error
    assert result.answer.endswith(f"(Asia/Shanghai); title: {page_title}")
    calls = result.records[0].calls
    assert [c.name for c in calls] == ["current_time", "fetch_url"]
    assert not any(c.error for c in calls)
    now = json.loads(calls[0].result)
    assert now["utc_offset"] == "+08:00"
    page = json.loads(calls[1].result)
    assert page["status"] == 200 and page["title"] == page_title
    assert "Hello from the fixture" in page["text"]
    # answered in the order asked
    [turn] = [m for m in server.requests[1]["messages"] if m["role"] == "assistant"]
    ids = [c["id"] for c in turn["tool_calls"]]
    assert [m["tool_call_id"] for m in server.requests[1]["messages"] if m["role"] == "tool"] == ids


def test_fetch_url_refuses_loopback_unless_allowed(scripted, page_server: str, page_title: str, tmp_path: Path) -> None:
    server = scripted([
        {"content": None, "tool_calls": [{"name": "fetch_url", "arguments": {"url": page_server}}]},
        {"content": "could not fetch"},
    ])
    with Agent(tools=builtin_tools(tmp_path), model="m", base_url=server.base_url, console=False,
               runs_dir=None, act_first="off") as agent:  # about the refusal, as the workspace test above
        result = agent.run("fetch it")
    [call] = result.records[0].calls
    assert call.error is True
    assert call.result.startswith("Error: ")
    assert page_title not in call.result
    assert result.answer == "could not fetch"


def test_run_shell_in_react_mode_has_the_write_budget(scripted, tmp_path: Path, monkeypatch) -> None:
    from toolmode.sandbox import landlock, shell
    from toolmode.testing import call, reply

    if landlock.abi_version() < 1:
        import pytest

        pytest.skip("needs Landlock")
    monkeypatch.setattr(shell, "DEFAULT_MAX_WRITE_MB", 4)  # the same default as run_code (512 MiB), made small
    ws = tmp_path / "ws"
    ws.mkdir()
    server = scripted([call("run_shell", command="for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do "
                                                 "head -c 1048576 /dev/zero > f$i; done"), reply("done")])
    with Agent(tools=builtin_tools(ws), model="m", base_url=server.base_url, console=False, runs_dir=None) as agent:
        result = agent.run("fill the disk")
    assert result.stopped == "answer"
    shown = result.records[0].calls[0].result
    assert "wrote more than 4 MiB to the workspace" in shown, shown
