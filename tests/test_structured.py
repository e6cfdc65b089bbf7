"""Structured answers: output_type= (pydantic model, dataclass, TypedDict), one corrective retry with the
validation error, result.output; an answer that never fits ends with stopped="error", the answer kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from toolmode import Agent, tool
from toolmode.testing import call, reply


class CityModel(pydantic.BaseModel):
    name: str
    population: int


@dataclass
class CityData:
    name: str
    population: int


class CityDict(TypedDict):
    name: str
    population: int


@tool
def lookup(city: str) -> dict:
    """Look a city up."""
    return {"city": city, "population": 2_100_000}


def make(server) -> Agent:
    return Agent([lookup], mode="react", model="m", base_url=server.base_url)


@pytest.mark.parametrize("output_type", [CityModel, CityData, CityDict])
def test_the_answer_is_validated_into_the_type(scripted, output_type: Any) -> None:
    server = scripted([call("lookup", city="Paris"), reply('{"name": "Paris", "population": 2100000}')])
    with make(server) as agent:
        result = agent.run("Paris?", output_type=output_type)
    assert result.stopped == "answer"
    value = result.output
    if output_type is CityDict:
        assert value == {"name": "Paris", "population": 2100000}
    else:
        assert isinstance(value, output_type) and (value.name, value.population) == ("Paris", 2100000)
    # the schema went to the model with the task
    task = server.requests[0]["messages"][-1]["content"]
    assert task.startswith("Paris?\n\n") and '"population"' in task and "JSON schema" in task
    assert result.to_dict()["output"] == {"name": "Paris", "population": 2100000}


def test_a_fenced_json_answer_is_accepted(scripted) -> None:
    server = scripted([reply('```json\n{"name": "Lyon", "population": 500000}\n```')])
    with make(server) as agent:
        result = agent.run("Lyon?", output_type=CityModel)
    assert result.output == CityModel(name="Lyon", population=500000)


def test_a_mismatch_goes_back_once_with_the_validation_error(scripted) -> None:
    server = scripted([reply('{"name": "Paris", "population": "many"}'),
                       reply('{"name": "Paris", "population": 2100000}')])
    with make(server) as agent:
        result = agent.run("Paris?", output_type=CityModel)
    assert result.ok and result.output.population == 2100000 and result.steps == 2
    correction = server.requests[1]["messages"][-1]
    assert correction["role"] == "user"
    assert "population: Input should be a valid integer" in correction["content"]
    assert "CityModel" in correction["content"]


def test_never_satisfied_ends_with_error_and_keeps_the_last_answer(scripted) -> None:
    server = scripted([reply("It is Paris."), reply("Paris, about two million people.")])
    with make(server) as agent:
        result = agent.run("Paris?", output_type=CityModel)
    assert result.stopped == "error"
    assert result.answer == "Paris, about two million people."
    assert result.output is None
    assert result.error.startswith("the answer does not match CityModel: (answer): Invalid JSON")
    assert len(server.requests) == 2  # one corrective retry, no more


def test_an_output_type_pydantic_cannot_handle_gets_one_line(scripted) -> None:
    server = scripted([reply("x")])
    with make(server) as agent, pytest.raises(ValueError) as err:
        agent.run("x", output_type=3)
    assert str(err.value).startswith("output_type ") and "\n" not in str(err.value)
    assert server.requests == []


def test_plain_types_work_too(scripted) -> None:
    server = scripted([reply("[1, 2, 3]")])
    with make(server) as agent:
        result = agent.run("numbers", output_type=list[int])
    assert result.output == [1, 2, 3]
    assert json.loads(result.answer) == [1, 2, 3]


@pytest.mark.parametrize(("output_type", "text", "value"), [
    (str, "Paris", "Paris"), (str, '"Paris"', "Paris"), (Literal["yes", "no"], "yes", "yes"),
])
def test_a_string_output_type_takes_bare_text(scripted, output_type: Any, text: str, value: str) -> None:
    server = scripted([reply(text)])
    with make(server) as agent:
        result = agent.run("Capital of France?", output_type=output_type)
    assert (result.stopped, result.output, len(server.requests)) == ("answer", value, 1)


def test_a_string_literal_still_rejects_other_text(scripted) -> None:
    server = scripted([reply("maybe"), reply("perhaps")])
    with make(server) as agent:
        result = agent.run("Yes or no?", output_type=Literal["yes", "no"])
    assert (result.stopped, result.answer, result.output) == ("error", "perhaps", None)
    assert "Input should be 'yes' or 'no'" in result.error


def test_a_type_pydantic_cannot_handle_gets_no_config_advice(scripted) -> None:
    class Opaque:
        pass

    server = scripted([reply("x")])
    with make(server) as agent, pytest.raises(ValueError) as err:
        agent.run("x", output_type=Opaque)
    assert "cannot be validated: Unable to generate pydantic-core schema" in str(err.value)
    assert "arbitrary_types_allowed" not in str(err.value)
