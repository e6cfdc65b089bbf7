"""One run's events (from its `run_start` to its `run_end`) as the run page shows them.

Steps hold, in file order, the reply (tokens, time, text), the calls with their arguments, code and result,
and the retries, notices, errors and policy messages of that step; events without a step belong to the
step that follows them. Version 2 traces also give the conversation exactly as sent: `message` events and
`carried` ranges of an earlier run of the same file; each reply says how many of those messages its
request carried (`sent_messages`). Event kinds this viewer does not know are kept and shown as they are.
"""

from __future__ import annotations

from typing import Any

from toolmode.view.jsonlines import decode
from toolmode.view.values import number, pretty, text, usage

KNOWN = frozenset({"run_start", "run_end", "tools", "reply", "tool_call", "tool_result", "retry", "notice", "error",
                   "message", "carried", "approval_request", "approval"})


def _call(event: dict[str, Any]) -> dict[str, Any]:
    """A tool call as shown: its arguments pretty-printed, and a run_code program highlighted."""
    arguments = text(event.get("arguments")) or ""
    item: dict[str, Any] = {"type": "call", "id": text(event.get("id")), "name": text(event.get("name")),
                            "arguments": arguments, "pretty": None, "code": None, "code_tokens": None,
                            "result": None, "error": False, "seconds": None, "ran": False}
    parsed = decode(arguments.encode("utf-8", "surrogatepass")).value if arguments else None
    if isinstance(parsed, dict):
        code = parsed.get("code") if item["name"] == "run_code" else None
        if isinstance(code, str):
            from toolmode.view.highlight import python_tokens

            item["code"], item["code_tokens"] = code, python_tokens(code)
            parsed = {k: v for k, v in parsed.items() if k != "code"}
        item["pretty"] = pretty(parsed) if parsed else ""
    return item


def _approval(event: dict[str, Any]) -> dict[str, Any]:
    """An approval request (`approval_request`) or decision (`approval`) as shown."""
    arguments = event.get("arguments")
    return {"type": "approval", "phase": "request" if event.get("kind") == "approval_request" else "decision",
            "tool": text(event.get("tool")), "call_id": text(event.get("call_id")), "where": text(event.get("where")),
            "waits_for": text(event.get("waits_for")), "decision": text(event.get("decision")),
            "by": text(event.get("by")), "reason": text(event.get("reason")), "waited": number(event.get("waited")),
            "arguments": pretty(arguments) if isinstance(arguments, dict) else None}


def _reply(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "reply", "usage": usage(event.get("usage")), "cost": number(event.get("cost")),
            "seconds": number(event.get("seconds")), "content": text(event.get("content")),
            "reasoning": text(event.get("reasoning")), "finish_reason": text(event.get("finish_reason")),
            "recovered": text(event.get("recovered")), "attempts": number(event.get("attempts")),
            "model": text(event.get("model")), "sent_messages": number(event.get("sent_messages"))}


def _message(value: Any, index: int, source: str | None, about: str | None, step: Any) -> dict[str, Any]:
    """One message of the conversation, each field made safe to show."""
    message = value if isinstance(value, dict) else {"role": None, "content": value}
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep their text
        content = "\n".join((text(p.get("text")) or "") if isinstance(p, dict) else (text(p) or "") for p in content)
    calls = message.get("tool_calls")
    return {"index": index, "role": text(message.get("role")), "source": source, "about": about,
            "step": number(step), "content": text(content),
            "tool_calls": pretty(calls) if isinstance(calls, list) else None,
            "tool_call_id": text(message.get("tool_call_id")), "reasoning": text(message.get("reasoning_content"))}


class RunBuilder:
    """Folds one run's events, in file order, into the structure the page shows."""

    def __init__(self, index: int, earlier: list[dict[str, Any]]) -> None:
        self.index = index
        self.earlier = earlier  # the runs before this one in the file (for `carried` ranges)
        self.steps: dict[int, dict[str, Any]] = {}
        self.waiting: list[dict[str, Any]] = []
        self.calls: dict[tuple[int, str], dict[str, Any]] = {}
        self.requested: dict[int, list[dict[str, Any]]] = {}
        self.last = 0
        self.system_recorded = False
        self.run: dict[str, Any] = {"index": index, "start": None, "end": None, "tool_sets": [],
                                    "system_prompt": None, "messages": None, "unknown": {}, "problems": []}

    # -- steps

    def _step(self, at: int) -> dict[str, Any]:
        found = self.steps.get(at)
        if found is None:
            found = self.steps[at] = {"step": at, "items": []}
        return found

    def _add(self, step: Any, item: dict[str, Any]) -> None:
        at = number(step)
        if not isinstance(at, int) or at < 0:
            self.waiting.append(item)
            return
        self.last = max(self.last, at)
        items = self._step(at)["items"]
        items.extend(self.waiting)
        self.waiting = []
        items.append(item)

    def _tool_event(self, event: dict[str, Any], finished: bool) -> None:
        step = number(event.get("step"))
        key = (step if isinstance(step, int) else -1, text(event.get("id")) or "")
        found = self.calls.get(key) if key[1] else None
        if found is None:
            found = _call(event)
            if key[1]:
                self.calls[key] = found
            self._add(step, found)
        if finished:
            found.update(result=text(event.get("result")), error=event.get("error") is True,
                         seconds=number(event.get("seconds")), ran=True)

    # -- messages (version 2)

    def _messages(self) -> list[dict[str, Any]]:
        if self.run["messages"] is None:
            self.run["messages"] = []
        return self.run["messages"]

    def _carried(self, event: dict[str, Any]) -> None:
        source, start, count = number(event.get("from_run")), number(event.get("start")), number(event.get("count"))
        runs = self.earlier
        if not (isinstance(source, int) and isinstance(start, int) and isinstance(count, int)
                and 0 <= source < len(runs) and runs[source]["messages"] is not None and start >= 0 and count >= 0):
            self.run["problems"].append("a `carried` event names messages this file does not hold")
            return
        messages = self._messages()
        for message in runs[source]["messages"][start : start + count]:
            messages.append({**message, "index": len(messages), "carried": True})

    def _message(self, event: dict[str, Any]) -> None:
        messages = self._messages()
        index = number(event.get("index"))
        if index != len(messages):
            self.run["problems"].append(f"message {index} follows message {len(messages) - 1}: the messages "
                                        "shown may not be the ones sent")
        source, about = text(event.get("source")), text(event.get("about"))
        shown = _message(event.get("message"), len(messages), source, about, event.get("step"))
        messages.append(shown)
        if source == "policy":
            self._add(event.get("step"), {"type": "policy", "about": about, "role": shown["role"],
                                          "content": shown["content"]})

    # -- events

    def take(self, event: dict[str, Any]) -> None:
        """Fold one event into the run."""
        kind = event.get("kind")
        if kind == "run_start":
            self._start(event)
        elif kind == "run_end":
            self.run["end"] = {"answer": text(event.get("answer")), "stopped": text(event.get("stopped")),
                               "error": text(event.get("error")), "limit": text(event.get("limit")),
                               "usage": usage(event.get("usage")), "cost": number(event.get("cost")),
                               "wall_time": number(event.get("wall_time")),
                               "model_time": number(event.get("model_time")), "steps": number(event.get("steps"))}
        elif kind == "tools":
            names = event.get("names")
            self.run["tool_sets"].append({"step": number(event.get("step")),
                                          "names": [text(n) for n in names] if isinstance(names, list) else [],
                                          "schemas": pretty(event.get("schemas"))})
        elif kind == "reply":
            self._add(event.get("step"), _reply(event))
            step, calls = number(event.get("step")), event.get("tool_calls")
            if isinstance(step, int) and isinstance(calls, list):
                self.requested[step] = [_call(c) for c in calls if isinstance(c, dict)]
        elif kind in ("tool_call", "tool_result"):
            self._tool_event(event, finished=kind == "tool_result")
        elif kind == "retry":
            self._add(event.get("step"), {"type": "retry", "attempt": number(event.get("attempt")),
                                          "wait": number(event.get("wait")), "reason": text(event.get("reason"))})
        elif kind in ("notice", "error"):
            self._add(event.get("step"), {"type": kind, "message": text(event.get("message")),
                                          "about": text(event.get("about"))})
        elif kind in ("approval_request", "approval"):
            self._add(event.get("step"), _approval(event))
        elif kind == "message":
            self._message(event)
        elif kind == "carried":
            self._carried(event)
        else:
            name = text(kind) or "?"
            self.run["unknown"][name] = self.run["unknown"].get(name, 0) + 1
            shown = {k: v for k, v in event.items() if k != "t"}
            self._add(event.get("step"), {"type": "event", "kind": name, "text": pretty(shown)})

    def _start(self, event: dict[str, Any]) -> None:
        tools, notes = event.get("tools_sent"), event.get("notes")
        self.run["start"] = {
            "task": text(event.get("task")), "mode": text(event.get("mode")), "model": text(event.get("model")),
            "base_url": text(event.get("base_url")), "history": number(event.get("history")),
            "tools_sent": [text(t) for t in tools] if isinstance(tools, list) else [],
            "notes": [text(n) for n in notes] if isinstance(notes, list) else [],
            "request": pretty(event["request"]) if isinstance(event.get("request"), dict) else None,
            "config": pretty(event["config"]) if isinstance(event.get("config"), dict) else None,
        }
        if "system" in event:  # version 2: the system prompt sent, or null when none was
            self.system_recorded = True
            self.run["system_prompt"] = text(event["system"])

    def result(self) -> dict[str, Any]:
        """The run: steps in order (calls a reply asked for that never started are added as not run)."""
        for at, requested in self.requested.items():
            started = {key[1] for key in self.calls if key[0] == at}
            for call in requested:
                if call["id"] and call["id"] not in started:
                    self._step(at)["items"].append(call)
        if self.waiting:
            self._step(self.last + 1 if self.steps else 0)["items"].extend(self.waiting)
            self.waiting = []
        run = self.run
        run["steps"] = [self.steps[k] for k in sorted(self.steps)]
        run["missing"] = [what for what, have in (
            ("the system prompt", self.system_recorded),
            ("the messages exactly as the model saw them", run["messages"] is not None),
        ) if not have]
        return run
