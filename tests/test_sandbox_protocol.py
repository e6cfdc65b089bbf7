"""The frame codec writes and reads JSON exactly as the json package does (it uses the same C functions
directly, so the worker need not import json and re at start-up)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from toolmode.sandbox.protocol import ProtocolError, _dumps, _loads, decode, encode

LEAVES = [None, True, False, 0, -5, 2**70, 1.5, -0.0, 1e308, float("inf"), float("-inf"), "", 'a"b\\c\n\t\x00',
          "é中\U0001f600", "\ud800x", "\x7f\x1b[2J"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 4 or r < 0.4:
        return rng.choice(LEAVES)
    if r < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["a", "é", "\ud801", "1"]): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_same_text_and_values_as_the_json_package() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        value = {"k": _value(rng), "x": _value(rng)}
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
        assert _dumps(value, None) == text
        assert repr(_loads(text)) == repr(json.loads(text))
        assert repr(_loads(f" \n{text}\t")) == repr(json.loads(f" \n{text}\t"))
    assert _dumps({2: 2, None: 3, 1.5: 4, True: 5}, None) == '{"2":2,"null":3,"1.5":4,"true":5}'
    assert _dumps({"s": {3, 1}}, sorted) == '{"s":[1,3]}'


@pytest.mark.parametrize("text", ["", "   ", "{", "{}x", "[1,]", "{'a':1}", "NaNx", "\ufeff{}", '{"a":1} {}',
                                  "[" * 100_000])
def test_what_json_refuses_is_refused(text: str) -> None:
    with pytest.raises((ValueError, RecursionError)):
        json.loads(text)
    with pytest.raises((ValueError, RecursionError)):
        _loads(text)
    with pytest.raises(ProtocolError):
        decode(text.encode())


def test_unencodable_values_raise_as_in_json() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular
    for value, error in [({"a": {1}}, TypeError), ({(1,): 2}, TypeError), (circular, ValueError)]:
        with pytest.raises(error):
            encode(value)
        with pytest.raises(error):
            json.dumps(value)
    assert decode(encode({"op": "x", "v": "\ud800"})[4:]) == {"op": "x", "v": "\ud800"}


def test_tool_names_in_a_done_frame_are_only_this_runs_tools() -> None:
    # The worker's `skipped` / `redefined` lists are its word: notes may name only the run's own tools, once each.
    from toolmode.sandbox.host import _tool_names

    allowed = {"read_file", "list_dir"}
    assert _tool_names("read_file", allowed) == () and _tool_names(None, allowed) == ()
    assert _tool_names(["read_file", "rm -rf /", 7, "read_file", "list_dir"], allowed) == ("read_file", "list_dir")
    many = {f"t{i}" for i in range(80)}
    assert len(_tool_names(sorted(many), many)) == 50
