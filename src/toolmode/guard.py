"""Run controls that keep small models on track, used by the loop through two calls per step.

- `correction(...)`: a reply that looks like a tool call but could not be read is not the answer; the
  model gets one short message saying what was wrong and the exact shape expected, and the run goes on.
- `review(...)`: a call repeated with the same arguments and the same result gets a note, and the model a
  short user message telling it to answer or change course (small models repeat one call 4-8 times otherwise) (small models repeat one call 4-8 times otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolmode.models.reply import Reply
from toolmode.result import CallRecord
from toolmode.trace import Trace


class RunGuard:
    """Per-run state: which calls were made, at which step."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        # (name, arguments) -> (first step, times made, its result)
        self.seen: dict[tuple[str, str], tuple[int, int, str | None]] = {}

    def correction(self, reply: Reply, step: int, tools: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        """The corrective user message for an unreadable call, or None when the reply is an answer."""
        if reply.tool_calls or not reply.problem:
            return None
        cut = " It was cut off at the token limit: keep the call shorter." if reply.finish_reason == "length" else ""
        self.trace.emit("notice", step=step, about="unreadable_call", message=f"not taken as the answer: {reply.problem}")
        text = (
            f"Your last reply looks like a tool call, but it could not be read: {reply.problem}.{cut} "
            f"To call a tool, reply with only the call, as strict JSON (double quotes, \\n for line breaks "
            f"inside strings): {example_call(tools)} . If you already have the answer, reply with it in plain text."
        )
        return {"role": "user", "content": text}

    def review(self, step: int, calls: list[CallRecord]) -> list[dict[str, Any]]:
        """Note each result whose call repeats an earlier one exactly and got the same result (a retry that
        now works, e.g. after a tool was loaded, is not going round in circles); returns a user message to
        append after the tool results when there was such a repeat (small models read a user turn, not a
        note at the end of a tool result)."""
        repeated: list[CallRecord] = []
        for call in calls:
            key = (call.name, _canonical(call.arguments))
            first, count, result = self.seen.get(key, (step, 0, None))
            if result != call.result:
                self.seen[key] = (step, 1, call.result)
                continue
            self.seen[key] = (first, count + 1, result)
            times = "once" if count == 1 else f"{count} times"
            call.result += (f"\n[note: you already made this exact call {times} before (first at step {first}) "
                            "and got the same result.]")
            repeated.append(call)
            self.trace.emit("notice", step=step, about="repeated_call", id=call.id, name=call.name,
                            message=f"{call.name} repeated with the same arguments and result ({count + 1} times)")
        if not repeated:
            return []
        names = ", ".join(sorted({c.name for c in repeated}))
        return [{"role": "user", "content": (
            f"You repeated the same {names} call and got the same result as before. Do not call it again. "
            "If that result answers the task, reply now with the final answer in plain text, in the format "
            "the task asked for; otherwise make a different call."
        )}]


def example_call(tools: Sequence[dict[str, Any]]) -> str:
    """The expected shape of a call, with placeholders, for the first tool sent (run_code preferred)."""
    fns = [t.get("function") or {} for t in tools]
    fn = next((f for f in fns if f.get("name") == "run_code"), fns[0] if fns else {})
    name = fn.get("name", "tool_name")
    # Placeholders, never a runnable program: a small model copies a concrete example verbatim and repeats
    # it (seen with the 1.5B: `print(os.listdir('.'))` five times in a row).
    if name == "run_code":
        args: dict[str, Any] = {"code": "<your whole program, lines separated by \n>"}
    else:
        props = (fn.get("parameters") or {}).get("properties") or {}
        args = {p: f"<{p}>" for p in list(props)[:2]}
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return arguments.strip()
