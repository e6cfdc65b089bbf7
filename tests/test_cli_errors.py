"""A usage error of any `toolmode` command is one line on stderr naming the option, exit status 2."""

from __future__ import annotations

import pytest

from toolmode.cli import main

CASES = [
    (["run", "--bogus", "x"], "toolmode run: error: unrecognized argument: --bogus (see toolmode run --help)"),
    (["run", "--strem", "x"], "--strem (did you mean --stream?)"),
    (["run", "--max-steps", "0", "x"], "argument --max-steps: must be 1 or more, got 0"),
    (["run", "--mode", "foo", "x"], "argument --mode: invalid choice: 'foo'"),
    (["run"], "toolmode run: error: the following arguments are required: task"),
    (["chat", "--bogus"], "toolmode chat: error: unrecognized argument: --bogus"),
    (["tools", "--bogus"], "toolmode tools: error: unrecognized argument: --bogus"),
    (["tools", "search", "--rnker", "fused", "q"], "--rnker (did you mean --ranker?) (see toolmode tools search --help)"),
    (["tools", "lst"], "argument action: invalid choice: 'lst'"),
    ([], "toolmode: error: the following arguments are required: command (see toolmode --help)"),
    (["bench", "--bogus"], "toolmode bench: error: unrecognized arguments: --bogus"),
    (["demo", "--bogus"], "toolmode demo: error: unrecognized arguments: --bogus (see toolmode demo --help)"),
    (["scripted-server", "--port", "1"], "toolmode scripted-server: error: the following arguments are required: --script"),
    (["view", "--bogus"], "toolmode view: error: unrecognized arguments: --bogus (see toolmode view --help)"),
    (["replay"], "toolmode replay: error: the following arguments are required: trace (see toolmode replay --help)"),
    (["replay", "t.jsonl", "--rn"], "unrecognized argument: --rn (did you mean --run?) (see toolmode replay --help)"),
    (["replay", "--run", "x", "t.jsonl"], "toolmode replay: error: argument --run: invalid int value: 'x'"),
    (["prompts"], "toolmode prompts: error: the following arguments are required: action"),
    (["prompts", "show", "--mdoe", "code"],
     "unrecognized arguments: --mdoe (did you mean --mode?) code (see toolmode prompts show --help)"),
    (["prompts", "show", "--mode", "foo"], "toolmode prompts show: error: argument --mode: invalid choice: 'foo'"),
    (["run", "--idle-timeout", "0", "x"], "argument --idle-timeout: must be more than 0, got 0"),
    (["chat", "--otle"], "--otle (did you mean --otel?) (see toolmode chat --help)"),
]


@pytest.mark.parametrize("argv, expected", CASES, ids=[" ".join(c[0]) or "(nothing)" for c in CASES])
def test_a_usage_error_is_one_line_with_status_2(argv: list[str], expected: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n") and "usage:" not in err
    assert expected in err


@pytest.mark.parametrize("command", [["run", "hi"], ["tools"], ["chat"]])
def test_a_missing_mcp_config_names_the_option(command: list[str], tmp_path, capsys) -> None:
    missing = str(tmp_path / "nonexistent.json")
    status = main([command[0], "--mcp-config", missing, *command[1:]])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err == f"toolmode: --mcp-config {missing}: No such file or directory; give the path of an mcp.json " \
                  'file ({"mcpServers": {...}})\n'


def test_an_mcp_config_that_is_not_json_names_the_option(tmp_path, capsys) -> None:
    config = tmp_path / "mcp.json"
    config.write_text("{ not json")
    assert main(["tools", "--mcp-config", str(config), "--workspace", str(tmp_path / "elsewhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"toolmode: --mcp-config {config}: not JSON (") and err.count("\n") == 1
