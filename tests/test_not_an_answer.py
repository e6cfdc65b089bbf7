"""Replies that are not answers (issue 18, analysis cause 1), through the scripted server: a tool's error text
pasted as the answer, a chat-template block, an `Answer:` with no value. Each gets one correction naming
what is wrong, the next request carries it, and the run then takes a real answer; a greeting stays one
request. The replies are modelled on the 1.5B's episodes named in each test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolmode import Agent, tool
from toolmode.act_first import not_an_answer
from toolmode.prompts import PromptSet, packaged
from toolmode.testing import call, reply

TEXTS = PromptSet.load([packaged("policies.toml")])


def correction(why: str) -> str:
    return TEXTS.text("not_an_answer", why=TEXTS.text(f"not_an_answer_{why}"))


@tool
def count_nucleotides(dna: str) -> dict[str, int]:
    """Count each nucleotide of a DNA sequence."""
    return {n: dna.count(n) for n in "ACGT"}


@tool
def find_max_nucleotide(counts: list[int]) -> int:
    """The largest of a list of nucleotide counts."""
    if not isinstance(counts, list):
        raise TypeError("counts must be a list")
    return max(counts)


def agent(server: Any, tmp_path: Path, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [count_nucleotides, find_max_nucleotide])
    kwargs.setdefault("mode", "react")
    return Agent(model="m", base_url=server.base_url, api_key="k", runs_dir=tmp_path / "runs", **kwargs)


TASK = "Count the nucleotides of TACGAAAAG and find the nucleotide that occurs most."


def test_a_pasted_tool_error_is_corrected_once_although_an_earlier_call_worked(scripted, tmp_path) -> None:
    # react reverse_transcribe: count_nucleotides worked, find_max_nucleotide got a dict and raised; the next
    # reply was that error text verbatim and was accepted.
    error = "Error: ToolArgumentError: find_max_nucleotide: counts: Input should be a valid list"
    server = scripted([call("count_nucleotides", dna="TACGAAAAG"), call("find_max_nucleotide", counts={"A": 5}),
                       reply(error), call("find_max_nucleotide", counts=[5, 1, 1, 2]), reply("Answer: A")])
    with agent(server, tmp_path, preset="openai") as a:
        result = a.run(TASK)
    assert server.requests[3]["messages"][-3]["content"].startswith(error)  # the tool result the reply copied
    assert server.requests[3]["messages"][-1] == {"role": "user", "content": correction("copied_error")}
    assert (result.answer, result.steps) == ("Answer: A", 5)


def test_a_chat_template_block_is_not_the_answer(scripted, tmp_path) -> None:
    # react cheapest_new_york: the reply was a hallucinated <tool_response> block.
    block = '<tool_response>\n{"flights": [{"price": 350}]}\n</tool_response>'
    server = scripted([call("count_nucleotides", dna="TACGAAAAG"), reply(block), reply("Answer: A")])
    with agent(server, tmp_path, preset="openai") as a:
        result = a.run(TASK)
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": correction("tag")}
    assert (result.answer, result.steps) == ("Answer: A", 3)


def test_a_chat_template_block_is_never_the_answer_the_step_limit_ends_the_run(scripted, tmp_path) -> None:
    # code full_alien (landed code): the same `<tool_response>` block (a copy of the last error) three times; the
    # third came after the one correction and was taken as the answer. Now each is corrected.
    block = "<tool_response>\nError at line 3: ValueError: invalid literal for int()\n</tool_response>"
    server = scripted([call("count_nucleotides", dna="TACGAAAAG"), reply(block), reply(block), reply(block)])
    with agent(server, tmp_path, preset="openai", max_steps=4) as a:
        result = a.run(TASK)
    assert result.stopped == "step_limit" and result.answer is None
    assert [r["messages"][-1]["content"] for r in server.requests[2:]] == [correction("tag")] * 2


def test_an_answer_label_without_a_value_is_corrected_once_then_taken(scripted, tmp_path) -> None:
    # code full_alien: the step-2 reply was `Answer: 'Answer: '`. Corrected once; a second one is taken, so a
    # run cannot loop on this check.
    server = scripted([call("count_nucleotides", dna="TACGAAAAG"), reply("Answer: 'Answer: '"),
                       reply("Answer: 'Answer: '")])
    with agent(server, tmp_path, preset="openai") as a:
        result = a.run(TASK)
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": correction("empty")}
    assert (result.answer, result.steps) == ("Answer: 'Answer: '", 3)


def test_a_greeting_is_still_one_request(scripted, tmp_path) -> None:
    server = scripted([reply("Hello! How can I help?")])
    with agent(server, tmp_path, preset="openai") as a:
        result = a.run("hi")
    assert (result.answer, result.steps, len(server.requests)) == ("Hello! How can I help?", 1, 1)


def test_what_counts_as_not_an_answer() -> None:
    errors = ["Error: ModuleNotFoundError: No module named 'tools'\nTraceback line"]
    notes = ["the program did not parse (line 22: unterminated string); ran it repaired"]
    assert not_an_answer("Answer: Error: ModuleNotFoundError: No module named 'tools'", errors, []) == "copied_error"
    assert not_an_answer("Answer: The program did not parse (line 22", [], notes) == "copied_note"
    assert not_an_answer("<tool_call>\n{}", [], []) == "tag"
    assert not_an_answer('Answer: ""', [], []) == "empty"
    # A real value, even one that occurs inside an error text, is an answer.
    assert not_an_answer("Answer: tools", errors, notes) is None
    assert not_an_answer("Answer: 615", errors, notes) is None
    assert not_an_answer("hi there", [], []) is None


def test_the_repair_note_comes_after_the_output_and_an_answer_copying_it_is_corrected(scripted, tmp_path) -> None:
    # code budget_trip: the JSON `\n` inside a string was repaired and the program ran, but the result began with
    # the repair note and the model answered the note. Now the output comes first and the note is one last line.
    program = "print(count_nucleotides('TAC' + '\n' + 'G'))"
    note_copy = "Answer: repaired to parse: each line break inside a one-line string"
    server = scripted([call("run_code", code=program), reply(note_copy), reply("Answer: 615")])
    with agent(server, tmp_path, mode="code", sandbox="none", preset="openai") as a:
        result = a.run(TASK)
    output = server.requests[1]["messages"][-1]["content"]
    first, note = output.split("\n")
    assert first == "{'A': 1, 'C': 1, 'G': 1, 'T': 1}" and note.startswith("[note: repaired to parse: ")
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": correction("copied_note")}
    assert (result.answer, result.steps) == ("Answer: 615", 3)
