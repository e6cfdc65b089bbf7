"""Replies recorded from a real local model (Qwen2.5-Coder on llama.cpp; tests/fixtures/local_models, the
project's own recordings), replayed through the scripted server exactly as llama.cpp sent them.

Each reply is labelled by hand: `expect` "call" (the model meant a tool call) or "answer"; a call that not
even a reader could reconstruct has `"readable": false` and must be sent back with a correction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmode.models.client import ModelClient

FIXTURES = Path(__file__).parent / "fixtures" / "local_models"


def _labelled() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [(f"{path.stem}#{r['step']}", data, r) for r in data["replies"] if r.get("expect")]
    return out


LABELLED = _labelled()


def test_the_recordings_are_there_and_labelled() -> None:
    assert len(LABELLED) >= 10
    assert {r["expect"] for _, _, r in LABELLED} == {"call", "answer"}


def _item(r: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"content": r["content"], "finish_reason": r.get("finish_reason")}
    if r["tool_calls"]:
        item["tool_calls"] = r["tool_calls"]
    return item


@pytest.mark.parametrize("name, data, r", LABELLED, ids=[x[0] for x in LABELLED])
def test_recorded_reply(scripted, name: str, data: dict[str, Any], r: dict[str, Any]) -> None:
    server = scripted([_item(r)])
    client = ModelClient("m", base_url=server.base_url, preset="llamacpp", api_key="none")
    reply = client.chat([{"role": "user", "content": data["prompt"]}], data["tools"])
    client.close()
    if r["expect"] == "answer":
        assert reply.tool_calls == [] and reply.problem is None
        return
    if r.get("readable", True):
        assert reply.tool_calls, reply.problem
        sent = {t["function"]["name"] for t in data["tools"]}
        for c in reply.tool_calls:
            assert c.name in sent
            assert isinstance(json.loads(c.arguments), dict)
        if not r["tool_calls"]:
            assert reply.recovered is not None and all(c.recovered for c in reply.tool_calls)
    else:
        assert reply.tool_calls == [] and reply.problem
