"""Chat-completions client for any OpenAI-compatible endpoint, on the official `openai` SDK.

The SDK does the HTTP; this module adds what agents need on top: retries with backoff under an overall
deadline (honouring Retry-After), one-line errors quoting the server, usage normalised across providers,
`reasoning_content` kept, and recovery of tool calls that small models write as text.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from toolmode import redact, runctx
from toolmode.defaults import DEFAULT_IDLE_TIMEOUT
from toolmode.events import ReasoningDelta, Retry, TextDelta
from toolmode.models.bounded import BoundedRequest, Exchange, Overdue
from toolmode.models.encoding import RequestEncoder
from toolmode.models.errors import MissingApiKey, ModelError
from toolmode.models.presets import Preset, preset_for
from toolmode.models.recovery import TextCallRecovery
from toolmode.models.reply import Reply, ToolCall
from toolmode.models.text_calls import RUN_CODE
from toolmode.usage import Usage

if TYPE_CHECKING:  # the SDK takes ~0.5 s to import: loaded by the first client, not by `import toolmode`
    import openai

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None, *, unreachable: bool = False,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable  # nothing answered at all (connection refused, DNS failure)
        self.status = status


MAX_UNREACHABLE_ATTEMPTS = 3
DEFAULT_DEADLINE = 300.0
SNIPPET_CHARS = 200  # of a malformed reply body, quoted in the error
_JSON_HEADERS: Any = {"headers": {"Content-Type": "application/json"}}


RetryCallback = Callable[[int, float, str], None]


class ModelClient:
    """Talks to one model on one OpenAI-compatible endpoint.

    `model.chat(messages, tools) -> Reply`. Retries 429 / 5xx / timeouts / broken replies with exponential
    backoff (or the server's Retry-After) until `deadline` seconds have passed since the request began.
    With a local preset (llamacpp, vllm, ollama) the same HTTP 500 twice in a row is taken as permanent (a
    server that cannot render this conversation will not learn to); hosted APIs get every retry.
    `deadline` defaults to 300 s, or `request_timeout` when that is longer.

    Every attempt, streamed or not, ends within `request_timeout` seconds (keep-alive comments and a reply
    sent a byte at a time included), the deadline and the run's own deadline, and at once when the run is
    cancelled; a streamed reply that has started and then sends no event for `idle_timeout` seconds
    (default 60; None: no limit) is given up and retried.
    Tool calls written as text are read by a `TextCallRecovery` post-processor.
    """

    # Every wait above is bounded by the run's limits and ends on its cancellation (`BoundedRequest`,
    # `Limits.sleep`), so the loop calls `chat` on the run's own thread (`models.base.ask_model`).
    interruptible = True

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        preset: str | None = None,
        request_timeout: float = 120.0,
        deadline: float | None = None,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        stream: bool = False,
        recover_text_calls: bool = True,
        recover_code_blocks: bool | None = None,
        params: dict[str, Any] | None = None,
        on_retry: RetryCallback | None = None,
    ) -> None:
        self.preset: Preset = preset_for(preset, base_url)
        self.base_url = base_url or self.preset.base_url
        self.model = model or self.preset.model
        self.stream = stream
        self.deadline = max(DEFAULT_DEADLINE, request_timeout) if deadline is None else deadline
        self.request_timeout = request_timeout
        if idle_timeout is not None and not idle_timeout > 0:
            raise ValueError(f"idle_timeout must be more than 0 seconds (or None for no limit), got {idle_timeout!r}")
        self.idle_timeout = idle_timeout
        self._encoder = RequestEncoder()
        self.recover_text_calls = recover_text_calls
        self.recover_code_blocks = self.preset.local if recover_code_blocks is None else recover_code_blocks
        self.recovery = TextCallRecovery(text_calls=recover_text_calls, code_blocks=self.recover_code_blocks)
        self.params = dict(params or {})
        self.on_retry = on_retry
        key = api_key or self._key_from_env(api_key_env)
        redact.remember(key)  # never written to a trace or a bench file
        import openai

        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=key, timeout=request_timeout, max_retries=0
        )

    def _key_from_env(self, api_key_env: str | None) -> str:
        env_name = api_key_env or self.preset.api_key_env
        if env_name is None:
            return "not-needed"  # the SDK insists on a value; local servers ignore it
        value = os.environ.get(env_name, "").strip()
        if not value:
            raise MissingApiKey(
                f"no API key: set {env_name} (e.g. `export {env_name}=sk-...`) for {self.base_url}, "
                "or pass --api-key-env NAME / api_key=..., or point --base-url at a local server"
            )
        return value

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def request_info(self) -> dict[str, Any]:
        """What every request carries besides the conversation (recorded in the trace, for replay)."""
        return {"model": self.model, "stream": self.stream, "params": dict(self.params)}

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = (), *,
             code_tool: str | None = RUN_CODE) -> Reply:
        """Send one chat-completions request (retrying transient failures) and return the reply.

        Inside a run, the run's deadline also bounds the retries, retry waits end at once on cancellation,
        retries are published as `Retry` events and streamed text as `TextDelta` / `ReasoningDelta`.
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools, **self.params}
        started = time.monotonic()
        run = runctx.current()
        deadline = self.deadline if run is None else min(self.deadline, run.limits.remaining())
        attempt = unreachable = 0
        last_500: str | None = None
        while True:
            attempt += 1
            remaining = deadline - (time.monotonic() - started)
            try:
                reply = self._stream(body, remaining) if self.stream else self._once(body, remaining)
                break
            except _Retryable as exc:
                if exc.status == 500 and str(exc) == last_500 and self.preset.repeated_500_is_final:
                    raise ModelError(
                        f"gave up after {attempt} attempts: the server answered the same error twice ({exc}); "
                        "retrying will not help"
                    ) from None
                last_500 = str(exc) if exc.status == 500 else None
                unreachable = unreachable + 1 if exc.unreachable else 0
                if unreachable >= MAX_UNREACHABLE_ATTEMPTS:
                    raise ModelError(
                        f"cannot reach {self.base_url} after {attempt} attempts ({exc}); is the server running "
                        "and the URL right?"
                    ) from None
                elapsed = time.monotonic() - started
                wait = exc.retry_after if exc.retry_after is not None else min(0.5 * 2 ** (attempt - 1), 20.0)
                wait *= 1.0 if exc.retry_after is not None else random.uniform(0.8, 1.2)
                if elapsed + wait >= deadline:
                    raise ModelError(
                        f"gave up after {attempt} attempt(s) in {elapsed:.1f} s "
                        f"(deadline {deadline:.4g} s): {exc}"
                    ) from None
                if self.on_retry:
                    self.on_retry(attempt, wait, str(exc))
                if run is None:
                    time.sleep(wait)
                else:
                    run.publish(Retry(attempt, wait, str(exc)))
                    run.limits.sleep(wait)
        reply.model_seconds = time.monotonic() - started
        reply.attempts = attempt
        self.recovery.recover(reply, tools, code_tool)  # the mode names its code tool (`code_tool`)
        return reply

    def _client_for(self, remaining: float) -> openai.OpenAI:
        """The SDK client, with a shorter timeout when the overall deadline is nearer than a full request."""
        if remaining >= self.request_timeout:
            return self._client
        return self._client.with_options(timeout=max(remaining, 1.0))

    def _once(self, body: dict[str, Any], remaining: float) -> Reply:
        # The SDK's low-level `post` sends our own JSON as is: the typed `create()` walks every message
        # and tool schema through its TypedDict transformer, which cost ~8 ms a request at 50 tools.
        content = self._body(body)

        def produce(exchange: Exchange) -> Iterator[tuple[Any, bytes]]:
            response = self._open(content, remaining, exchange)
            try:
                raw = response.read()
            finally:
                exchange.release()
                response.close()
            yield response, raw

        with _translate_errors(self), self._bounded(produce, remaining, idle=None) as request:
            ((response, raw),) = list(request)
        try:
            data: Any = json.loads(raw)
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _Retryable(f"malformed reply from the server: {_describe_body(response, raw)}") from None
        calls = [
            ToolCall(
                id=c.get("id") or f"call_{i}",
                name=(c.get("function") or {}).get("name", ""),
                arguments=_arguments_text((c.get("function") or {}).get("arguments")),
            )
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        return Reply(
            content=message.get("content"),
            tool_calls=calls,
            reasoning=message.get("reasoning_content") or message.get("reasoning"),
            usage=Usage.from_api(data.get("usage")),
            finish_reason=choice.get("finish_reason"),
            reported_cost=(data.get("usage") or {}).get("cost"),
        )

    def _stream(self, body: dict[str, Any], remaining: float) -> Reply:
        content: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage_data: dict[str, Any] | None = None
        finish: str | None = None
        done = False
        events = 0
        run = runctx.current()
        request_body = self._body({**body, "stream": True, "stream_options": {"include_usage": True}})

        def produce(exchange: Exchange) -> Iterator[str | tuple[Any, bytes]]:
            response = self._open(request_body, remaining, exchange)
            try:
                if not _is_event_stream(response):
                    yield response, _head_of_body(response)
                    return
                yield from _sse_data(response.iter_lines())
            finally:
                exchange.release()
                response.close()

        with _translate_errors(self, streamed=True), self._bounded(produce, remaining, self.idle_timeout) as request:
            for item in request:
                if isinstance(item, tuple):
                    raise _Retryable("malformed reply from the server: expected an event stream, got "
                                     f"{_describe_body(*item)}")
                if done:
                    continue  # read on to the end of the body, so the connection can be used again
                if item == "[DONE]":
                    done = True
                    continue
                events += 1
                data = _event_json(item)
                if data.get("error"):
                    raise _Retryable(f"the server sent an error in the stream: {_error_text(data['error'])}")
                if data.get("usage"):
                    usage_data = data["usage"]
                for choice in data.get("choices") or []:
                    finish = self._delta(choice, content, reasoning, calls, run) or finish
        if finish is None:
            raise _Retryable(f"the stream ended before the reply was complete ({events} event"
                             f"{'' if events == 1 else 's'} read)")
        return Reply(
            content="".join(content) or None,
            tool_calls=[
                ToolCall(id=s["id"] or f"call_{i}", name=s["name"], arguments=s["arguments"] or "{}")
                for i, s in sorted(calls.items())
            ],
            reasoning="".join(reasoning) or None,
            usage=Usage.from_api(usage_data),
            finish_reason=finish,
            reported_cost=(usage_data or {}).get("cost"),
        )

    def _body(self, body: dict[str, Any]) -> bytes:
        """The request body as UTF-8 JSON (encoded by parts, see `RequestEncoder`)."""
        head = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        return self._encoder.encode(head, body["messages"], body["tools"])

    def _open(self, content: bytes, remaining: float, exchange: Exchange) -> Any:
        """POST the body; the response once its headers are in, its body unread (status errors raised)."""
        import httpx2

        response = self._client_for(remaining).post(
            "/chat/completions", content=content, cast_to=httpx2.Response, options=_JSON_HEADERS, stream=True
        )
        exchange.attach(response)
        return response

    def _bounded(self, produce: Any, remaining: float, idle: float | None) -> BoundedRequest[Any]:
        """A request bounded by the request timeout, the deadline, `idle` and the current run's limits."""
        run = runctx.current()
        return BoundedRequest(produce, total=min(self.request_timeout, max(remaining, 0.0)), idle=idle,
                              check=run.limits.check_time if run is not None else None)

    @staticmethod
    def _delta(choice: dict[str, Any], content: list[str], reasoning: list[str], calls: dict[int, dict[str, Any]],
               run: runctx.RunContext | None) -> str | None:
        """Add one streamed choice delta to the pieces (publishing text as it comes); its finish_reason."""
        delta = choice.get("delta") or {}
        if delta.get("content"):
            content.append(delta["content"])
            if run is not None:
                run.publish(TextDelta(run.step, delta["content"]))
        thought = delta.get("reasoning_content") or delta.get("reasoning")
        if thought:
            reasoning.append(thought)
            if run is not None:
                run.publish(ReasoningDelta(run.step, thought))
        for tc in delta.get("tool_calls") or []:
            slot = calls.setdefault(tc.get("index", 0), {"id": None, "name": "", "arguments": ""})
            slot["id"] = tc.get("id") or slot["id"]
            fn = tc.get("function") or {}
            slot["name"] += fn.get("name") or ""
            piece = fn.get("arguments")
            if piece is not None:
                slot["arguments"] += piece if isinstance(piece, str) else _arguments_text(piece)
        return choice.get("finish_reason")


class _translate_errors:
    """Map SDK exceptions to a retry or a one-line ModelError quoting the server's message."""

    def __init__(self, client: ModelClient, *, streamed: bool = False) -> None:
        self.client = client
        self.streamed = streamed

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:  # type: ignore[exit-return]
        if exc is None:
            return False
        import openai

        where = f"{self.client.base_url} (model {self.client.model})"
        if isinstance(exc, openai.APIStatusError):
            message = _server_message(exc)
            if exc.status_code in RETRYABLE_STATUS:
                raise _Retryable(f"HTTP {exc.status_code}: {message}", _retry_after(exc),
                                 status=exc.status_code) from None
            hint = {401: " (check the API key)", 402: " (top up the account balance)"}.get(exc.status_code, "")
            raise ModelError(f"model API error {exc.status_code} from {where}: {message}{hint}") from None
        if isinstance(exc, openai.APITimeoutError):
            raise _Retryable("request timed out") from None
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            # A refused connection or failed name lookup means nothing is listening: few retries make sense.
            unreachable = "ConnectError" in type(cause).__name__ or isinstance(cause, ConnectionRefusedError)
            # The user reads this line: say what happened, not which httpx class said it (unless it says nothing).
            detail = str(cause).strip() or type(cause).__name__
            raise _Retryable(f"connection failed: {detail}", unreachable=unreachable) from None
        if isinstance(exc, openai.APIError):
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if isinstance(exc, Overdue):
            raise _Retryable(self._overdue(exc)) from None
        import httpx2

        if isinstance(exc, httpx2.TimeoutException):  # reading the body (the SDK maps only the request's own)
            raise _Retryable("request timed out") from None
        if isinstance(exc, httpx2.RequestError):
            detail = str(exc).strip() or type(exc).__name__
            raise _Retryable(f"the {'stream' if self.streamed else 'reply'} was cut: {detail}") from None
        return False

    def _overdue(self, exc: Overdue) -> str:
        if exc.why == "idle":
            return f"the stream went quiet: no event for {exc.seconds:g} s (idle_timeout)"
        if exc.seconds < self.client.request_timeout:
            return f"the request was stopped at the deadline, after {exc.seconds:.1f} s"
        return f"request timed out after {exc.seconds:g} s (request_timeout)"


def _arguments_text(arguments: Any) -> str:
    """Tool-call arguments as JSON text; some servers send an object where the API says string."""
    if arguments is None or arguments == "":
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _is_event_stream(response: Any) -> bool:
    return str(response.headers.get("content-type", "")).partition(";")[0].strip().lower() == "text/event-stream"


def _head_of_body(response: Any, limit: int = 4096) -> bytes:
    """The first bytes of a body that should have been an event stream (enough to quote)."""
    head = b""
    for chunk in response.iter_bytes():
        head += chunk
        if len(head) >= limit:
            break
    return head


def _sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The data of each server-sent event; comments (keep-alive pings) and other fields are skipped."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def _event_json(text: str) -> dict[str, Any]:
    """One streamed event's JSON object; a retry when it is not one, quoting what came."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise _Retryable(f"malformed event in the stream: {_snippet(text)}")
    return data


def _error_text(error: Any) -> str:
    if isinstance(error, dict) and error.get("message"):
        return _snippet(str(error["message"]))
    return _snippet(json.dumps(error, ensure_ascii=False) if not isinstance(error, str) else error)


def _describe_body(response: Any, raw: bytes) -> str:
    """`HTTP 200, text/html, 29 bytes: '<html>...'`: what came back instead of a chat completion."""
    kind = str(response.headers.get("content-type", "")).strip() or "no content type"
    text = raw.decode("utf-8", errors="replace")
    return f"HTTP {response.status_code}, {kind}, {len(raw):,} bytes: {_snippet(text)}"


def _snippet(text: str) -> str:
    """The start of a server's text, on one line, escaped and quoted."""
    from toolmode.textsafe import escape_control

    text = " ".join(text.split())
    cut = text[:SNIPPET_CHARS] + ("…" if len(text) > SNIPPET_CHARS else "")
    return f"'{escape_control(cut)}'" if cut else "(empty)"


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    try:
        text = exc.response.text
    except Exception:  # a streamed error body may already be consumed
        text = ""
    return (text or str(exc)).strip().replace("\n", " ")[:300]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), 60.0))
    except ValueError:
        return None
