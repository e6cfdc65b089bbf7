"""`toolmode view`'s reading of traces: the list's summary from a trace's ends, the whole run, damaged files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.view_data import BIG, HOSTILE, Traces, build

from toolmode.testing.runs import record_runs
from toolmode.view import jsonlines
from toolmode.view.folder import Folder, RunList
from toolmode.view.highlight import python_tokens


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    return build(tmp_path_factory.mktemp("view-loader"))


@pytest.fixture(scope="module")
def runs(traces: Traces) -> RunList:
    folder = Folder(traces.folder)
    yield RunList(folder)
    folder.close()


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def strict_json(value: object) -> object:
    """What the server sends: JSON a browser can parse (no NaN or Infinity)."""
    return json.loads(json.dumps(value, allow_nan=False))


def test_the_list_summary_matches_the_runs_own_record(traces: Traces, runs: RunList) -> None:
    listing = runs.listing()
    rows = {r["path"]: r for r in listing["runs"]}
    for rel in [*traces.plain, traces.hundred]:
        end = events(traces.folder / rel)[-1]
        row = rows[rel]
        assert end["kind"] == "run_end" and row["finished"] and not row["torn"]
        assert (row["steps"], row["prompt_tokens"], row["completion_tokens"], row["cached_tokens"]) == (
            end["steps"], end["usage"]["prompt_tokens"], end["usage"]["completion_tokens"],
            end["usage"]["cached_tokens"])
        assert (row["cost"], row["wall_time"], row["stopped"], row["answer"]) == (
            end["cost"], end["wall_time"], "answer", end["answer"])
        assert (row["mode"], row["model"]) == ("react", "deepseek-v4-flash")
    assert rows[traces.hundred]["steps"] == 100
    assert rows[traces.hostile]["task"] == HOSTILE  # as written: the page escapes it, the data does not
    assert len(rows[traces.big]["answer"]) == 401  # the list keeps a preview; the run page has it whole
    assert strict_json(listing) == listing


def test_what_is_not_a_trace_is_left_out_of_the_list(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "binary.jsonl").write_bytes(os.urandom(4096))
    (tmp_path / "trace.txt").write_text("not a .jsonl name")
    record_runs(tmp_path / "real", 1)
    folder = Folder(tmp_path)
    try:
        listing = RunList(folder).listing()
    finally:
        folder.close()
    assert [r["path"].split("/")[0] for r in listing["runs"]] == ["real"]


def test_a_run_cut_by_a_crash_lists_as_unfinished_and_keeps_its_steps(traces: Traces, runs: RunList) -> None:
    row = next(r for r in runs.listing()["runs"] if r["path"] == traces.torn)
    assert row["torn"] and not row["finished"] and row["stopped"] == "unfinished"
    whole = [e for e in events(traces.folder / traces.plain[0])]
    last_step = max(e.get("step") or 0 for e in whole[:-1])
    assert row["steps"] == last_step  # from the last whole event
    file = runs.run(traces.torn)
    run = file["runs"][0]
    assert run["end"] is None
    assert any("last line" in p and "cut" in p for p in file["problems"])
    assert len(run["steps"]) == last_step
    assert [i["type"] for s in run["steps"] for i in s["items"]].count("reply") == last_step


def test_bytes_that_are_not_utf8_are_replaced_and_said(traces: Traces, runs: RunList) -> None:
    row = next(r for r in runs.listing()["runs"] if r["path"] == traces.bad_utf8)
    assert row["replaced"] and row["finished"] and row["answer"] == "caf\ufffd \ufffd\ufffd done"
    file = runs.run(traces.bad_utf8)
    assert any("not UTF-8" in p for p in file["problems"])
    notices = [i for s in file["runs"][0]["steps"] for i in s["items"] if i["type"] == "notice"]
    assert notices and "\ufffd" in notices[-1]["message"]
    strict_json(file)


def test_unknown_kinds_nan_and_deep_nesting_are_shown_or_reported_never_fatal(traces: Traces, runs: RunList) -> None:
    file = runs.run(traces.odd)
    run = file["runs"][0]
    items = [i for s in run["steps"] for i in s["items"]]
    unknown = [i for i in items if i["type"] == "event"]
    assert [i["kind"] for i in unknown] == ["telepathy"] and "<b>bold?</b>" in unknown[0]["text"]
    assert run["unknown"] == {"telepathy": 1}
    # NaN / Infinity make a line that is not JSON for a browser: it is reported, not passed on
    assert any("not a JSON object" in p for p in file["problems"])
    assert strict_json(file) == file
    assert run["end"] is not None and run["end"]["stopped"] == "answer"


def test_a_run_page_has_every_step_call_and_result(traces: Traces, runs: RunList) -> None:
    file = runs.run(traces.hundred)
    run = file["runs"][0]
    assert len(run["steps"]) == 100
    for step in run["steps"][:-1]:
        kinds = [i["type"] for i in step["items"]]
        assert kinds == ["reply", "call"], kinds
        call = step["items"][1]
        assert call["name"] == "lookup" and call["ran"] and not call["error"] and call["result"].startswith(
            json.loads(call["arguments"])["key"])
    assert run["steps"][-1]["items"][0]["content"].startswith("Run #0: 99 look-ups")
    assert run["missing"] == []  # the loop writes format 2: the system prompt and every message are there
    assert file["format"] == 2 and len(file["runs"]) == 1


def test_run_code_is_highlighted_and_its_output_kept(traces: Traces, runs: RunList) -> None:
    run = runs.run(traces.code)["runs"][0]
    call = run["steps"][0]["items"][1]
    assert call["name"] == "run_code" and call["code"].startswith("print(")
    assert "".join(text for _, text in call["code_tokens"]) == call["code"]
    assert ["b", "print"] in call["code_tokens"] and any(cls == "c" for cls, _ in call["code_tokens"])
    assert "<script>" in call["result"] and call["pretty"] == ""  # `code` is shown apart; no other argument


def test_megabyte_strings_come_through_whole_on_the_run_page(traces: Traces, runs: RunList) -> None:
    run = runs.run(traces.big)["runs"][0]
    call = run["steps"][0]["items"][1]
    assert json.loads(call["arguments"])["text"] == BIG and call["result"] == BIG
    assert run["end"]["answer"] == BIG


def test_calls_a_reply_asked_for_but_never_ran_are_shown_as_not_run(tmp_path: Path) -> None:
    trace = record_runs(tmp_path, 1, calls=2)[0]
    # the process died after step 2's reply asked for a call: no call events, no later reply, no run_end
    kept = [e for e in events(trace) if not (e["kind"] in ("tool_call", "tool_result") and e["step"] == 2)
            and not (e["kind"] == "reply" and e["step"] > 2) and e["kind"] != "run_end"]
    trace.write_text("".join(json.dumps(e) + "\n" for e in kept))
    folder = Folder(tmp_path)
    try:
        run = RunList(folder).run(trace.name)["runs"][0]
    finally:
        folder.close()
    step2 = run["steps"][1]["items"]
    assert [i["type"] for i in step2] == ["reply", "call"] and step2[1]["ran"] is False
    assert run["end"] is None


def _version2(trace: Path, turns: int) -> None:
    """Rewrite a version 1 trace of `turns` runs in the version 2 layout of docs/CONTRACTS.md."""
    out: list[dict] = [{"kind": "trajectory", "version": 2, "toolmode": "0.2.0", "started": "2026-12-01T10:00:00+00:00"}]
    run = -1
    recorded = [e for e in events(trace) if e["kind"] not in ("trajectory", "message", "carried")]  # to version 1
    for event in recorded:
        if event["kind"] == "run_start":
            run += 1
            event.update(run=run, system="You are <careful>." if run == 0 else None, request={"model": "m"})
            out.append(event)
            if run > 0:
                out.append({"kind": "carried", "t": 0, "from_run": 0, "start": 0, "count": 2})
            base = 2 if run > 0 else 0
            if run == 0:
                out.append({"kind": "message", "t": 0, "index": 0, "step": None, "source": "system", "about": None,
                            "message": {"role": "system", "content": "You are <careful>."}})
            out.append({"kind": "message", "t": 0, "index": base + (run == 0), "step": None, "source": "task",
                        "about": None, "message": {"role": "user", "content": [{"type": "text", "text": "part one"},
                                                                                {"type": "text", "text": "part two"}]}})
            count = base + 2 if run > 0 else 2
        elif event["kind"] == "reply":
            event["sent_messages"] = count
            out.append(event)
            out.append({"kind": "message", "t": 0, "index": count, "step": event["step"], "source": "reply",
                        "about": None, "message": {"role": "assistant", "content": event["content"]}})
            count += 1
        elif event["kind"] == "tool_result":
            out.append(event)
            out.append({"kind": "message", "t": 0, "index": count, "step": event["step"], "source": "policy",
                        "about": "repeated_call", "message": {"role": "user", "content": "Do not <repeat>."}})
            count += 1
        else:
            out.append(event)
    assert run == turns - 1
    trace.write_text("".join(json.dumps(e) + "\n" for e in out))


def test_a_version2_trace_gives_the_prompt_the_messages_and_each_request(tmp_path: Path) -> None:
    trace = record_runs(tmp_path, 1, calls=1)[0]
    _version2(trace, 1)
    folder = Folder(tmp_path)
    try:
        runs = RunList(folder)
        file = runs.run(trace.name)
        row = runs.listing()["runs"][0]
    finally:
        folder.close()
    assert file["format"] == row["format"] == 2 and row["finished"] and row["task"].startswith("#0 ")
    assert file["problems"] == [] and len(file["runs"]) == 1
    run = file["runs"][0]
    assert run["system_prompt"] == "You are <careful>." and run["missing"] == [] and run["unknown"] == {}
    assert [(m["role"], m["source"]) for m in run["messages"]] == [
        ("system", "system"), ("user", "task"), ("assistant", "reply"), ("user", "policy"), ("assistant", "reply")]
    assert run["messages"][1]["content"] == "part one\npart two"
    replies = [i for s in run["steps"] for i in s["items"] if i["type"] == "reply"]
    assert [r["sent_messages"] for r in replies] == [2, 4]
    policy = [i for s in run["steps"] for i in s["items"] if i["type"] == "policy"]
    assert policy == [{"type": "policy", "about": "repeated_call", "role": "user", "content": "Do not <repeat>."}]


def test_a_chat_session_lists_as_one_row_of_its_turns_added_up(tmp_path: Path) -> None:
    """`toolmode chat` writes every turn of a session into one trace (format 1 today): one row, its turns summed."""
    from toolmode import Agent
    from toolmode.testing import ScriptedModelServer, call, reply
    from toolmode.tools import Tool

    def echo(text: str) -> str:
        """Return the text."""
        return text

    with ScriptedModelServer([call("echo", text="a"), reply("one"), reply("two")]) as server, Agent(
            tools=[Tool.from_function(echo)], mode="react", model="deepseek-v4-flash", base_url=server.base_url,
            runs_dir=tmp_path) as agent:
        chat = agent.chat()
        results = [chat.send("#0 first"), chat.send("#0 second")]
        chat.close()
    (trace,) = tmp_path.glob("*.jsonl")
    folder = Folder(tmp_path)
    try:
        runs = RunList(folder)
        row = runs.listing()["runs"][0]
        file = runs.run(trace.name)
    finally:
        folder.close()
    assert row["turns"] == 2 and row["task"] == "#0 first" and row["answer"] == "two"
    assert row["steps"] == 3 == sum(r.steps for r in results)
    assert row["prompt_tokens"] == sum(r.usage.prompt_tokens for r in results)
    assert row["cost"] == pytest.approx(sum(r.cost for r in results))
    assert [r["start"]["task"] for r in file["runs"]] == ["#0 first", "#0 second"]
    assert [[s["step"] for s in r["steps"]] for r in file["runs"]] == [[1, 2], [1]]  # steps of turns not merged


def test_a_session_file_is_shown_turn_by_turn_with_carried_messages(tmp_path: Path) -> None:
    from toolmode import Agent
    from toolmode.testing import ScriptedModelServer, reply

    with ScriptedModelServer([reply("one"), reply("two")]) as server, Agent(
            tools=[], mode="react", model="m", base_url=server.base_url, runs_dir=tmp_path) as agent:
        chat = agent.chat()
        chat.send("#0 first")
        chat.send("#0 second")
        chat.close()
    (trace,) = tmp_path.glob("*.jsonl")
    _version2(trace, 2)
    folder = Folder(tmp_path)
    try:
        file = RunList(folder).run(trace.name)
    finally:
        folder.close()
    first, second = file["runs"]
    assert (first["start"]["task"], second["start"]["task"]) == ("#0 first", "#0 second")
    assert [s["step"] for s in first["steps"]] == [1] == [s["step"] for s in second["steps"]]  # not merged
    assert second["messages"][0]["carried"] and second["messages"][0]["content"] == "You are <careful>."
    assert second["system_prompt"] is None and "the system prompt" not in second["missing"]  # recorded: none


def test_an_unknown_version_is_shown_with_a_warning(tmp_path: Path) -> None:
    trace = record_runs(tmp_path, 1)[0]
    trace.write_text(json.dumps({"kind": "trajectory", "version": 9}) + "\n" + trace.read_text())
    folder = Folder(tmp_path)
    try:
        file = RunList(folder).run(trace.name)
    finally:
        folder.close()
    assert "format version 9" in file["problems"][0] and file["runs"][0]["end"]["stopped"] == "answer"


def test_tail_and_head_reads_are_bounded_and_exact(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    last = b'{"kind": "run_end", "answer": "' + b"y" * 300_000 + b'"}'
    path.write_bytes(b'{"kind": "run_start"}\n' + b"z" * 100 + b"\n" + last + b"\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        tail, newline = jsonlines.tail_lines(fd, size, 2)
        assert newline and tail == [b"z" * 100, last]
        assert jsonlines.tail_lines(fd, size, 5)[0] == [b'{"kind": "run_start"}', b"z" * 100, last]
        assert jsonlines.head_lines(fd, 2) == [b'{"kind": "run_start"}', b"z" * 100]
        assert jsonlines.head_lines(fd, 3, limit=1000)[2] == last[:1000]  # cut, so it will not decode
        assert jsonlines.tail_lines(fd, size, 1, limit=1000) == ([], True)  # gives up past the limit
    finally:
        os.close(fd)
    assert jsonlines.decode(b"[" * 100_000 + b"]" * 100_000).value is None
    assert jsonlines.decode(b'{"a": NaN}').value is None
    assert jsonlines.decode(b'"\xff"').replaced


def test_highlighting_gives_back_exactly_the_code() -> None:
    for code in ("import os\nprint('hi')  # c\n", "a\rb\r\r\nc", "x = '''\n", "\ufeffx = 1", "\x1b[2J" * 3, ""):
        assert "".join(text for _, text in python_tokens(code)) == code
    tokens = python_tokens("def f(x):\n    return x and 1.5  # note\n")
    assert ["k", "def"] in tokens and ["f", "f"] in tokens and ["n", "1.5"] in tokens and ["c", "# note"] in tokens
