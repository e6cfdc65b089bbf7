"""Act before answering: a run that offers tools starts with a call, not with an invented answer.

Small models answer at step 1 without calling anything (Qwen2.5-Coder-1.5B on M3ToolEval: 16 of 16
episodes answered an invented number). `ActFirst` is the reply policy that makes the first request of a
run be answered with a call (the setting `act_first`, `ModelSettings.act_first`):

- `"schema"` (local servers: llama.cpp, vLLM, Ollama): the first request carries `response_format`
  json_schema describing one call to one of the offered tools; the server's grammar makes the reply that
  JSON, which text-call recovery reads as the call. (llama.cpp's own tool grammar under
  `tool_choice="required"` lets free text through before the template's call tag; the 1.5B wrote the
  call as bare JSON and then filled the reply with newlines up to the token limit.)
- `"tool_choice"` (OpenAI, DeepSeek, OpenRouter): the first request carries `tool_choice="required"`.
- `"nudge"`: nothing is constrained; only the check below (for endpoints of unknown abilities).
- `"off"`: none of this.

The first request also offers a `final_answer` tool, so a task that needs no tool (a greeting) is still
answered in that one request. An answer given before any tool call worked (at step 1, and after each new
round of calls that all failed, at most FAILED_CHECKS_MAX times a run; a `run_code` call whose program called
no tool did not work), as a `final_answer` call or in plain text, is checked against the run's tools
with toolmode's tool-search ranker (BM25F over names, descriptions and parameters): when the task touches a
tool, the model is asked to use the tools first (or to fix the failed call), and with "schema" /
"tool_choice" the next request again asks for a call; a greeting touches none and is taken at once.

A reply that is not an answer (`not_an_answer`: a tool's error text or a toolmode note of the run repeated, a
chat-template block, an `Answer:` with no value) gets one correction a run, whatever the calls did. An answer
that was sent back as unverified and comes again after calls that worked, although no tool result holds it
(the 1.5B called one tool and then repeated its invented value), is sent back once more (`act_first_repeated`).

With `"schema"`, an answer that does not match `output_type` is also asked again under the endpoint's
JSON-schema constraint. Every text the model reads is in the prompt set (`policies.toml`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolmode.defaults import ACT_FIRST
from toolmode.models.reply import Reply
from toolmode.modes.code import program_calls
from toolmode.policies import ReplyPolicy, RequestPlan, Verdict
from toolmode.prompts import PromptError
from toolmode.result import CallRecord

if TYPE_CHECKING:
    from toolmode.run import Run

FINAL_ANSWER = "final_answer"
ABOUT = "act_first"  # the `about` of its notices and messages
NOT_AN_ANSWER = "not_an_answer"  # the `about` of the correction of a reply that is not an answer
FAILED_CHECKS_MAX = 2  # answers after calls that all failed, sent back at most this often a run
COPIED_MIN = 12  # characters; a shorter answer found inside an error text is not taken as copied from it
SPECIFIC_MIN = 3  # characters; a shorter rejected answer that comes again may have been worked out (a count)
_GENERIC = frozenset({"yes", "no", "true", "false", "none", "null", "unknown", "n/a"})

# Tags of chat templates (Qwen, Hermes): a reply that starts with one is a call or result written as text.
_TEMPLATE_TAG = re.compile(r"^\s*<(tool_response|tool_call|function_call|\|im_start\|)", re.I)
_ANSWER_LABEL = re.compile(r"answer\s*:", re.I)
_MARKS = " \t\r\n'\"`,;:"  # stripped from around an answer's value (quotes, punctuation; `.` is handled apart)
_NOTE = re.compile(r"\[note: (.*?)\]", re.S)


def check_act_first(value: str) -> str:
    """`value` if it is a known setting, else a ValueError naming the choices."""
    if value not in ACT_FIRST:
        raise ValueError(f"unknown act_first {value!r}; choose one of: {', '.join(ACT_FIRST)}")
    return value


def default_act_first(preset: Any) -> str:
    """The setting when none is given: the preset's (`Preset.act_first`); "nudge" for a model without one."""
    return check_act_first(getattr(preset, "act_first", None) or "nudge")


def final_answer_schema(run: Run) -> dict[str, Any]:
    """The `final_answer` tool's definition, its texts from the run's prompt set."""
    return {
        "type": "function",
        "function": {
            "name": FINAL_ANSWER,
            "description": run.prompts.text("final_answer_tool"),
            "parameters": {
                "type": "object",
                "properties": {"answer": {"type": "string", "description": run.prompts.text("final_answer_param")}},
                "required": ["answer"],
            },
        },
    }


def call_schema(tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A JSON schema whose instances are exactly the calls `{"name": ..., "arguments": {...}}` to `tools`."""
    choices = []
    for t in tools:
        fn = t.get("function") or {}
        params = fn.get("parameters") or {"type": "object"}
        choices.append({
            "type": "object",
            "properties": {"name": {"const": fn.get("name", "")}, "arguments": params},
            "required": ["name", "arguments"],
        })
    return choices[0] if len(choices) == 1 else {"anyOf": choices}


class ActFirst(ReplyPolicy):
    """One run's policy: what its first request carries, and what happens to an answer given before any
    tool worked. `matches` fixes whether the task touches the tools (None: the tool-search ranker decides;
    a replay passes the recorded decision)."""

    def __init__(self, how: str, matches: bool | None = None) -> None:
        self.how = check_act_first(how)
        self.asked = False  # the step-1 verification is asked once a run
        self.failed_checks = 0  # answers after calls that all failed, sent back so far
        self.failed_seen = 0  # how many calls had been made at the last of those
        self.corrected = False  # a reply that is not an answer is corrected once a run
        self.rejected: dict[str, str] = {}  # answers sent back as unverified: value (`answer_value`) -> as written
        self.repeat_checked = False  # such an answer coming back is sent back once a run
        self.force_next = False
        self.answer_schema: dict[str, Any] | None = None
        self._matches = matches

    def plan_request(self, run: Run, plan: RequestPlan) -> None:
        """Step 1 (and the request after the verification) asks for a call; after an answer that did not
        match `output_type`, with "schema", the request is constrained to the output's schema."""
        forced, self.force_next = self.force_next, False
        answer_schema, self.answer_schema = self.answer_schema, None
        if answer_schema is not None:
            plan.fields["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "answer", "schema": answer_schema}}
            return
        if self.how in ("off", "nudge") or not plan.tools or not (run.step == 1 or forced):
            return
        if run.step == 1 and FINAL_ANSWER not in _names(plan.tools):  # a replay's recorded tools hold it already
            plan.tools = [*plan.tools, final_answer_schema(run)]
        # After the verification message, the request asks for a call to the task's tools only.
        if self.how == "tool_choice":
            plan.fields["tool_choice"] = "required"
        else:
            plan.fields["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "tool_call", "schema": call_schema(plan.tools)}}

    def read_reply(self, run: Run, reply: Reply) -> None:
        """A `final_answer` call becomes the reply's answer text (dropped when other calls came with it: their
        results come first); the trace keeps the server's text and calls."""
        final = [c for c in reply.tool_calls if c.name == FINAL_ANSWER]
        if not final:
            return
        if reply.wire_calls is None and any(c.recovered is None for c in reply.tool_calls):
            reply.wire_calls = [c for c in reply.tool_calls if c.recovered is None]  # the server's own calls
        reply.tool_calls = [c for c in reply.tool_calls if c.name != FINAL_ANSWER]
        if not reply.tool_calls:
            reply.wire_content = reply.content
            reply.content = _answer_of(final[0].arguments)

    def review_reply(self, run: Run, reply: Reply) -> Verdict | None:
        """A reply that is not an answer (a tool's error, a toolmode note, a chat-template block, an empty
        `Answer:`): one correction a run. An answer given before any tool call worked, to a task that touches
        the tools: a user message asking to use them (once) or to fix the failed calls (after each new round of
        failures, at most FAILED_CHECKS_MAX times). Empty replies are left to `EmptyReply`."""
        if reply.tool_calls or reply.problem or not (reply.content or "").strip():
            return None
        verdict = self._verify(run, reply.content or "")
        spec = run.output_spec if verdict is None and self.how == "schema" else None
        if spec is not None and spec.parse(reply.content or "")[1] is not None:  # OutputFormat asks again
            self.answer_schema = spec.schema  # ... and the endpoint can hold that reply to the schema
        return verdict

    def _verify(self, run: Run, text: str) -> Verdict | None:
        """The correction of a reply that is not an answer, else the check of an unverified answer."""
        if self.how == "off":
            return None
        return self._not_an_answer(run, text) or self._unverified(run, text) or self._rejected_again(run, text)

    def _not_an_answer(self, run: Run, text: str) -> Verdict | None:
        """A reply that is a tool's error or a toolmode note of this run, or an empty `Answer:`, is not taken as
        the answer without one correction a run (it may be what a task asked for: an error message); a reply that
        is a chat-template block is never taken (corrected each time: the step limit ends a model that keeps
        sending one; the 1.5B sent the same `<tool_response>` block three times)."""
        if self.corrected and not _TEMPLATE_TAG.match(text):
            return None
        why = not_an_answer(text, _failed_results(run), _notes(run))
        if why is None:
            return None
        self.corrected = True
        message = run.prompts.text("not_an_answer", why=run.prompts.text(f"not_an_answer_{why}"))
        return Verdict("ask_again", NOT_AN_ANSWER, message, f"not taken as the answer: {why.replace('_', ' ')}")

    def _unverified(self, run: Run, text: str) -> Verdict | None:
        """An answer before any tool call worked: asked once at the start (no call yet), and after each new
        round of calls that all failed (at most FAILED_CHECKS_MAX times a run)."""
        calls = [c for r in run.records for c in r.calls]
        # Answered from a continued chat, or after a run resumed with its approved (or refused) calls.
        earlier_results = run.resume is not None or any(m.get("role") == "tool" for m in run.history)
        if earlier_results or any(self._worked(run, c) for c in calls):
            return None
        if calls and (self.failed_checks >= FAILED_CHECKS_MAX or len(calls) == self.failed_seen):
            return None
        if not calls and self.asked:
            return None
        if not self.matches(run):
            return None
        if calls:
            self.failed_checks, self.failed_seen = self.failed_checks + 1, len(calls)
        else:
            self.asked = True
        self.force_next = True
        written = answer_value(text, fold=False)
        self.rejected[written.casefold()] = written
        # The last round decides the message: failed calls, or none / programs that called no tool (a program that
        # ran after earlier failures but computed on its own is not a failed call).
        last = next((r.calls for r in reversed(run.records) if r.calls), [])
        failed = any(c.error for c in last)
        why = "every call failed" if failed else "no tool ran"
        message = run.prompts.text("act_first_failed" if failed else "act_first")
        return Verdict("ask_again", ABOUT, message,
                       f"answered although {why}, on a task that matches the tools: asked to use them")

    def _rejected_again(self, run: Run, text: str) -> Verdict | None:
        """An answer sent back as unverified that comes again although no tool result holds its value: sent
        back once a run (a result that shows it, however written around, lets it through). Only a specific
        value (SPECIFIC_MIN characters or more, not yes/no/true/false/none): a short or yes/no answer worked out
        from the results can equal a guess by chance, and sending it back would push the model off it."""
        if self.repeat_checked:
            return None
        said = text.casefold()
        value = next((v for v in sorted(self.rejected) if _specific(v) and _mentions(said, v)), None)
        if value is None:
            return None
        worked = [c.result.casefold() for r in run.records for c in r.calls if self._worked(run, c)]
        if not worked or any(value in result for result in worked):
            return None  # no call worked (the checks above decide), or a result shows it
        self.repeat_checked = True
        shown = self.rejected[value]
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return Verdict("ask_again", ABOUT, run.prompts.text("act_first_repeated", answer=shown),
                       "the answer sent back before any tool worked came again, and no tool result holds it")

    def _worked(self, run: Run, call: CallRecord) -> bool:
        """A call that returned without an error; with "schema" (small local models, which write programs over
        invented data), a `run_code` call only if its program called a tool: a strong model's program that reads
        the workspace with `open()` has acted. A call the user refused counts too: the model may answer that it
        could not (nothing to fix, no retry)."""
        if call.error:
            return _refused(run, call)
        if call.name != run.mode.code_tool or self.how != "schema":
            return True
        return program_calls(run.context).get(call.id, 1) > 0

    def matches(self, run: Run) -> bool:
        """Whether the task touches any of the run's tools (a tool-search score above zero)."""
        if self._matches is None:
            from toolmode.tools.search import ToolIndex

            catalog = list(getattr(getattr(run.mode, "catalog", None), "tools", {}).values())
            self._matches = bool(catalog) and bool(ToolIndex(catalog).ranked(run.task, k=1))
        return self._matches


def not_an_answer(text: str, errors: Sequence[str], notes: Sequence[str]) -> str | None:
    """Why `text` is not an answer ("tag", "empty", "copied_error", "copied_note"), or None when it may be one.
    `errors`: the run's failed tool results; `notes`: toolmode's notes in its tool results."""
    if _TEMPLATE_TAG.match(text):
        return "tag"
    if _ANSWER_LABEL.search(text) and not _ANSWER_LABEL.sub("", text).strip(_MARKS + "."):
        return "empty"
    said = _ANSWER_LABEL.sub("", text, count=1) if _ANSWER_LABEL.match(text.strip()) else text
    said = said.strip().casefold()
    if not said:
        return None
    for kind, texts in (("copied_error", errors), ("copied_note", notes)):
        for source in (t.casefold() for t in texts):
            lines = {line.strip() for line in source.splitlines()}
            if said in lines or (len(said) >= COPIED_MIN and (said in source or _line_of(source) in said)):
                return kind
    return None


def answer_value(text: str, fold: bool = True) -> str:
    """What an answer says, to compare answers with each other and with tool results: the text after its last
    `Answer:` label (the whole text without one), without surrounding quotes and punctuation (a leading `.`
    kept: `.5`), case-folded unless `fold` is False."""
    value = _ANSWER_LABEL.split(text)[-1].strip(_MARKS).rstrip(".").strip(_MARKS)
    return value.casefold() if fold else value


def _specific(value: str) -> bool:
    """Whether an answer's value is specific enough that its coming back is no coincidence."""
    return len(value) >= SPECIFIC_MIN and value not in _GENERIC


def _mentions(text: str, value: str) -> bool:
    """Whether `value` stands in `text` as a whole (not inside a longer word or number: "2022" is not in
    "20221" nor in "2022.5")."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", text) is not None


def _line_of(text: str) -> str:
    """The first non-empty line of `text` (never empty: a blank text gives a string no answer contains)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "\0")


def _failed_results(run: Run) -> list[str]:
    return [c.result for r in run.records for c in r.calls if c.error and not _refused(run, c)]


def _refused(run: Run, call: CallRecord) -> bool:
    """Whether the call's result is an approval refusal (`call_refused`, `call_refused_by_policy` prompts)."""
    for name in ("call_refused", "call_refused_by_policy"):
        try:
            head = run.prompts.text(name, tool=call.name, reason="\0").split("\0")[0]
        except PromptError:  # a prompt set without approval texts (a replay of an older toolmode's run)
            continue
        if head and call.result.startswith(head):
            return True
    return False


def _notes(run: Run) -> list[str]:
    return [n.strip() for r in run.records for c in r.calls for n in _NOTE.findall(c.result)]


def _names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [(t.get("function") or {}).get("name", "") for t in tools]


def _answer_of(arguments: str) -> str:
    try:
        data = json.loads(arguments or "{}")
    except ValueError:
        return arguments
    if isinstance(data, dict):
        value = data.get("answer", next(iter(data.values()), "") if data else "")
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return str(data)
