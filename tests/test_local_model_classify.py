"""benchmarks/local_model.py `classify` reads toolmode's part in a wrong answer from the trace (issue 18: it
called all 26 toolmode failures of the evidence runs `model`). Episodes are run against the scripted server
with the checks off (as at the commits of the evidence runs), then with them on."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from toolmode import Agent, tool
from toolmode.testing import call, reply

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("local_model", REPO / "benchmarks" / "local_model.py")
assert spec is not None and spec.loader is not None
local_model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(local_model)


@tool
def find_flights(to: str) -> list[int]:
    """Find the prices of flights to a city."""
    if to != "Tokyo":
        raise KeyError(to)
    return [165, 350]


def classified(server: Any, tmp_path: Path, task: str, **kwargs: Any) -> tuple[str | None, str]:
    with Agent(model="m", base_url=server.base_url, api_key="k", tools=[find_flights], runs_dir=tmp_path / "runs",
               console=False, **kwargs) as agent:
        result = agent.run(task)
    record = {"ok": False, "stopped": result.stopped, "answer": result.answer, "reason": "wrong answer",
              "trace": str(Path(result.trace_path).relative_to(tmp_path))}
    return local_model.classify(record, tmp_path)


def test_an_error_text_taken_as_the_answer_is_toolmodes(scripted, tmp_path) -> None:
    # react reverse_transcribe / code cheapest_new_york: the answer was the failed call's error text.
    server = scripted([call("find_flights", to="Tokio"), reply("Error: KeyError: 'Tokio'")])
    cls, why = classified(server, tmp_path, "Find the cheapest flight to Tokyo.", act_first="off")
    assert cls == "toolmode" and "not an answer (copied error)" in why and "all failed" in why


def test_a_program_that_called_no_tool_is_toolmodes_part(scripted, tmp_path) -> None:
    # code people_in_sales: a program over invented data, no tool called, its number answered.
    server = scripted([call("run_code", code="print(min([300, 200]))"), reply("Answer: 200")])
    cls, why = classified(server, tmp_path, "Find the cheapest flight to Tokyo.", act_first="off", mode="code",
                          sandbox="none")
    assert cls == "toolmode" and "code_run calls 0" in why


def test_a_wrong_answer_from_a_working_call_is_the_models(scripted, tmp_path) -> None:
    server = scripted([call("find_flights", to="Tokyo"), reply("Answer: 350")])
    cls, why = classified(server, tmp_path, "Find the cheapest flight to Tokyo.", act_first="off")
    assert cls == "model" and why.startswith("wrong answer")


def test_an_answer_given_again_after_toolmodes_correction_is_the_models(scripted, tmp_path) -> None:
    server = scripted([call("find_flights", to="Tokio"), reply("Answer: 100"), reply("Answer: 100")])
    cls, _ = classified(server, tmp_path, "Find the cheapest flight to Tokyo.", act_first="nudge")
    assert cls == "model"
