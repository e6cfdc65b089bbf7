"""The `toolmode` command: `run` (JSON, quiet, step view, exit codes, errors) and `tools` (list, search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolmode.cli import main
from toolmode.testing import call, fault, reply


def cli(*args: str, entry: list[str] | None = None) -> subprocess.CompletedProcess:
    """Run `python -m toolmode ARGS` (or `entry ARGS`) in a subprocess, without any API key in the environment."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base["COLUMNS"] = "200"
    return subprocess.run(
        [*(entry or [sys.executable, "-m", "toolmode"]), *args],
        capture_output=True, text=True, timeout=60, env=base,
    )


def react_args(server, tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "--mode", "react", "--base-url", server.base_url, "--model", "m",
            "--runs-dir", str(tmp_path / "runs"), *extra]


# ----------------------------------------------------------------------------- subprocess


def test_run_json_prints_the_run_result(scripted, tmp_path: Path) -> None:
    server = scripted([reply("The answer is 42.")])
    proc = cli(*react_args(server, tmp_path, "--no-builtin", "--json", "What is six times seven?"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)  # stdout is exactly the JSON, no step view around it
    assert data["answer"] == "The answer is 42."
    assert data["stopped"] == "answer" and data["error"] is None
    assert data["steps"] == 1 and data["usage"]["requests"] == 1 and data["usage"]["prompt_tokens"] > 0
    assert data["cost"] is None  # model "m" has no known price
    trace = Path(data["trace_path"])
    assert trace.parent == tmp_path / "runs" and trace.exists()
    assert server.requests[0]["model"] == "m"
    assert server.requests[0]["messages"][-1]["content"] == "What is six times seven?"
    assert "tools" not in server.requests[0]


def test_missing_api_key_is_a_one_line_error_with_exit_code_2(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "toolmode"  # the console script, when installed
    entry = [str(script)] if script.exists() else None
    proc = cli("run", "--mode", "react", "--no-builtin", "--runs-dir", str(tmp_path / "runs"), "hello", entry=entry)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "DEEPSEEK_API_KEY" in lines[0]
    assert not (tmp_path / "runs").exists()  # nothing was started


# ----------------------------------------------------------------------------- in process


@pytest.fixture
def wide(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_tools_lists_the_builtin_tools(wide, tmp_path: Path, capsys) -> None:
    assert main(["tools", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "7 tools" in out
    for name in ("list_dir", "read_file", "write_file", "run_shell", "fetch_url", "current_time", "calculator"):
        assert f"│ {name}" in out
    assert "fetch_url(url: str, max_chars: int = 20000) -> dict" in out
    assert "current_time(timezone: str = 'UTC') -> dict" in out


def test_tools_list_action_and_no_builtin(wide, capsys) -> None:
    assert main(["tools", "list", "--no-builtin"]) == 0
    assert "0 tools" in capsys.readouterr().out


def test_tools_search_ranks_fetch_url_first(wide, tmp_path: Path, capsys) -> None:
    assert main(["tools", "search", "download web page", "--workspace", str(tmp_path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert rows
    first = [cell.strip() for cell in rows[0].strip("│").split("│")]
    assert first[0] == "1" and first[2] == "fetch_url"


def test_run_quiet_prints_only_the_answer(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([call("calculator", expression="6*7"), reply("42")])
    assert main(react_args(server, tmp_path, "--quiet", "What is six times seven?")) == 0
    captured = capsys.readouterr()
    assert captured.out == "42\n"
    assert captured.err == ""
    assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"] == ["42"]


def test_tools_search_needs_a_query(wide, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tools", "search"])
    assert exc.value.code == 2
    assert "required: query" in capsys.readouterr().err


def test_tools_search_options_may_come_before_the_query_and_words_need_no_quotes(wide, capsys) -> None:
    assert main(["tools", "search", "-k", "1", "download", "web", "page"]) == 0
    out = capsys.readouterr().out
    assert "fetch_url" in out and "read_file" not in out  # k=1


def test_tool_options_given_before_the_subcommand_are_kept(wide, capsys) -> None:
    assert main(["tools", "--no-builtin", "search", "download web page"]) == 0
    assert "no tool matches" in capsys.readouterr().out


def test_run_with_builtin_tools_in_a_workspace(wide, scripted, workspace: Path, tmp_path: Path, capsys) -> None:
    (workspace / "log1.txt").write_text("a\nb ERROR\nc\n", encoding="utf-8")
    server = scripted([call("read_file", path="log1.txt"), reply("3 lines, 1 ERROR")])
    code = main(react_args(server, tmp_path, "--workspace", str(workspace), "--json", "How many lines?"))
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["answer"] == "3 lines, 1 ERROR"
    [c] = data["records"][0]["calls"]
    assert c["name"] == "read_file" and c["result"] == "a\nb ERROR\nc\n" and c["error"] is False


def test_run_step_view_on_stdout(wide, scripted, workspace: Path, tmp_path: Path, capsys) -> None:
    (workspace / "a.txt").write_text("hello\n", encoding="utf-8")
    server = scripted([call("read_file", path="a.txt"), reply("It says hello.")])
    code = main(react_args(server, tmp_path, "--workspace", str(workspace), "Read a.txt"))
    out = capsys.readouterr().out
    assert code == 0
    assert "step 1 prompt" in out and "step 2 prompt" in out and "cached" in out
    assert '→ read_file({"path": "a.txt"})' in out
    assert "← read_file: hello" in out
    assert "It says hello." in out
    assert "total 2 requests" in out and "unknown price" in out
    [trace] = (tmp_path / "runs").iterdir()
    assert f"trace: {trace}" in out


def test_run_stream_flag(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([reply("streamed answer")])
    assert main(react_args(server, tmp_path, "--no-builtin", "--stream", "--quiet", "go")) == 0
    assert capsys.readouterr().out == "streamed answer\n"
    assert server.requests[0]["stream"] is True


def test_step_limit_exit_code_1_and_json(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([call("calculator", expression="1+1")] * 5)
    code = main(react_args(server, tmp_path, "--max-steps", "2", "--json", "loop forever"))
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["stopped"] == "step_limit" and data["answer"] is None and data["steps"] == 2
    assert "step limit (2)" in data["error"]
    assert len(server.requests) == 2


def test_model_error_during_run_exit_code_1(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([fault("status", status=401, message="Authentication Fails, Your api key is invalid")])
    code = main(react_args(server, tmp_path, "--no-builtin", "--quiet", "hi"))
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""  # --quiet: stdout is for the answer only; the reason goes to stderr
    assert "stopped: error" in captured.err
    assert "Authentication Fails, Your api key is invalid" in captured.err


def test_no_trace_writes_no_file(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([reply("ok")])
    assert main(react_args(server, tmp_path, "--no-builtin", "--no-trace", "--json", "hi")) == 0
    assert json.loads(capsys.readouterr().out)["trace_path"] is None
    assert not (tmp_path / "runs").exists()


def test_missing_custom_api_key_env(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([reply("never")])
    code = main(react_args(server, tmp_path, "--no-builtin", "--api-key-env", "MY_TEST_KEY_VAR", "hi"))
    err = capsys.readouterr().err
    assert code == 2
    assert "MY_TEST_KEY_VAR" in err and err.count("\n") == 1
    assert server.requests == []


def test_unknown_preset_is_a_clear_error(wide, capsys) -> None:
    assert main(["run", "--preset", "nonesuch", "--no-builtin", "hi"]) == 2
    err = capsys.readouterr().err
    assert "unknown preset 'nonesuch'" in err and err.count("\n") == 1


def test_bad_arguments_exit_with_usage_error(wide, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--mode", "telepathy", "hi"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_run_json_is_safe_on_a_terminal(scripted, tmp_path: Path, capsys) -> None:
    # JSON leaves C1 controls (U+009B is an 8-bit CSI), bidi overrides, astral format characters and line
    # separators raw: they come out as \u escapes, while Chinese text stays readable; the JSON is the same.
    answer = "答案 \x9b2J\u202eevil\U000e0001\u2028 ok"
    server = scripted([reply(answer)])
    assert main(react_args(server, tmp_path, "--no-builtin", "--json", "hi")) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["answer"] == answer
    assert "答案" in out and all(c == "\n" or c.isprintable() for c in out)
    for raw in ("\x9b", "\u202e", "\U000e0001", "\u2028"):
        assert raw not in out


@pytest.mark.parametrize("url", ["ftp://host/v1", "127.0.0.1:8080/v1", "http:///v1"])
def test_base_url_that_is_not_http_is_refused_up_front(wide, capsys, url: str) -> None:
    # Before: the client retried an unsupported URL 8 times over ~2 minutes, naming httpx's exception class.
    assert main(["run", "--base-url", url, "--model", "m", "--no-builtin", "--no-trace", "hi"]) == 2
    err = capsys.readouterr().err
    assert f"--base-url {url!r}: expected an http(s) URL" in err and err.count("\n") == 1


@pytest.mark.parametrize("content", ["[1, 2]", "{not json", '"text"'])
def test_mcp_config_that_is_not_an_object_is_one_line(wide, tmp_path: Path, capsys, content: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(content)
    assert main(["run", "--mcp-config", str(config), "--no-builtin", "--no-trace", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"toolmode: --mcp-config {config}:") and err.count("\n") == 1
    assert "Traceback" not in err and "AttributeError" not in err


def test_an_empty_task_is_refused_before_any_request(wide, scripted, tmp_path: Path, capsys) -> None:
    server = scripted([reply("never")])
    assert main(react_args(server, tmp_path, "--no-builtin", "--no-trace", "  ")) == 2
    err = capsys.readouterr().err
    assert "the task is empty" in err and err.count("\n") == 1
    assert server.requests == []
