"""Controls for small local models, end to end against the scripted server: a corrective message instead of
an unreadable call taken as the answer, the loop guard, repaired and re-serialised arguments, an identical
HTTP 500 treated as permanent, local prompts, run_code tidying and failures, and the model options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent, ModelClient, tool
from toolmode.bench.slots import jobs_warning, server_slots
from toolmode.cli import main
from toolmode.models.client import ModelError
from toolmode.testing import call, calls, fault, reply
from toolmode.tools.builtin import builtin_tools

ECHOED: list[str] = []


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    ECHOED.append(text)
    return text


def agent(server, tmp_path: Path, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [echo])
    kwargs.setdefault("mode", "react")
    return Agent(model="m", base_url=server.base_url, console=False, runs_dir=tmp_path / "runs", **kwargs)


def events(result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(result.trace_path).read_text().splitlines()]


# ----------------------------------------------------------------------------- unreadable calls


def test_an_unreadable_call_gets_a_correction_and_the_run_goes_on(scripted, tmp_path) -> None:
    broken = '```json\n{"name": "echo", "arguments": {"text": "hi"\n```'
    server = scripted([reply(broken), call("echo", text="hi"), reply("done: hi")])
    with agent(server, tmp_path) as a:
        result = a.run("say hi")
    assert result.answer == "done: hi" and result.steps == 3
    correction = server.requests[1]["messages"][-1]
    assert correction["role"] == "user"
    assert "could not be read" in correction["content"] and "not valid JSON" in correction["content"]
    assert '{"name": "echo", "arguments": {"text": "<text>"}}' in correction["content"]  # the exact shape
    notices = [e for e in events(result) if e["kind"] == "notice"]
    assert notices and notices[0]["about"] == "unreadable_call"


def test_an_unreadable_call_at_the_last_step_is_not_the_answer(scripted, tmp_path) -> None:
    server = scripted([reply('<tool_call>\n{"name": "echo", "arguments": {"text": }\n</tool_call>')] * 2)
    with agent(server, tmp_path, max_steps=2) as a:
        result = a.run("say hi")
    assert result.stopped == "step_limit" and result.answer is None


def test_a_prose_answer_mentioning_a_tool_is_the_answer(scripted, tmp_path) -> None:
    server = scripted([reply('I used echo("hi") and it said {"text": "hi"}.')])
    with agent(server, tmp_path) as a:
        result = a.run("say hi")
    assert result.stopped == "answer" and result.steps == 1


def test_recovered_calls_are_marked_per_call_in_the_trace(scripted, tmp_path) -> None:
    server = scripted([reply("echo(text='a')\necho('b')"), reply("ok")])
    ECHOED.clear()
    with agent(server, tmp_path) as a:
        result = a.run("say a and b")
    assert ECHOED == ["a", "b"]
    [step] = [e for e in events(result) if e["kind"] == "reply" and e["tool_calls"]]
    assert step["recovered"] == "python"
    assert [c["recovered"] for c in step["tool_calls"]] == ["python", "python"]


# ----------------------------------------------------------------------------- loop guard


def test_a_retry_that_gets_a_different_result_is_not_a_repeat(scripted, tmp_path) -> None:
    results = iter(["busy", "done"])

    @tool
    def poll() -> str:
        """Poll."""
        return next(results)

    server = scripted([call("poll"), call("poll"), reply("ok")])
    with agent(server, tmp_path, tools=[poll]) as a:
        a.run("poll")
    assert server.requests[2]["messages"][-1]["content"] == "done"


def test_a_repeated_call_is_pointed_out_to_the_model(scripted, tmp_path) -> None:
    server = scripted([call("echo", text="x"), call("echo", text="x"), call("echo", text="y"), reply("x")])
    with agent(server, tmp_path) as a:
        result = a.run("echo x")
    first = server.requests[1]["messages"][-1]["content"]
    second = server.requests[2]["messages"][-2]["content"]
    other = server.requests[3]["messages"][-1]["content"]
    assert first == "x" and other == "y"  # different arguments are not a repeat
    assert second == "x\n[note: you already made this exact call once before (first at step 1) and got the same result.]"
    nudge = server.requests[2]["messages"][-1]
    assert nudge["role"] == "user" and "Do not call it again" in nudge["content"]
    assert server.requests[2]["messages"][-2]["role"] == "tool"
    repeats = [e for e in events(result) if e["kind"] == "notice" and e.get("about") == "repeated_call"]
    assert len(repeats) == 1 and repeats[0]["call_id"] == result.records[1].calls[0].id
    assert repeats[0]["message"].startswith("echo repeated")


def test_a_repeated_failing_call_must_change_and_is_not_an_invitation_to_answer(scripted, tmp_path) -> None:
    # code last_minute_tokyo: the same failing program twice (`from tools import ...` refused), then "If the
    # results so far answer every part of the task, reply now with the final answer" -> an invented `1200.`.
    program = "from travel_tools import find_flights\nprint(find_flights('Tokyo'))"
    server = scripted([call("run_code", code=program), call("run_code", code=program),
                       call("run_code", code="print(echo('Tokyo'))"), reply("Tokyo")])
    with agent(server, tmp_path, mode="code", sandbox="none", act_first="off") as a:
        result = a.run("Find flights to Tokyo.")
    repeated = server.requests[2]["messages"]
    assert repeated[-2]["role"] == "tool" and "ModuleNotFoundError" in repeated[-2]["content"]
    message = repeated[-1]["content"]
    assert message.startswith("You repeated the same run_code call and it failed again") and "fails as written" in message
    assert "final answer" not in message and "The task was:\nFind flights to Tokyo." in message
    assert result.answer == "Tokyo"


# ----------------------------------------------------------------------------- arguments


def test_python_style_native_arguments_are_repaired_and_marked(scripted, tmp_path) -> None:
    ECHOED.clear()
    server = scripted([calls(("echo", "{'text': 'hi',}")), reply("ok")])
    with agent(server, tmp_path) as a:
        result = a.run("say hi")
    assert ECHOED == ["hi"]
    replayed = server.requests[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(replayed) == {"text": "hi"}
    [step] = [e for e in events(result) if e["kind"] == "reply" and e["tool_calls"]]
    assert step["tool_calls"][0]["recovered"] == "arguments"


def test_arguments_that_cannot_be_parsed_are_replayed_as_valid_json(scripted, tmp_path) -> None:
    server = scripted([calls(("echo", '{"text": "unterminated')), reply("ok")])
    with agent(server, tmp_path) as a:
        a.run("say hi")
    replayed = server.requests[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(replayed) == {"_unparsed": '{"text": "unterminated'}
    assert "not valid JSON" in server.requests[1]["messages"][2]["content"]


# ----------------------------------------------------------------------------- server errors


@pytest.mark.parametrize("preset", ["llamacpp", "vllm", "ollama"])
def test_the_same_500_twice_is_permanent_on_a_local_server(scripted, preset: str) -> None:
    server = scripted([fault("500", message="template error")] * 2 + [reply("never sent")])
    model = ModelClient("m", base_url=server.base_url, preset=preset, deadline=30)
    with pytest.raises(ModelError, match="same error twice"):
        model.chat([{"role": "user", "content": "hi"}])
    model.close()
    assert len(server.requests) == 2


@pytest.mark.parametrize("preset", ["openai", "deepseek", "openrouter", None])  # None: a URL of no preset
def test_the_same_500_twice_is_retried_on_a_hosted_api(scripted, preset: str | None) -> None:
    server = scripted([fault("500", message="try again")] * 2 + [reply("third time")])
    model = ModelClient("m", base_url=server.base_url, preset=preset, api_key="k", deadline=30)
    reply_ = model.chat([{"role": "user", "content": "hi"}])
    model.close()
    assert (reply_.content, reply_.attempts, len(server.requests)) == ("third time", 3, 3)


def test_different_500s_are_still_retried(scripted) -> None:
    server = scripted([fault("500", message="one"), fault("500", message="two"), reply("ok")])
    model = ModelClient("m", base_url=server.base_url, api_key="k", deadline=30)
    assert model.chat([{"role": "user", "content": "hi"}]).content == "ok"
    model.close()


def test_request_timeout_raises_the_default_deadline() -> None:
    model = ModelClient("m", base_url="http://127.0.0.1:9/v1", api_key="k", request_timeout=900)
    assert model.deadline == 900 and model.request_timeout == 900
    model.close()


# ----------------------------------------------------------------------------- local prompts


def test_local_presets_get_the_short_prompts(scripted, tmp_path, workspace) -> None:
    server = scripted([reply("ok")] * 2)
    with Agent(tools=builtin_tools(workspace), mode="code", preset="llamacpp", base_url=server.base_url,
               workspace=workspace, console=False, runs_dir=None) as a:
        a.run("x")
    with Agent(tools=[echo], mode="react", preset="llamacpp", base_url=server.base_url, console=False,
               runs_dir=None) as a:
        a.run("x")
    code_system = server.requests[0]["messages"][0]["content"]
    # The shape of a call in placeholders, no worked program (the 1.5B copied one into its tasks).
    assert '{"name": "run_code", "arguments": {"code": "<the whole program, lines separated by \\n>"}}' in code_system
    assert "get_price" not in code_system
    react_system = server.requests[1]["messages"][0]
    assert react_system["role"] == "system" and react_system["content"].count("\n") == 0
    assert "plain text" in react_system["content"]


def test_hosted_models_keep_the_standard_prompts(scripted, tmp_path) -> None:
    server = scripted([reply("ok")])
    with agent(server, tmp_path) as a:
        a.run("x")
    assert server.requests[0]["messages"][0]["role"] == "user"  # react without search: no system prompt


def test_unknown_prompt_style_is_refused(scripted, tmp_path) -> None:
    server = scripted([])
    with pytest.raises(ValueError, match="unknown prompt variant 'tiny'; choose one of: standard, local"):
        agent(server, tmp_path, prompts="tiny")


# ----------------------------------------------------------------------------- run_code


def test_code_mode_text_call_to_an_inner_function_runs_as_a_program(scripted, tmp_path, workspace) -> None:
    (workspace / "a.txt").write_text("hello from a\n")
    server = scripted([reply('{"name": "read_file", "arguments": {"path": "a.txt"}}'), reply("hello")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("read a.txt")
    assert server.requests[1]["messages"][-1]["content"].startswith("hello from a")
    assert result.records[0].calls[0].name == "run_code"
    assert result.records[0].recovered == "json->code"


def test_run_code_dedents_and_failed_programs_are_errors(scripted, tmp_path, workspace) -> None:
    indented = "    x = 6\n    print(x * 7)\n"
    server = scripted([call("run_code", code=indented), call("run_code", code="1/0"), reply("42")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("six times seven")
    ok, failed = (r.calls[0] for r in result.records[:2])
    assert ok.result.strip() == "42" and ok.error is False
    assert "ZeroDivisionError" in failed.result and failed.error is True
    results = [e for e in events(result) if e["kind"] == "tool_result"]
    assert [e["error"] for e in results] == [False, True]


def test_tools_can_be_imported_from_a_module_named_tools(scripted, tmp_path, workspace) -> None:
    # Recorded from the 1.5B on M3ToolEval: `from tools import find_flights, ...` (ModuleNotFoundError before).
    (workspace / "a.txt").write_text("hello from a\n")
    program = "from tools import read_file\nimport tools\nprint(read_file('a.txt').strip(), tools.list_dir is list_dir)"
    server = scripted([call("run_code", code=program), reply("hello from a")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("read a.txt")
    ran = result.records[0].calls[0]
    assert ran.error is False and ran.result.strip() == "hello from a True"


def test_run_code_and_final_answer_import_from_tools_and_other_names_list_the_tools(scripted, tmp_path,
                                                                                   workspace) -> None:
    # Recorded from the 1.5B (code interstellar_trade_transaction): `from tools import run_code, final_answer`
    # in 6 programs in a row, each an ImportError naming only run_code; the request had offered both as tools.
    (workspace / "a.txt").write_text("hello from a\n")
    program = ("from tools import run_code, final_answer\nimport tools\nassert not hasattr(tools, 'nope')\n"
               "text = read_file('a.txt').strip()\nfinal_answer(text)")
    server = scripted([call("run_code", code=program), call("run_code", code="run_code('print(1)')"),
                       call("run_code", code="from tools import fetch_page"), reply("hello from a")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("read a.txt")
    shown, nested, unknown = (r.calls[0] for r in result.records[:3])
    assert shown.error is False and shown.result.strip() == "Answer: hello from a"
    assert nested.error is True and "run_code is the tool that runs this program" in nested.result
    assert unknown.error is True and "cannot import name 'fetch_page' from 'tools'" in unknown.result
    assert "; the tools are: " in unknown.result and "run_code" not in unknown.result.split("the tools are:")[1]
    assert "read_file" in unknown.result and "list_dir" in unknown.result


def test_empty_definitions_of_tools_are_skipped_and_the_tools_called(scripted, tmp_path, workspace) -> None:
    # Recorded from the 1.5B (code cheapest_new_york_trip): the program declared `def find_flights(...): pass`
    # and the other tools before calling them, so every call returned None ('NoneType' is not subscriptable), 5 times.
    (workspace / "a.txt").write_text("hello from a\n")
    declared = ("def read_file(path: str) -> str:\n    # Implementation of reading\n    pass\n\n"
                "def list_dir(path='.'):\n    \"\"\"Lists.\"\"\"\n    ...\n\n"
                "text = read_file('a.txt')\nprint(text.strip())\nprint(1 / 0)\n")
    own = "def read_file(path):\n    return 'mine'\n\nprint(read_file('a.txt'))"
    server = scripted([call("run_code", code=declared), call("run_code", code=own), reply("hello from a")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace,
               prompts="local") as a:  # the small-model prompt set (the local presets' default)
        result = a.run("read a.txt")
    skipped, kept = (r.calls[0] for r in result.records[:2])
    lines = skipped.result.splitlines()
    assert lines[0] == "hello from a" and "line 11" in skipped.result  # the program's own line numbers
    assert lines[-1] == ("[note: your empty definitions of read_file, list_dir were skipped: those are the tools, "
                         "call them without defining them]")
    assert kept.result.splitlines()[0] == "mine" and "replaced the tools read_file" in kept.result  # ran as written


def test_with_the_standard_prompts_an_empty_definition_is_the_programs_own(scripted, tmp_path, workspace) -> None:
    # A strong model's `def write_file(...): pass` may be a deliberate dry run: it must not become real calls.
    program = ("def write_file(path, content, append=False):\n    pass\n\n"
               "for name in ['a.txt', 'b.txt']:\n    write_file(name, 'x')\nprint('dry run done')")
    server = scripted([call("run_code", code=program), reply("ok")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace,
               prompts="standard") as a:
        result = a.run("show what you would write")
    ran = result.records[0].calls[0]
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert ran.result.splitlines()[0] == "dry run done" and "empty definitions" not in ran.result
    assert "replaced the tools write_file with its own code and called no tool" in ran.result


def test_a_program_that_replaces_the_tools_with_its_own_code_and_calls_none_is_told(scripted, tmp_path,
                                                                                   workspace) -> None:
    # Recorded from the 1.5B (code taxed_commodity_export): `convert_currency = lambda base_price, rate: ...` for
    # every trade tool, no tool called, `Answer: 420.0`; act_first then said "every tool call so far failed".
    (workspace / "a.txt").write_text("hello from a\n")
    own = "read_file = lambda path: 'mine'\nprint(read_file('a.txt'))"
    wrapped = "list_dir = list_dir\nprint(read_file('a.txt').strip())"
    server = scripted([call("run_code", code="print(1/0)"), call("run_code", code=own), reply("Answer: mine"),
                       call("run_code", code=wrapped), reply("hello from a")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace,
               preset="llamacpp") as a:
        result = a.run("read a.txt and tell me what it says")
    replaced, used = result.records[1].calls[0], result.records[3].calls[0]
    assert replaced.error is False and replaced.result.splitlines()[-1] == (
        "[note: your program replaced the tools read_file with its own code and called no tool: call the tools "
        "themselves]")
    assert used.result.strip() == "hello from a"  # a tool was called: no note
    sent_back = server.requests[3]["messages"][-1]["content"]
    assert "every tool call so far failed" not in sent_back and "without using any tool" in sent_back


def test_a_name_from_an_earlier_program_gets_a_fresh_namespace_hint(scripted, tmp_path, workspace) -> None:
    # Recorded from the 1.5B: it used `log_files` from an earlier run_code call five times in a row.
    server = scripted([call("run_code", code="log_files = [1, 2]\nprint(log_files)"),
                       call("run_code", code="print(len(log_files))"), call("run_code", code="print(other)"),
                       reply("ok")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("count")
    hinted, plain = result.records[1].calls[0].result, result.records[2].calls[0].result
    assert "NameError" in hinted and "log_files was set by an earlier run_code call" in hinted
    assert "NameError" in plain and "earlier run_code call" not in plain


def test_a_name_a_failed_program_never_set_gets_no_fresh_namespace_hint(scripted, tmp_path, workspace) -> None:
    # Recorded from the 1.5B (code reverse_transcribe on the landed code): `rna = reverse(rna)` failed with a NameError
    # at that line; sent again, the error said rna "was set by an earlier run_code call", which it never was.
    program = "dna = 'AUG'\nrna = list(rna)\nprint(rna)"
    server = scripted([call("run_code", code=program), call("run_code", code=program),
                       call("run_code", code="print(dna)"), reply("ok")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("go")
    first, again, used = (r.calls[0].result for r in result.records[:3])
    assert "NameError" in again and "earlier run_code call" not in again
    assert "dna was set by an earlier run_code call" in used  # set before the failing line: it was set


def test_the_same_call_written_twice_in_one_reply_runs_once(scripted, tmp_path) -> None:
    block = '```json\n{"name": "echo", "arguments": {"text": "x"}}\n```'
    ECHOED.clear()
    server = scripted([reply(f"{block}\n{block}"), reply("x")])
    with agent(server, tmp_path) as a:
        a.run("echo x")
    assert ECHOED == ["x"]


def test_refused_processes_point_to_run_shell(scripted, tmp_path, workspace) -> None:
    server = scripted([call("run_code", code="import subprocess\nsubprocess.run(['ls'])"),
                       call("run_code", code="import os\nprint('rc', os.system('ls'))"), reply("ok")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("list files")
    refused, system = (r.calls[0] for r in result.records[:2])
    assert "PermissionError: no processes here: use run_shell()" in refused.result and refused.error is True
    assert "os.system: no processes here: use run_shell()" in system.result and "rc 32512" in system.result


# ----------------------------------------------------------------------------- options


def test_run_passes_temperature_max_tokens_and_timeout(scripted, tmp_path, capsys) -> None:
    server = scripted([reply("ok")])
    args = ["run", "--mode", "react", "--base-url", server.base_url, "--model", "m", "--no-builtin", "--quiet",
            "--runs-dir", str(tmp_path), "--temperature", "0.2", "--max-tokens", "64", "--request-timeout", "900",
            "hi"]
    assert main(args) == 0
    body = server.requests[0]
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64


@pytest.mark.parametrize("flag, value", [("--temperature", "3"), ("--max-tokens", "0"), ("--request-timeout", "-1")])
def test_bad_model_options_are_one_clear_error(flag, value, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", flag, value, "hi"])
    assert info.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err


def test_bench_warns_when_jobs_exceed_the_server_slots(scripted) -> None:
    single = scripted([], slots=1)
    assert server_slots(single.base_url) == 1
    warning = jobs_warning(single.base_url, True, 4)
    assert warning is not None and "--jobs 4" in warning and "total_slots=1" in warning and "--jobs 1" in warning
    assert jobs_warning(single.base_url, True, 1) is None
    assert jobs_warning(scripted([], slots=4).base_url, True, 4) is None
    assert jobs_warning(scripted([]).base_url, True, 4) is None  # the server does not say: no guess


def test_bench_takes_the_model_options_and_keeps_them_for_resume(tmp_path) -> None:
    from toolmode.bench.cli import _settings, build_parser
    from toolmode.bench.results import read_settings, write_settings

    args = build_parser().parse_args(["--temperature", "0.2", "--max-tokens", "512", "--request-timeout", "900"])
    settings = _settings(args, {})
    assert (settings["temperature"], settings["max_tokens"], settings["request_timeout"]) == (0.2, 512, 900.0)
    write_settings(tmp_path, settings)
    resumed = _settings(build_parser().parse_args([]), read_settings(tmp_path))
    assert (resumed["temperature"], resumed["max_tokens"], resumed["request_timeout"]) == (0.2, 512, 900.0)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-tokens", "0"])


# ----------------------------------------------------------------------------- history, empty replies, task


def test_a_call_read_from_text_is_replayed_as_a_native_call_only(scripted, tmp_path) -> None:
    written = 'Let me echo it.\n```json\n{"name": "echo", "arguments": {"text": "hi"}}\n```'
    server = scripted([reply(written), calls(("echo", '{"text": "again"}')), reply("done")])
    with agent(server, tmp_path) as a:
        result = a.run("say hi")
    assert result.answer == "done"
    replayed = server.requests[1]["messages"][-2]
    assert replayed["role"] == "assistant" and replayed["content"] is None  # the template renders the call
    assert json.loads(replayed["tool_calls"][0]["function"]["arguments"]) == {"text": "hi"}
    trace_reply = next(e for e in events(result) if e["kind"] == "reply")
    assert trace_reply["content"] == written  # the trace keeps what the model wrote


def test_a_native_call_keeps_its_text(scripted, tmp_path) -> None:
    server = scripted([{"content": "Echoing.", "tool_calls": [{"name": "echo", "arguments": '{"text": "a"}'}]},
                       reply("done")])
    with agent(server, tmp_path) as a:
        a.run("say a")
    assert server.requests[1]["messages"][-2]["content"] == "Echoing."


def test_an_empty_reply_is_not_the_answer(scripted, tmp_path) -> None:
    server = scripted([call("echo", text="x"), reply(""), reply("the answer: x")])
    with agent(server, tmp_path) as a:
        result = a.run("echo x")
    assert result.answer == "the answer: x" and result.steps == 3
    nudge = server.requests[2]["messages"][-1]
    assert nudge["role"] == "user" and nudge["content"].startswith("Your reply was empty.")
    assert [e["about"] for e in events(result) if e["kind"] == "notice"] == ["empty_reply"]


def test_empty_replies_are_sent_back_twice_then_taken(scripted, tmp_path) -> None:
    server = scripted([reply(""), reply("  \n"), reply("")])
    with agent(server, tmp_path, max_steps=5) as a:
        result = a.run("echo x")
    assert result.stopped == "answer" and result.answer == "" and result.steps == 3


def test_the_repeat_message_restates_a_short_task_only(scripted, tmp_path) -> None:
    script = [call("echo", text="x"), call("echo", text="x"), reply("x")]
    server = scripted(script)
    with agent(server, tmp_path) as a:
        a.run("Echo x, then say which letter it was.")
    assert "The task was:\nEcho x, then say which letter it was.\n" in server.requests[2]["messages"][-1]["content"]
    server = scripted(script)
    with agent(server, tmp_path) as a:
        a.run("Echo x. " + "Context. " * 200)
    assert "The task was" not in server.requests[2]["messages"][-1]["content"]


def test_a_program_that_reaches_for_the_network_is_pointed_at_the_tools(scripted, tmp_path, workspace) -> None:
    # Recorded from the 1.5B (code price_of_legendary_wand, and the other web tasks): `import requests` and a
    # made-up URL, three times, then `Answer: Error`; the browsing tools were never called.
    program = "import requests\nprint(requests.get('https://api.example.com/wand').json())"
    server = scripted([call("run_code", code=program), reply("ok")])
    with agent(server, tmp_path, tools=builtin_tools(workspace), mode="code", workspace=workspace) as a:
        result = a.run("price of the wand")
    failed = result.records[0].calls[0]
    assert failed.error is True and "No module named 'requests'" in failed.result
    assert "there is no network in the sandbox: look things up by calling the tools" in failed.result
    assert "read_file" in failed.result.splitlines()[-1]
