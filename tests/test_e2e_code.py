"""End to end: code, hybrid and code+search modes through the scripted model server and the real sandbox."""

from __future__ import annotations

import json
import random
from pathlib import Path

from toolmode import Agent
from toolmode.sandbox import SandboxLimits
from toolmode.testing import call, calls, reply
from toolmode.tools.builtin import builtin_tools

LOG_PROGRAM = """
rows = []
for entry in list_dir("."):
    if entry["name"].endswith(".txt"):
        lines = read_file(entry["name"]).splitlines()
        rows.append((entry["name"], len(lines), sum("ERROR" in line for line in lines)))
for name, total, errors in sorted(rows):
    print(name, total, errors)
print("most:", max(rows, key=lambda r: r[2])[0])
"""


def make_logs(workspace: Path, seed: int = 7) -> dict[str, tuple[int, int]]:
    """Five log files with a known number of lines and ERROR lines each."""
    rng = random.Random(seed)
    facts = {}
    for i in range(1, 6):
        n = rng.randint(40, 120)
        lines = [f"2026-11-30 {'ERROR' if rng.random() < 0.1 * i else 'INFO'} event {k}" for k in range(n)]
        (workspace / f"log{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        facts[f"log{i}.txt"] = (n, sum("ERROR" in line for line in lines))
    return facts


def tool_messages(request: dict) -> list[str]:
    """The tool results a request carried to the model."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_log_statistics_in_code_mode(scripted, workspace, tmp_path):
    facts = make_logs(workspace)
    server = scripted([call("run_code", code=LOG_PROGRAM), reply("see table")])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=tmp_path / "runs") as agent:
        result = agent.run("统计当前目录下每个 .txt 文件的总行数和包含 ERROR 的行数")
    assert result.stopped == "answer"
    (output,) = tool_messages(server.requests[1])
    for name, (total, errors) in facts.items():
        assert f"{name} {total} {errors}" in output
    worst = max(facts, key=lambda n: facts[n][1])
    assert f"most: {worst}" in output
    # The files' content never entered the conversation: only the printed table did.
    assert "event 3" not in json.dumps(server.requests[1]["messages"])
    # The model got one tool, run_code, whose description lists the tools with return types.
    (tool_def,) = server.requests[0]["tools"]
    assert tool_def["function"]["name"] == "run_code"
    assert "fetch_url(url: str, max_chars: int = 20000) -> dict" in tool_def["function"]["description"]


def test_first_program_raises_then_fixed_program_succeeds(scripted, workspace, page_server, page_title):
    wrong = f"page = fetch_url({page_server!r})\nprint(page.split('<title>')[1])"
    fixed = f"page = fetch_url({page_server!r})\nprint(page['title'])"
    server = scripted([call("run_code", code=wrong), call("run_code", code=fixed), reply(page_title)])
    tools = builtin_tools(workspace, allow_private_network=True)
    with Agent(tools=tools, mode="code", base_url=server.base_url, model="m", workspace=workspace,
               console=False, runs_dir=None) as agent:
        result = agent.run("What is the title of the page?")
    first, second = tool_messages(server.requests[2])
    assert first.startswith("Error at line 2: print(page.split('<title>')[1])")
    assert "AttributeError" in first and "'dict' object has no attribute 'split'" in first
    assert "runner" not in first and "worker.py" not in first  # no frames of the sandbox runner
    assert second.strip() == page_title
    assert result.answer == page_title


def test_timeout_mid_run_then_next_run_code_works(scripted, workspace):
    server = scripted([
        call("run_code", code="while True:\n    pass"),
        call("run_code", code="print(6 * 7)"),
        reply("42"),
    ])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=None, sandbox_limits=SandboxLimits(timeout=2.0)) as agent:
        result = agent.run("loop")
    timed_out, after = tool_messages(server.requests[2])
    assert "timed out after 2" in timed_out
    assert after.strip() == "42"
    assert result.answer == "42"


def test_code_search_finds_hidden_tools(scripted, workspace, page_server, page_title):
    program = (
        "clock = search_tools('current time in a timezone', k=1)[0]\n"
        "fetch = search_tools('download web page', k=1)[0]\n"
        "print(repr(clock))\n"
        "now = clock(timezone='Asia/Shanghai')\n"
        f"print(now['utc_offset'], fetch({page_server!r})['title'])\n"
    )
    server = scripted([call("run_code", code=program), reply("done")])
    tools = builtin_tools(workspace, allow_private_network=True)
    visible = ["read_file", "list_dir", "write_file", "run_shell"]
    with Agent(tools=tools, mode="code", visible=visible, base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=None) as agent:
        agent.run("现在北京时间几点？再抓取这个网页告诉我标题")
    description = server.requests[0]["tools"][0]["function"]["description"]
    assert "search_tools(query: str" in description
    assert "fetch_url(" not in description and "current_time(" not in description  # hidden
    (output,) = tool_messages(server.requests[1])
    assert output.splitlines()[0].startswith("current_time(timezone: str")
    assert output.splitlines()[1] == f"+08:00 {page_title}"


def test_hidden_tool_cannot_be_called_without_search(scripted, workspace):
    server = scripted([call("run_code", code="print(current_time('UTC'))"), reply("x")])
    with Agent(tools=builtin_tools(workspace), mode="code", visible=["read_file"], base_url=server.base_url,
               model="m", workspace=workspace, console=False, runs_dir=None) as agent:
        agent.run("time?")
    (output,) = tool_messages(server.requests[1])
    assert "NameError" in output and "current_time" in output


def test_hybrid_direct_and_code(scripted, workspace):
    facts = make_logs(workspace)
    server = scripted([
        calls(("read_file", {"path": "log1.txt", "max_lines": 1}), ("run_code", {"code": LOG_PROGRAM})),
        reply("ok"),
    ])
    with Agent(tools=builtin_tools(workspace), mode="hybrid", direct=["read_file", "list_dir"],
               base_url=server.base_url, model="m", workspace=workspace, console=False, runs_dir=None) as agent:
        result = agent.run("count errors")
    sent = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert sent == ["read_file", "list_dir", "run_code"]
    system = server.requests[0]["messages"][0]["content"]
    assert "call a tool directly" in system and "run_code" in system
    first_line, table = tool_messages(server.requests[1])
    assert first_line.startswith("2026-11-30")
    assert f"log1.txt {facts['log1.txt'][0]} {facts['log1.txt'][1]}" in table
    assert result.ok


def test_code_written_as_text_is_run_when_enabled(scripted, workspace, tmp_path):
    server = scripted([reply("Here is the code:\n```python\nprint(sum(range(10)))\n```"), reply("45")])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=tmp_path / "runs", recover_code_blocks=True) as agent:
        result = agent.run("sum 0..9")
    assert tool_messages(server.requests[1]) == ["45"]  # the recovered block ran: its output is the result
    assert result.records[0].recovered == "code"
    events = [json.loads(line) for line in result.trace_path.read_text().splitlines()]
    assert any(e["kind"] == "reply" and e["recovered"] == "code" for e in events)


def test_code_written_as_text_is_the_answer_when_disabled(scripted, workspace):
    answer = "Use this:\n```python\nprint('hi')\n```"
    server = scripted([reply(answer)])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=None) as agent:
        result = agent.run("how do I print?")
    assert result.answer == answer and result.steps == 1


def test_persistent_namespace_across_calls(scripted, workspace):
    server = scripted([
        call("run_code", code="total = 40"),
        call("run_code", code="print(total + 2)"),
        reply("42"),
    ])
    with Agent(tools=builtin_tools(workspace), mode="code", persistent=True, base_url=server.base_url,
               model="m", workspace=workspace, console=False, runs_dir=None) as agent:
        agent.run("remember")
    description = server.requests[0]["tools"][0]["function"]["description"]
    assert "persist" in description
    assert tool_messages(server.requests[2])[1].strip() == "42"


def test_output_cap_marks_the_cut(scripted, workspace):
    limit = 200
    server = scripted([call("run_code", code="print('x' * 5000)"), reply("ok")])
    with Agent(tools=[], mode="code", base_url=server.base_url, model="m", workspace=workspace,
               console=False, runs_dir=None, sandbox_limits=SandboxLimits(max_output=limit)) as agent:
        agent.run("flood")
    (output,) = tool_messages(server.requests[1])
    assert output.startswith("x" * limit)
    assert "truncated" in output and len(output) < 5000



def test_a_one_line_program_with_a_joined_loop_runs_and_a_syntax_error_says_where(scripted, workspace, tmp_path):
    # hybrid shortest_caesar: a one-line program joining `; for ...:` got `SyntaxError: invalid syntax` with the
    # whole line and no column; the model sent it again. Now it runs (split), and an error names the column.
    joined = "words = ['stu', 'tuvwu']; for w in words: print(w, len(w))"
    server = scripted([call("run_code", code=joined), call("run_code", code="print(len('ab') +* 2)"),
                       reply("done")])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=tmp_path / "runs", act_first="off") as agent:
        agent.run("lengths")
    (ran,) = tool_messages(server.requests[1])
    assert ran == "stu 3\ntuvwu 5\n[note: repaired to parse: each for / if / while after ';' moved to its own line]"
    (failed,) = tool_messages(server.requests[2])[-1:]
    assert failed == "Error at line 1, column 18: print(len('ab') +* 2)\nSyntaxError: invalid syntax at '* 2)'"


def test_a_repaired_program_is_noted_for_the_model_and_in_the_trace(scripted, workspace, tmp_path):
    server = scripted([call("run_code", code="print('a' + '\n' + 'b')"), reply("done")])
    with Agent(tools=builtin_tools(workspace), mode="code", base_url=server.base_url, model="m",
               workspace=workspace, console=False, runs_dir=tmp_path / "runs") as agent:
        result = agent.run("print two letters")
    (output,) = tool_messages(server.requests[1])
    assert output.startswith("a\nb\n[note: repaired to parse: ") and output.count("\n") == 2  # one note line, last
    events = [json.loads(line) for line in Path(result.trace_path).read_text().splitlines()]
    notes = [e["message"] for e in events if e["kind"] == "notice"]
    assert any(n.startswith("run_code: the program did not parse") for n in notes)
    [res] = [e for e in events if e["kind"] == "tool_result"]
    assert res["error"] is False
