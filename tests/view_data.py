"""Folders for the `toolmode view` tests: real traces (an Agent on the scripted server), some of them hostile.

Everything a model controls is filled with HOSTILE: markup that would run script if it were parsed as HTML,
`javascript:` links, a terminal escape, bidi overrides and zero-width characters. A script that ran would
change `document.title` or set `window.__pwned`; the browser tests check that neither happens. Other traces
are damaged the way real ones are: bytes that are not UTF-8, a last line cut by a crash, unknown event
kinds, NaN, nesting deep enough to break a naive JSON reader.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolmode import Agent, tool
from toolmode.testing import ScriptedModelServer, call, reply
from toolmode.testing.runs import record_runs
from toolmode.view.folder import Folder
from toolmode.view.server import ViewServer

CONTROLS = "\x1b[31mRED\x1b[0m \u202eevil\u202c \u2066iso\u2069 zero\u200bwidth "
MARKUP = ('<script>document.title="PWNED";window.__pwned=1</script></script>'
          '<img src=x onerror="window.__pwned=2"><a href="javascript:window.__pwned=3">click</a> '
          'javascript:window.__pwned=4')
HOSTILE = CONTROLS + MARKUP
BIG = "x" * 1_000_000  # a 1 MB string


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@dataclass
class Traces:
    """The paths (relative to the folder) of the traces the tests look at."""

    folder: Path
    hostile: str
    code: str
    big: str
    hundred: str
    plain: list[str]
    bad_utf8: str
    torn: str
    odd: str


def _rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()


def _agent_run(runs: Path, script: list[dict], task: str, mode: str = "react") -> Path:
    workspace = runs.parent / "workspace"
    workspace.mkdir(exist_ok=True)
    with ScriptedModelServer(script) as server, Agent(
        tools=[echo], mode=mode, model="deepseek-v4-flash", base_url=server.base_url, runs_dir=runs,
        max_result_chars=0, workspace=workspace,
    ) as agent:
        result = agent.run(task)
    assert result.trace_path is not None
    return Path(result.trace_path)


def build(folder: Path) -> Traces:
    """Real runs in `folder/runs`, then copies damaged the way crashes and plants damage them."""
    runs = folder / "runs"
    hostile = _agent_run(runs, [call("echo", text=HOSTILE), reply(HOSTILE)], HOSTILE)
    code = _agent_run(runs, [call("run_code", code=f"print({HOSTILE!r})\nx = 1  # {HOSTILE}"), reply("printed")],
                      "Print the hostile text", mode="code")
    big = _agent_run(runs, [call("echo", text=BIG), reply(BIG)], "Echo a megabyte")
    hundred = record_runs(runs, 1, calls=99)[0]
    plain = record_runs(runs, 3)
    damaged = folder / "runs" / "damaged"
    damaged.mkdir()
    lines = plain[0].read_bytes().split(b"\n")[:-1]  # whole lines
    bad_utf8 = damaged / "bad-utf8.jsonl"
    end = json.loads(lines[-1])
    end["answer"] = "ANSWER-MARK"
    raw_end = json.dumps(end).encode().replace(b"ANSWER-MARK", b"caf\xe9 \xff\xfe done")
    notice = b'{"kind": "notice", "t": 0.5, "message": "bytes: \xc3\x28 \xa0\xa1"}'
    bad_utf8.write_bytes(b"\n".join([*lines[:-1], notice, raw_end]) + b"\n")
    torn = damaged / "torn.jsonl"
    torn.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])
    odd = damaged / "odd.jsonl"
    extra = [b'{"kind": "telepathy", "t": 0.1, "step": 1, "thought": "<b>bold?</b>"}',
             b'{"kind": "reply", "t": 0.2, "step": 2, "usage": {"prompt_tokens": NaN}, "cost": Infinity}',
             b"[" * 100_000 + b"]" * 100_000,
             b"not json at all"]
    odd.write_bytes(b"\n".join([*lines[:2], *extra, *lines[2:]]) + b"\n")
    rel = lambda p: _rel(folder, p)  # noqa: E731
    return Traces(folder, rel(hostile), rel(code), rel(big), rel(hundred), [rel(p) for p in plain],
                  rel(bad_utf8), rel(torn), rel(odd))


@contextmanager
def serving(folder: Path) -> Iterator[ViewServer]:
    """A ViewServer on a free port in a thread of this process, shut down afterwards."""
    server = ViewServer(Folder(folder))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        server.folder.close()
