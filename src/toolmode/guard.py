"""Run controls that keep small models on track, used by the loop through two calls per step.

- `correction(...)`: a reply that looks like a tool call but could not be read is not the answer; the
  model gets one short message saying what was wrong and the exact shape expected, and the run goes on.
  An empty reply is not the answer either (up to twice a run the model is asked for one).
- `review(...)`: a call repeated with the same arguments and the same result gets a note, and the model a
  short user message that restates the task and tells the model to answer it in full or change course
  (small models repeat one call 4-8 times otherwise, and then answer only the part they last printed).
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

    def __init__(self, trace: Trace, task: str = "") -> None:
        self.trace = trace
        self.task = task
        self.empty_replies = 0
        # (name, arguments) -> (first step, times made, its result)
        self.seen: dict[tuple[str, str], tuple[int, int, str | None]] = {}

    def correction(self, reply: Reply, step: int, tools: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        """The corrective user message for an unreadable call, or None when the reply is an answer."""
        if reply.tool_calls:
            return None
        if not reply.problem:
            if (reply.content or "").strip() or reply.finish_reason not in (None, "stop") \
                    or self.empty_replies >= EMPTY_REPLY_RETRIES:
                return None
            self.empty_replies += 1
            # An empty reply is not an answer (a small model sometimes stops at once after a failed program).
            self.trace.emit("notice", step=step, about="empty_reply", message="an empty reply is not the answer")
            return {"role": "user", "content": (
                "Your reply was empty. If the results so far answer the task, reply with the final answer in "
                "plain text; otherwise make a call."
            )}
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
            f"{_restated(self.task)}If the results so far answer every part of the task, reply now with the "
            "final answer in plain text, in the format the task asked for; otherwise make a different call "
            "that gets what is missing."
        )}]


EMPTY_REPLY_RETRIES = 2  # then an empty reply is taken as the (empty) answer
TASK_RESTATED_MAX = 1000  # characters; a longer task is not repeated (the model has it in its first message)


def _restated(task: str) -> str:
    task = task.strip()
    return f"The task was:\n{task}\n" if task and len(task) <= TASK_RESTATED_MAX else ""


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
