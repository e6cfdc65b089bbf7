"""Stop a bench whose episodes all fail the same way because of the endpoint, not the task.

An *endpoint failure* is a model error that says nothing about the task or the mode: nothing answers at
the URL, the key is refused (401/403) or the account has no balance (402), the model does not exist, or
the server kept failing (HTTP 429/5xx, time-outs) until the client's deadline. `endpoint_failure(record)`
names its class, in words fit to show a user, or returns None for anything else (a wrong answer, a step
limit, a harness error, a model error that may belong to one task).

The rule: when `STOP_AFTER` episodes *in a row* (in the order they finish) end with the same endpoint
failure class, the bench stops starting episodes: the first episodes of a bench with a wrong URL or key,
or a server that died half-way. Episodes recorded with an endpoint failure are run again on resume (see
`results.finished_keys`), since they measured nothing.
"""

from __future__ import annotations

import re
from typing import Any

from toolmode.errors import ToolmodeError

STOP_AFTER = 3

_STATUS = re.compile(r"model API error (\d{3}) from ")
_GAVE_UP = re.compile(r"gave up after \d+ attempt\(s\) in [\d.]+ s \(deadline [\d.]+ s\): (.*)")
_SAME_ERROR = re.compile(r"gave up after \d+ attempts: the server answered the same error twice \((HTTP \d{3})")
_UNKNOWN_MODEL = re.compile(
    r"model.*(not exist|not found|does not exist|unknown|invalid)", re.IGNORECASE | re.DOTALL
)


def endpoint_failure(record: dict[str, Any]) -> str | None:
    """The endpoint failure class of an episode record (e.g. "HTTP 401: the API key is refused"), or None."""
    if record.get("stopped") != "error" or not isinstance(record.get("error"), str):
        return None
    error: str = record["error"]
    if error.startswith("cannot reach "):
        return "the endpoint is unreachable (connection refused or unknown host)"
    if m := _STATUS.match(error):
        status = int(m.group(1))
        if status == 401:
            return "HTTP 401: the API key is refused"
        if status == 403:
            return "HTTP 403: access is forbidden for this key"
        if status == 402:
            return "HTTP 402: the account has no balance"
        if status == 404 or (status == 400 and _UNKNOWN_MODEL.search(error.split(": ", 1)[-1])):
            return f"HTTP {status}: the model is not known at this endpoint"
        return None
    if m := _SAME_ERROR.match(error):  # the client takes the same HTTP 500 twice as permanent
        return f"{m.group(1)} on every retry (the same error twice)"
    if m := _GAVE_UP.match(error):
        cause = m.group(1)
        if status_match := re.match(r"HTTP (\d{3})", cause):
            return f"HTTP {status_match.group(1)} on every retry until the deadline"
        if cause.startswith("request timed out"):
            return "every request timed out until the deadline"
        if cause.startswith("connection failed"):
            return "the connection failed on every retry until the deadline"
    return None


class EarlyStop:
    """Watches finished episodes; `reason` is set once `after` in a row share one endpoint failure class."""

    def __init__(self, after: int = STOP_AFTER) -> None:
        self.after = after
        self.reason: str | None = None
        self._run: list[dict[str, Any]] = []

    def observe(self, record: dict[str, Any]) -> str | None:
        """Count one finished episode; return the reason to stop (once it is known), else None."""
        if self.reason is not None or self.after <= 0:
            return self.reason
        failure = endpoint_failure(record)
        if failure is None or (self._run and endpoint_failure(self._run[0]) != failure):
            self._run = []
        if failure is not None:
            self._run.append(record)
        if len(self._run) >= self.after:
            first = self._run[0]
            self.reason = (
                f"{len(self._run)} episodes in a row failed the same way: {failure} "
                f"(e.g. {first['task']} / {first['mode']}: {first['error']})"
            )
        return self.reason


class BenchStopped(ToolmodeError, RuntimeError):
    """The bench stopped early (see EarlyStop); `reason` says why, `running` episodes were abandoned."""

    def __init__(self, reason: str, running: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.running = running
