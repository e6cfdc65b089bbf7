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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from toolmode import redact, runctx
from toolmode.events import ReasoningDelta, Retry, TextDelta
from toolmode.models.encoding import RequestEncoder
from toolmode.models.presets import Preset, preset_for
from toolmode.models.recovery import TextCallRecovery
from toolmode.models.reply import Reply, ToolCall
from toolmode.usage import Usage

if TYPE_CHECKING:  # the SDK takes ~0.5 s to import: loaded by the first client, not by `import toolmode`
    import openai

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


class ModelError(RuntimeError):
    """A model request failed for good; the message is one line, fit to show a user."""


class MissingApiKey(ModelError):
    """The endpoint needs an API key and none was found."""


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None, *, unreachable: bool = False,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable  # nothing answered at all (connection refused, DNS failure)
        self.status = status


MAX_UNREACHABLE_ATTEMPTS = 3
DEFAULT_DEADLINE = 300.0
_JSON_HEADERS: Any = {"headers": {"Content-Type": "application/json"}}


RetryCallback = Callable[[int, float, str], None]


class ModelClient:
    """Talks to one model on one OpenAI-compatible endpoint.

    `model.chat(messages, tools) -> Reply`. Retries 429 / 5xx / timeouts / broken replies with exponential
    backoff (or the server's Retry-After) until `deadline` seconds have passed since the request began;
    the same HTTP 500 twice in a row is taken as permanent (a server that cannot render this conversation
    will not learn to). `deadline` defaults to 300 s, or `request_timeout` when that is longer.
    Tool calls written as text are read by a `TextCallRecovery` post-processor.
    """

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

    def chat(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Reply:
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
                if exc.status == 500 and str(exc) == last_500:
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
                        f"(deadline {deadline:g} s): {exc}"
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
        self.recovery.recover(reply, tools)
        return reply

    def _client_for(self, remaining: float) -> openai.OpenAI:
        """The SDK client, with a shorter timeout when the overall deadline is nearer than a full request."""
        if remaining >= self.request_timeout:
            return self._client
        return self._client.with_options(timeout=max(remaining, 1.0))

    def _once(self, body: dict[str, Any], remaining: float) -> Reply:
        # The SDK's low-level `post` sends our own JSON as is: the typed `create()` walks every message
        # and tool schema through its TypedDict transformer, which cost ~8 ms a request at 50 tools.
        head = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        content = self._encoder.encode(head, body["messages"], body["tools"])
        try:
            with _translate_errors(self):
                data: Any = self._client_for(remaining).post(
                    "/chat/completions", content=content, cast_to=object, options=_JSON_HEADERS
                )
        except ValueError as exc:  # a body that is not JSON
            raise _Retryable(f"malformed reply from the server: {exc}") from None
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise _Retryable(f"malformed reply from the server: {str(data)[:200]!r}") from None
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
        run = runctx.current()
        with _translate_errors(self):
            request = {k: v for k, v in body.items() if k != "tools" or v}
            stream = self._client_for(remaining).chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            )
            with stream:  # closed (connection released) also when a cancellation stops the run mid-stream
                for chunk in stream:
                    data = chunk.model_dump()
                    if data.get("usage"):
                        usage_data = data["usage"]
                    for choice in data.get("choices") or []:
                        finish = self._delta(choice, content, reasoning, calls, run) or finish
                    if run is not None:
                        run.limits.check_time()
        if finish is None:
            raise _Retryable("the stream ended before the reply was complete")
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

    def __init__(self, client: ModelClient) -> None:
        self.client = client

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
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
        return False


def _arguments_text(arguments: Any) -> str:
    """Tool-call arguments as JSON text; some servers send an object where the API says string."""
    if arguments is None or arguments == "":
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


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
