"""The ported act_first sends what branch `local` sent in the issue-18 evidence runs (Qwen2.5-Coder-1.5B on
M3ToolEval), request for request.

tests/fixtures/local_models/m3/ holds evidence episodes as they ran against llama-server (trace format version
1: the task, the tool definitions sent at each step, every reply and tool result, but no messages) and the
requests `local`'s code sends when the scripted server serves those replies (benchmarks/episode_requests.py
run on `local`'s source; see requests.json's note). The ported code runs the same episodes here: every request
(system prompt, tools, response_format / tool_choice, messages) must be the same, ids of calls read from the text
aside (the core now numbers them `recovered_<step>_<n>`; `local` drew random ones). The suite's task modules are
third-party data beside the repository; these tests skip without them, as tests/test_m3tooleval.py does.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolmode.replay import first_difference, replay
from toolmode.trajectory import read

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "local_models" / "m3"
CANDIDATES = [REPO.parent / "shared" / "data" / "m3tooleval", Path("/work/shared/data/m3tooleval")]
SUITE = next((p for p in CANDIDATES if (p / "tasks" / "__init__.py").is_file()), None)
EPISODES = json.loads((FIXTURES / "requests.json").read_text(encoding="utf-8"))["episodes"]
TRACED = [e for e in EPISODES if e["evidence_trace"]]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("episode_requests", REPO / "benchmarks" / "episode_requests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids_numbered(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests with each id of a call read from the text replaced by its order of appearance."""
    ids: dict[str, str] = {}
    text = re.sub(r"recovered_[0-9a-f]+_[0-9]+", lambda m: ids.setdefault(m.group(0), f"recovered_{len(ids)}"),
                  json.dumps(requests))
    return json.loads(text)  # type: ignore[no-any-return]


def _events(name: str, kind: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == kind]


def test_the_fixture_is_what_the_evidence_runs_sent() -> None:
    assert {e["mode"] for e in EPISODES} == {"code", "react", "hybrid"} and {e["mode"] for e in TRACED} == {"code", "react"}
    for episode in TRACED:
        requests, trace = episode["requests"], episode["evidence_trace"]
        [start] = _events(trace, "run_start")
        assert requests[0]["messages"][-1] == {"role": "user", "content": start["task"]}
        assert {r["model"] for r in requests} == {start["model"]}
        assert len(requests) == len(_events(trace, "reply"))
        tools = {e["step"]: e["schemas"] for e in _events(trace, "tools")}
        for step, request in enumerate(requests, 1):
            sent = tools[max(s for s in tools if s <= step)]
            assert request["tools"] == sent, f"{trace}: step {step}"
    # The recorded verification episode: final_answer at step 1, then a constrained call to the task's tools.
    [verified] = [e for e in TRACED if e["task"].endswith("hex_caesar_combined_decoding")]
    first, second, third = verified["requests"]
    assert first["tools"][-1]["function"]["name"] == "final_answer" and "response_format" in first
    assert "final_answer" not in [t["function"]["name"] for t in second["tools"]] and "response_format" in second
    assert "response_format" not in third


def test_a_greeting_to_the_real_model_was_one_request_and_its_trace_replays() -> None:
    # Recorded with the ported code against the same llama-server and 1.5B (`toolmode run --preset llamacpp
    # --mode code --max-steps 1 hi`): the constrained first reply was a final_answer call, taken at once.
    trace = FIXTURES / "greeting__ported__code.jsonl"
    [run] = read(trace).runs
    assert run.end is not None and (run.end.stopped, run.end.steps) == ("answer", 1)
    assert run.messages is not None and run.messages[-1]["role"] == "assistant"
    assert "response_format" in run.requests[0].body()
    [report] = replay(trace)
    assert report.identical and report.requests == 1, report.summary()


# Episodes whose ending toolmode changed on purpose after the port: what the new request asks (the recorded
# requests must still be sent as they were, then this one comes). react hex_caesar answered `2022` at step 1,
# was sent back, called caesar_decode (result 4b4d5252) and answered `2022` again, which no result holds.
CHANGED = {("message_decoder/hex_caesar_combined_decoding", "react"): "act_first_repeated"}


@pytest.mark.skipif(SUITE is None, reason="M3ToolEval task modules not found")
@pytest.mark.parametrize("episode", EPISODES, ids=[f"{e['task'].split('/')[1]}-{e['mode']}" for e in EPISODES])
def test_the_ported_code_sends_the_requests_local_sent(episode: dict[str, Any], tmp_path: Path) -> None:
    trace = FIXTURES / episode["evidence_trace"] if episode["evidence_trace"] else None
    requests, record = _script().episode_requests(str(SUITE), episode["task"], episode["mode"], trace, tmp_path)
    changed = CHANGED.get((episode["task"], episode["mode"]))
    if changed is not None:
        from toolmode.prompts import PromptSet, packaged

        head = PromptSet.load([packaged("policies.toml")]).text(changed, answer="\0").split("\0")[0]
        assert len(requests) == len(episode["requests"]) + 1, len(requests)
        assert requests[-1]["messages"][-1]["content"].startswith(head), requests[-1]["messages"][-1]
        requests = requests[:-1]
    difference = first_difference(_ids_numbered(episode["requests"]), _ids_numbered(requests))
    assert difference is None, str(difference)
    if trace is None or changed is not None:
        return
    # The episode itself ran the same: the same tool results, step for step, and the same answer.
    ported = read(tmp_path / record["trace"]).runs[0]
    results = [(e.step, e.name, e.arguments, e.result, e.error) for e in ported.of("tool_result")]  # type: ignore[attr-defined]
    assert results == [(e["step"], e["name"], e["arguments"], e["result"], e["error"])
                       for e in _events(trace.name, "tool_result")]
    [end] = _events(trace.name, "run_end")
    assert (record["answer"], record["steps"]) == (end["answer"], end["steps"])
    # The evidence trace (version 1) holds no messages, so it cannot be replayed; the ported run's own can.
    [report] = replay(tmp_path / record["trace"])
    assert report.identical and report.requests == len(requests), report.summary()


LANDED = sorted((FIXTURES / "landed").glob("*.jsonl"))


@pytest.mark.parametrize("trace", LANDED, ids=[t.stem for t in LANDED])
def test_the_landed_codes_real_model_episodes_replay_request_for_request(trace: Path) -> None:
    # Recorded on the 1.5B with the code of this session (benchmarks/local_model.py, commit cb764f8): two solved
    # episodes (code full_alien, hybrid hex_caesar) and a failed one in which the model rewrote the trade tools as
    # lambdas (every program got the "replaced the tools" note, act_first sent its answer back, the repeat check
    # fired). Replaying them checks every request toolmode builds, from the recorded replies and results.
    [run] = read(trace).runs
    assert run.end is not None and run.messages is not None
    [report] = replay(trace)
    assert report.identical and report.requests == run.end.steps, report.summary()


def test_the_landed_failure_episode_shows_the_notes_and_checks_it_was_recorded_with() -> None:
    [run] = read(FIXTURES / "landed" / "trade_calculator__taxed_commodity_export__code.jsonl").runs
    results = [e.result for e in run.of("tool_result")]  # type: ignore[attr-defined]
    assert results and all("replaced the tools convert_currency, calculate_tariff, estimate_final_value" in r
                           for r in results)
    abouts = {e.about for e in run.of("notice")}  # type: ignore[attr-defined]
    assert {"act_first", "repeated_call"} <= abouts
