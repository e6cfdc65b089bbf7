"""The console view: nothing a model or tool controls reaches the terminal raw, and results name their call.

The runs go through the real loop against the scripted model server; the console is a rich Console that
records what it writes (force_terminal, no colours: any ESC byte in the output came from the model).
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from toolmode import Agent, tool
from toolmode.console import ConsoleSink, plain, safe
from toolmode.testing import call, calls, fault, reply

CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write "evil" to the terminal's clipboard
CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"
BIDI = "\u202e"  # right-to-left override: reorders what follows on screen
HOSTILE = f"{CLIPBOARD}{CLEAR}{TITLE}{BIDI}txt.exe [bold]big[/bold] [link=https://evil.example]click[/link] :smile: \r"


def recording_console() -> tuple[Console, io.StringIO]:
    """A terminal console (so rich would pass escapes through) without colours, recording its output."""
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, color_system=None, width=400, record=True), buf


def run_with_console(server: Any, tmp_path: Path, tools: list[Any], **kwargs: Any) -> tuple[Any, str, Console]:
    console, buf = recording_console()
    sink = ConsoleSink(console, width=400, **kwargs)
    agent = Agent(tools=tools, mode="react", model="m", base_url=server.base_url, console=False,
                  sinks=[sink], runs_dir=tmp_path / "runs")
    with agent:
        result = agent.run(f"task {HOSTILE}")
    return result, buf.getvalue(), console


@tool
def hostile_result(path: str) -> str:
    """Return text full of terminal escapes, whatever the path."""
    return f"content of {path}: {HOSTILE}"


def assert_nothing_raw(raw: str) -> None:
    assert "\x1b" not in raw and "\x07" not in raw and BIDI not in raw and "\r" not in raw
    assert "😄" not in raw  # :smile: is not turned into an emoji


def test_results_arguments_answer_and_tool_names_are_escaped(scripted, tmp_path: Path) -> None:
    server = scripted([
        {"content": f"thinking {HOSTILE}", "tool_calls": [{"name": "hostile_result", "arguments": {"path": HOSTILE}}]},
        call(f"{CLEAR}no_such_tool"),  # an unknown tool name, chosen by the model, in an error result
        reply(f"answer {HOSTILE}\nsecond line"),
    ])
    result, raw, console = run_with_console(server, tmp_path, [hostile_result])
    assert result.ok
    assert_nothing_raw(raw)
    text = console.export_text()
    # printed literally and visibly: the escapes as \x.. text, the markup as written
    assert "\\x1b]52;c;ZXZpbA==\\x07" in text and "\\x1b[2J" in text and "\\u202e" in text
    assert "[bold]big[/bold] [link=https://evil.example]click[/link] :smile:" in text
    assert "← hostile_result: content of" in text
    assert "← \\x1b[2Jno_such_tool: Error:" in text
    assert "thinking \\x1b]52" in text  # the reply's text beside its call
    assert "answer \\x1b]52" in text and "\nsecond line" in text  # the answer keeps its lines


def test_error_stop_line_is_escaped(scripted, tmp_path: Path) -> None:
    # The server's error message (it echoes model-controlled text) ends the run: printed escaped.
    server = scripted([{"fault": "status", "status": 400, "message": f"bad {HOSTILE}"}])
    result, raw, console = run_with_console(server, tmp_path, [hostile_result])
    assert result.stopped == "error"
    assert_nothing_raw(raw)
    assert "stopped: error" in console.export_text()


def test_quiet_answer_is_escaped(scripted, tmp_path: Path) -> None:
    server = scripted([reply(f"just {HOSTILE}")])
    _, raw, console = run_with_console(server, tmp_path, [hostile_result], quiet=True)
    assert_nothing_raw(raw)
    assert console.export_text().startswith("just \\x1b]52")


def test_parallel_results_name_their_call(scripted, tmp_path: Path) -> None:
    """The first call finishes last; each result line still says which call it answers."""
    first_may_finish = threading.Event()

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        if path == "slow.txt":
            first_may_finish.wait(5)
        else:
            first_may_finish.set()
        return f"text of {path}"

    server = scripted([
        calls(("read_file", {"path": "slow.txt"}), ("read_file", {"path": "fast.txt"})),
        reply("done"),
    ])
    _, _, console = run_with_console(server, tmp_path, [read_file])
    lines = [line.strip() for line in console.export_text().splitlines()]
    results = [line for line in lines if line.startswith("←")]
    assert results == [
        '← #2 read_file({"path": "fast.txt"}): text of fast.txt',
        '← #1 read_file({"path": "slow.txt"}): text of slow.txt',
    ]
    assert '→ #1 read_file({"path": "slow.txt"})' in lines and '→ #2 read_file({"path": "fast.txt"})' in lines


def test_safe_and_plain() -> None:
    assert plain("a\x1b[2Jb\u202ec\td\ne") == "a\\x1b[2Jb\\u202ec\td\ne"
    assert safe("[bold]x[/bold]\x07") == "\\[bold]x\\[/bold]\\x07"
    assert safe(3) == "3"


def test_trailing_backslash_cannot_swallow_the_closing_tag() -> None:
    console, _ = recording_console()
    text = "ends with a backslash \\"
    console.print(f"[dim]{safe(text)}[/] after", emoji=False)
    assert console.export_text() == "ends with a backslash \\ after\n"


def test_a_cancelled_run_is_said_once(scripted, tmp_path: Path) -> None:
    arrived = threading.Event()

    def script(request: dict, index: int) -> dict:
        arrived.set()  # the run is under way: a cancel now reaches it
        return fault("slow", delay=30, then=reply("late"))

    server = scripted(script)
    console, _ = recording_console()
    with Agent(mode="react", model="m", base_url=server.base_url, sinks=[ConsoleSink(console, width=400)]) as agent:
        threading.Thread(target=lambda: arrived.wait(60) and agent.cancel(), daemon=True).start()
        result = agent.run("go")
    assert result.stopped == "cancelled"
    lines = [line for line in console.export_text().splitlines() if line.startswith("stopped:")]
    assert lines == ["stopped: cancelled"]
