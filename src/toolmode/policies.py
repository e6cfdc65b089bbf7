"""Reply policies: what the loop does with a reply besides running its calls or taking it as the answer.

A policy is one class. The loop asks each policy of the run, in order, about every reply
(`review_reply`: the first verdict wins) and about every step's tool results (`review_calls`); a policy
may also shape each request (`plan_request`: its tools and extra fields such as `tool_choice`) and read a
reply before it joins the conversation (`read_reply`; `toolmode.act_first` uses both). A
verdict asks the model again with a message, takes the reply as the answer (with a validated
`output`), or ends the run. Policies are made per run, so they may keep state.

The built-in ones keep small models on track and check structured answers:
- `UnreadableCall`: a reply that looks like a tool call but could not be read is not the answer;
- `EmptyReply`: an empty reply is not the answer (asked again up to twice a run);
- `OutputFormat`: with `output_type`, an answer that does not match goes back once with the error;
- `RepeatedCalls`: a call repeated with the same arguments and result gets a note, and the model a
  message restating the task (small models repeat one call 4-8 times otherwise); after a repeated
  failure, the message says the call fails as written and must change.

`CallPolicy` is the point on the call path before a call is handled (e.g. approval): it may refuse a call,
change its arguments, or leave it pending.
Every text the model reads comes from the run's prompt set (`toolmode.prompts`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolmode.bounded import loads_json
from toolmode.models.reply import Reply, ToolCall
from toolmode.output import RETRIES, OutputSpec
from toolmode.result import CallRecord

if TYPE_CHECKING:
    from toolmode.run import Run

EMPTY_REPLY_RETRIES = 2  # then an empty reply is taken as the (empty) answer
TASK_RESTATED_MAX = 1000  # characters; a longer task is not repeated (the model has it in its first message)


@dataclass(frozen=True)
class Verdict:
    """What a policy decided about a reply: `ask_again` (add `message` as a user turn and go on), `answer`
    (the reply is the answer; `output` is its validated value) or `stop` (end the run with `error`)."""

    action: Literal["ask_again", "answer", "stop"]
    about: str
    message: str | None = None
    notice: str | None = None
    output: Any = None
    error: str | None = None


@dataclass
class RequestPlan:
    """What the next request sends besides the conversation: the tool definitions and extra request fields
    (e.g. `tool_choice`, `response_format`), as the mode made them and the policies changed them."""

    tools: list[dict[str, Any]]
    fields: dict[str, Any] = field(default_factory=dict)


class ReplyPolicy:
    """Base of reply policies; override any hook."""

    def plan_request(self, run: Run, plan: RequestPlan) -> None:
        """Change what the next request sends (`plan.tools`, `plan.fields`) before it is sent."""

    def read_reply(self, run: Run, reply: Reply) -> None:
        """Change `reply` before it joins the conversation (keeping the server's text in `reply.wire_content`
        and its calls in `reply.wire_calls` when changing them, so the trace still holds what was sent)."""

    def review_reply(self, run: Run, reply: Reply) -> Verdict | None:
        """A verdict on `reply` (already part of the conversation), or None to leave it to the next policy."""
        return None

    def review_calls(self, run: Run, calls: list[CallRecord]) -> list[str]:
        """User messages to add after this step's tool results (a policy may also add a note to a result)."""
        return []


class CallPolicy:
    """The point on the call path before a call is handled (a direct call, or one made from a `run_code`
    program: `where="run_code"`); override `check`. Approval (`toolmode.approval`) is one."""

    def check(self, run: Run, call: ToolCall, arguments: dict[str, Any], where: str = "direct") -> Any:
        """None to let the call run; a dict to run it with those arguments instead; the text the model gets
        instead of running it; or `toolmode.approval.decision.PENDING` to leave it for a decision after the run
        (a direct call only: the run stops after the step with `stopped="approval"`)."""
        return None


class UnreadableCall(ReplyPolicy):
    """A reply that looks like a tool call but could not be read: tell the model the exact shape expected."""

    def review_reply(self, run: Run, reply: Reply) -> Verdict | None:
        """Ask again when the model layer marked the reply's text as an unreadable call."""
        if reply.tool_calls or not reply.problem:
            return None
        cut = run.prompts.text("call_cut_off") if reply.finish_reason == "length" else ""
        message = run.prompts.text("unreadable_call", problem=reply.problem, cut=cut,
                                   example=example_call(run.tools, run.mode.code_tool))
        return Verdict("ask_again", "unreadable_call", message, f"not taken as the answer: {reply.problem}")


class EmptyReply(ReplyPolicy):
    """An empty reply is not the answer (a small model sometimes stops at once after a failed program)."""

    def __init__(self, retries: int = EMPTY_REPLY_RETRIES) -> None:
        self.left = retries

    def review_reply(self, run: Run, reply: Reply) -> Verdict | None:
        """Ask for an answer or a call, up to `retries` times a run."""
        if reply.tool_calls or reply.problem or (reply.content or "").strip() or self.left <= 0:
            return None
        if reply.finish_reason not in (None, "stop"):
            return None
        self.left -= 1
        return Verdict("ask_again", "empty_reply", run.prompts.text("empty_reply"), "an empty reply is not the answer")


class OutputFormat(ReplyPolicy):
    """With `output_type`: an answer is parsed and validated; a mismatch goes back to the model `RETRIES`
    times, then ends the run with `stopped="error"` (the last answer kept)."""

    def __init__(self, spec: OutputSpec) -> None:
        self.spec = spec
        self.retries = 0

    def review_reply(self, run: Run, reply: Reply) -> Verdict | None:
        """Accept a matching answer with its value; ask again, or stop, on a mismatch."""
        if reply.tool_calls:
            return None
        output, problems = self.spec.parse(reply.content or "")
        if problems is None:
            return Verdict("answer", "output_format", output=output)
        if self.retries >= RETRIES:
            return Verdict("stop", "output_format", error=f"the answer does not match {self.spec.name}: {problems}")
        self.retries += 1
        message = run.prompts.text("output_mismatch", name=self.spec.name, problems=problems)
        return Verdict("ask_again", "output_format", message,
                       f"the answer does not match {self.spec.name}; asking once more: {problems}")


class RepeatedCalls(ReplyPolicy):
    """A call repeated with the same arguments and the same result gets a note, and the model a message
    that restates the task (a retry that now works, e.g. after a tool was loaded, is not a repeat)."""

    def __init__(self) -> None:
        # (name, canonical arguments) -> (first step, times made, its result)
        self.seen: dict[tuple[str, str], tuple[int, int, str | None]] = {}

    def review_calls(self, run: Run, calls: list[CallRecord]) -> list[str]:
        """Note each repeat on its result; one user message when there was any."""
        repeated = [call for call in calls if self._is_repeat(run, call)]
        if not repeated:
            return []
        names = ", ".join(sorted({c.name for c in repeated}))
        # A repeated failure is no result to answer from: the call must change (the 1.5B answered an invented
        # value when invited to "reply now with the final answer" after the same failing program twice).
        text = "repeated_failing_call" if all(c.error for c in repeated) else "repeated_call"
        return [run.prompts.text(text, names=names, task=_restated(run.task))]

    def _is_repeat(self, run: Run, call: CallRecord) -> bool:
        key = (call.name, _canonical(call.arguments))
        first, count, result = self.seen.get(key, (run.step, 0, None))
        if result != call.result:
            self.seen[key] = (run.step, 1, call.result)
            return False
        self.seen[key] = (first, count + 1, result)
        times = "once" if count == 1 else f"{count} times"
        call.result += run.prompts.text("repeated_call_note", times=times, first=first)
        run.notice(f"{call.name} repeated with the same arguments and result ({count + 1} times)",
                   about="repeated_call", call_id=call.id)
        return True


def default_policies(output: OutputSpec | None, act_first: ReplyPolicy | None = None) -> list[ReplyPolicy]:
    """The policies every run has: unreadable calls, empty replies, (`act_first`, before the answer is taken),
    structured output, repeated calls."""
    policies: list[ReplyPolicy] = [UnreadableCall(), EmptyReply(), *([act_first] if act_first else [])]
    if output is not None:
        policies.append(OutputFormat(output))
    policies.append(RepeatedCalls())
    return policies


def _restated(task: str) -> str:
    task = task.strip()
    return f"The task was:\n{task}\n" if task and len(task) <= TASK_RESTATED_MAX else ""


def example_call(tools: Sequence[dict[str, Any]], code_tool: str | None = None) -> str:
    """The expected shape of a call, with placeholders, for the first tool sent (the code tool preferred)."""
    fns = [t.get("function") or {} for t in tools]
    fn = next((f for f in fns if code_tool and f.get("name") == code_tool), fns[0] if fns else {})
    name = fn.get("name", "tool_name")
    # Placeholders, never a runnable program: a small model copies a concrete example verbatim and repeats
    # it (seen with the 1.5B: `print(os.listdir('.'))` five times in a row).
    if code_tool and name == code_tool:
        args: dict[str, Any] = {"code": "<your whole program, lines separated by \n>"}
    else:
        props = (fn.get("parameters") or {}).get("properties") or {}
        args = {p: f"<{p}>" for p in list(props)[:2]}
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def _canonical(arguments: str) -> str:
    """The arguments with their keys sorted, to compare calls; the text itself when it is not JSON (or over
    `toolmode.bounded`'s bounds: a call nested 100,000 deep is compared as text, not parsed)."""
    try:
        return json.dumps(loads_json(arguments), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return arguments.strip()
