"""`toolmode replay` on real-model runs: every Qwen2.5-Coder 1.5B recording in tests/fixtures/local_models
(the replies llama.cpp sent, text-written calls, fenced programs, unreadable calls and all) is played
through a full agent run of its bench task, as the recording was made (llamacpp preset: local prompts,
code blocks recovered); the trace that run writes is then replayed, and must match request for request."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from toolmode import Agent
from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.suite import builtin_suite, select
from toolmode.bench.task import TaskEnv
from toolmode.cli import main
from toolmode.replay import replay
from toolmode.trace import read

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "local_models").glob("*qwen2.5-coder-1.5b*.json"))


def _item(reply: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"content": reply["content"], "finish_reason": reply.get("finish_reason")}
    if reply["tool_calls"]:
        item["tool_calls"] = reply["tool_calls"]
    return item


def test_there_are_recordings_to_replay() -> None:
    assert len(FIXTURES) >= 20


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_a_recorded_real_model_run_replays_request_for_request(scripted, tmp_path: Path, fixture: Path,
                                                                capsys) -> None:
    data = json.loads(fixture.read_text(encoding="utf-8"))
    server = scripted([_item(r) for r in data["replies"]])
    [task] = select(builtin_suite(), [data["task"]])
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with ExitStack() as stack:
        pages = stack.enter_context(FixtureServer(task.pages(1))).base_url if task.pages else None
        env = TaskEnv(workspace, 1, task.build(workspace, 1), pages, data["mode"])
        agent = stack.enter_context(Agent(
            task.tools(env), data["mode"], model="qwen2.5-coder-1.5b", preset="llamacpp", base_url=server.base_url,
            workspace=workspace, runs_dir=tmp_path / "runs", max_steps=6,
        ))
        result = agent.run(task.render_prompt(env))
    recorded = read(result.trace_path).runs[0]
    assert [r.body() for r in recorded.requests] == server.requests  # the trace holds every request as sent
    [report] = replay(result.trace_path)
    assert report.identical, report.summary()
    assert report.requests == len(server.requests) >= 1
    assert main(["replay", str(result.trace_path)]) == 0
    assert capsys.readouterr().out.strip() == f"run 0: replayed {report.requests} requests: identical"
