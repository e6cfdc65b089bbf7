"""Recovery rate on the saved real transcripts (tests/fixtures/local_models): how many replies that were
meant as tool calls come out as runnable calls, and how many genuine answers are left alone.

    PYTHONPATH=src python benchmarks/recovery_rate.py            # this checkout
    PYTHONPATH=/path/to/older/src python benchmarks/recovery_rate.py   # the same figures for an older toolmode

Every labelled reply is replayed through the real HTTP path: a scripted OpenAI-compatible server sends it
exactly as llama.cpp sent it, and `ModelClient` (llama.cpp preset, as in the recording) reads it with the
tool schemas of the recorded request. Outcomes: `call` (runnable calls: every arguments text is a JSON
object), `asked again` (recognised as an unreadable call: the loop sends a correction; toolmode versions
without that report it as an answer), `answer` (taken as the final answer), `broken call` (a call whose arguments are not a JSON object).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolmode.models.client import ModelClient
from toolmode.testing import ScriptedModelServer

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "local_models"


def labelled(fixtures: Path = FIXTURES) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(fixture, reply) for every reply labelled "call" or "answer"."""
    out = []
    for path in sorted(fixtures.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [(data, r) for r in data["replies"] if r.get("expect") in ("call", "answer")]
    return out


def outcome(client: ModelClient, data: dict[str, Any], r: dict[str, Any]) -> str:
    """What this toolmode makes of the reply: "call", "asked again" or "answer"."""
    reply = client.chat([{"role": "user", "content": data["prompt"]}], data["tools"])
    if reply.tool_calls:
        for c in reply.tool_calls:
            try:
                ok = isinstance(json.loads(c.arguments), dict)
            except ValueError:
                ok = False
            if not ok:
                return "broken call"
        return "call"
    return "asked again" if getattr(reply, "problem", None) else "answer"


def main() -> int:
    """Replay every labelled reply and print the rates per model."""
    items = labelled()
    if not items:
        print(f"no labelled replies under {FIXTURES}", file=sys.stderr)
        return 2
    script = [{"content": r["content"], "tool_calls": r["tool_calls"], "finish_reason": r.get("finish_reason")}
              if r["tool_calls"] else {"content": r["content"], "finish_reason": r.get("finish_reason")}
              for _, r in items]
    counts: dict[tuple[str, str, str], int] = {}
    distinct: dict[tuple[str, str, str], set[str]] = {}
    with ScriptedModelServer(script) as server:
        client = ModelClient("m", base_url=server.base_url, preset="llamacpp", api_key="none")
        for data, r in items:
            key = (data["model"], r["expect"], outcome(client, data, r))
            counts[key] = counts.get(key, 0) + 1
            distinct.setdefault(key, set()).add(r["content"] or "")
        client.close()
    for model in sorted({k[0] for k in counts}):
        calls = {o: n for (m, e, o), n in counts.items() if m == model and e == "call"}
        answers = {o: n for (m, e, o), n in counts.items() if m == model and e == "answer"}
        n_calls, n_answers = sum(calls.values()), sum(answers.values())
        print(f"{model}: {n_calls} replies meant as calls, {n_answers} genuine answers")
        print(f"  calls recovered as runnable calls: {calls.get('call', 0)}/{n_calls}"
              f" ({100 * calls.get('call', 0) / max(n_calls, 1):.0f}%)")
        print(f"  calls sent back with a correction: {calls.get('asked again', 0)}/{n_calls}")
        print(f"  calls taken as the final answer:   {calls.get('answer', 0)}/{n_calls}")
        if calls.get("broken call"):
            print(f"  calls with unparseable arguments:  {calls['broken call']}/{n_calls}")
        unique = {o: len(v) for (m, e, o), v in distinct.items() if m == model and e == "call"}
        texts = set().union(*(v for (m, e, _), v in distinct.items() if m == model and e == "call"))
        print(f"  distinct texts among the calls (small models repeat themselves): {len(texts)}; with outcome "
              f"recovered {unique.get('call', 0)}, corrected {unique.get('asked again', 0)}, "
              f"taken as the answer {unique.get('answer', 0)}")
        wrong = n_answers - answers.get("answer", 0)
        print(f"  answers wrongly taken for calls:   {wrong}/{n_answers}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
