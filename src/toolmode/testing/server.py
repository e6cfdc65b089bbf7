"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

Runs `http.server.ThreadingHTTPServer` in a daemon thread, speaking HTTP/1.1 with exact
Content-Length (or chunked SSE) so a client's keep-alive connection pool works as against a real API.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import select
import socket
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolmode.testing import wire
from toolmode.testing.script import FaultSpec, ReplySpec, Script, ScriptError, ScriptFn
from toolmode.testing.usage import Encode, UsageMeter, UsageStyle

log = logging.getLogger("toolmode.testing")

_SLOW_DEFAULT = ReplySpec(content="(slow scripted reply)")
_CUT_DEFAULT = ReplySpec(content="This reply is cut short by the scripted server before it ends.")
_HELD_DEFAULT = ReplySpec(content="This reply comes slowly, or stops half-way and holds the line.")
_PING = b": ping\n\n"


class ScriptedModelServer:
    """An OpenAI-compatible chat completions endpoint that replays a script, one item per request.

    `script` is a list of items (see `toolmode.testing.script`) or a callable `(request, index) -> item`.
    `usage_style` picks the usage shape ("deepseek" adds `prompt_cache_hit/miss_tokens`); `cache_block`
    rounds cached tokens down to a multiple of it (0 = exact). `port=0` picks a free port. `slots`, if set,
    is reported as `total_slots` at `GET /props`, as llama.cpp's server does.
    """

    def __init__(
        self,
        script: Sequence[Any] | ScriptFn,
        usage_style: UsageStyle = "deepseek",
        *,
        cache_block: int = 0,
        model: str = "scripted-model",
        port: int = 0,
        encode: Encode | None = None,
        slots: int | None = None,
    ) -> None:
        self.model = model
        self.slots = slots
        self.port = port
        self._script = Script(script)
        self._meter = UsageMeter(usage_style, cache_block=cache_block, encode=encode)
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._server_seconds = 0.0
        self._delay_seconds = 0.0
        self._call_ids = 0
        self._connections = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> str:
        """Start serving (idempotent) and return the base URL, `http://127.0.0.1:PORT/v1`."""
        if self._httpd is None:
            self._meter.warm()
            self._stopping.clear()
            self._httpd = _HTTPServer(("127.0.0.1", self.port), self)
            self.port = self._httpd.server_address[1]
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"scripted-model-server:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving and close every open connection (idempotent)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # observations

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1` (still readable after stop()); the server must have been started."""
        if self._thread is None:
            raise RuntimeError(
                "ScriptedModelServer was never started; call start() or use it as a context manager"
            )
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed JSON bodies of every chat completion request, in arrival order (faults included)."""
        with self._lock:
            return list(self._requests)

    @property
    def server_seconds(self) -> float:
        """Seconds spent handling chat requests, tokenising included, deliberate 'slow' delays excluded."""
        with self._lock:
            return self._server_seconds

    @property
    def delay_seconds(self) -> float:
        """Seconds slept on purpose by 'slow' faults."""
        with self._lock:
            return self._delay_seconds

    @property
    def connections(self) -> int:
        """How many TCP connections clients have opened (1 for a client whose keep-alive pool works)."""
        with self._lock:
            return self._connections

    @property
    def replies_used(self) -> int:
        """How many script items have been consumed."""
        return self._script.taken

    # request handling (called from handler threads)

    def _chat(self, handler: _Handler, raw: bytes) -> None:
        start, slept = time.perf_counter(), 0.0
        try:
            try:
                body = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                body = None
            if not isinstance(body, dict):
                handler.send_json(
                    400, wire.error_body(400, "scripted server: request body is not a JSON object")
                )
                return
            try:
                with self._lock:  # one lock, so request order and script order agree
                    self._requests.append(body)
                    number = len(self._requests)
                    spec = self._script.take(body)
            except ScriptError as exc:
                log.warning("scripted server: %s", exc)
                handler.send_json(400, wire.error_body(400, f"scripted server: {exc}", code="script_error"))
                return
            if isinstance(spec, ReplySpec):
                self._answer(handler, body, spec, number)
            elif spec.kind == "slow":
                began = time.perf_counter()
                self._stopping.wait(spec.delay)
                slept = time.perf_counter() - began
                if self._stopping.is_set():  # stopped mid-delay: drop the request as a dying server would
                    handler.close_connection = True
                    return
                self._answer(handler, body, spec.then or _SLOW_DEFAULT, number)
            elif spec.kind == "cut_stream":
                self._answer(handler, body, spec.then or _CUT_DEFAULT, number, cut=True)
            elif spec.kind in ("keepalive", "trickle", "stall"):
                slept = self._hold(handler, body, spec, number)
            else:
                self._fault(handler, spec)
        finally:
            with self._lock:
                self._server_seconds += time.perf_counter() - start - slept
                self._delay_seconds += slept

    def _answer(
        self, handler: _Handler, body: dict[str, Any], spec: ReplySpec, number: int, *, cut: bool = False
    ) -> None:
        spec = self._with_call_ids(spec)
        usage = self._meter.usage(body, spec)
        if spec.usage:  # scripted extras such as OpenRouter's "cost", or overridden counts
            usage = {**usage, **spec.usage}
        reply_id, created = f"chatcmpl-scripted-{number}", int(time.time())
        model = str(body.get("model") or self.model)
        if body.get("stream") is True:
            options = body.get("stream_options") or {}
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            chunks = wire.stream_chunks(
                spec, id=reply_id, model=model, created=created, usage=usage if include_usage else None
            )
            handler.send_sse(chunks, cut=cut)
        else:
            reply = wire.completion(spec, id=reply_id, model=model, created=created, usage=usage)
            handler.send_json(200, reply, cut=cut)

    def _payload(self, body: dict[str, Any], spec: ReplySpec, number: int) -> list[bytes]:
        """What `_answer` would send as the body: SSE events ([DONE] included) or one JSON document."""
        spec = self._with_call_ids(spec)
        usage = {**self._meter.usage(body, spec), **(spec.usage or {})}
        reply_id, created, model = f"chatcmpl-scripted-{number}", int(time.time()), str(body.get("model") or self.model)
        if body.get("stream") is True:
            options = body.get("stream_options") or {}
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            chunks = wire.stream_chunks(spec, id=reply_id, model=model, created=created,
                                        usage=usage if include_usage else None)
            return [*(_sse_event(c) for c in chunks), b"data: [DONE]\n\n"]
        return [json.dumps(wire.completion(spec, id=reply_id, model=model, created=created, usage=usage),
                           ensure_ascii=False).encode()]

    def _hold(self, handler: _Handler, body: dict[str, Any], spec: FaultSpec, number: int) -> float:
        """The faults that keep a connection open: keepalive, trickle, stall. Returns the seconds waited."""
        began = time.perf_counter()
        streamed = body.get("stream") is True
        if spec.kind == "keepalive":  # a 200 whose body never ends
            handler.open_chunked("text/event-stream" if streamed else "application/json")
            while not self._pause(handler, spec.interval):
                handler.send_chunk(_PING if streamed else b" ")
            return time.perf_counter() - began
        payload = self._payload(body, spec.then or _HELD_DEFAULT, number)
        if spec.kind == "trickle":
            data = b"".join(payload)
            if streamed:
                handler.open_chunked("text/event-stream")
            else:
                handler.open_body(len(data))
            for i in range(len(data)):
                if self._pause(handler, spec.interval):
                    return time.perf_counter() - began
                if streamed:
                    handler.send_chunk(data[i:i + 1])
                else:
                    handler.wfile.write(data[i:i + 1])
            if streamed:
                handler.end_chunks()
            return time.perf_counter() - began
        # stall: half the reply, then hold the line (pinging if asked) until the client leaves
        if streamed:
            handler.open_chunked("text/event-stream")
            for event in payload[: max(1, (len(payload) - 1) // 2)]:
                handler.send_chunk(event)
        else:
            handler.open_body(len(payload[0]))
            handler.wfile.write(payload[0][: len(payload[0]) // 2])
        while not self._pause(handler, spec.interval or 0.05):
            if spec.interval and streamed:
                handler.send_chunk(_PING)
        return time.perf_counter() - began

    def _pause(self, handler: _Handler, seconds: float) -> bool:
        """Wait `seconds`; True when the server is stopping or the client has closed the connection."""
        if self._stopping.wait(seconds):
            handler.close_connection = True
            return True
        if handler.client_left():
            handler.close_connection = True
            return True
        return False

    def _with_call_ids(self, spec: ReplySpec) -> ReplySpec:
        if all(c.id for c in spec.tool_calls):
            return spec
        with self._lock:
            filled = []
            for c in spec.tool_calls:
                if not c.id:
                    self._call_ids += 1
                    c = dataclasses.replace(c, id=f"call_{self._call_ids}")
                filled.append(c)
        return dataclasses.replace(spec, tool_calls=tuple(filled))

    def _fault(self, handler: _Handler, spec: FaultSpec) -> None:
        if spec.kind == "429":
            message = spec.message or "Rate limit reached (scripted fault). Please retry after a moment."
            retry = f"{spec.retry_after:g}"
            handler.send_json(429, wire.error_body(429, message), headers={"Retry-After": retry})
        elif spec.kind == "500":
            message = (
                spec.message or "The server had an error while processing your request (scripted fault)."
            )
            handler.send_json(500, wire.error_body(500, message))
        elif spec.kind == "bad_body":
            handler.send_bytes(200, spec.body.encode(), spec.content_type)
        else:  # "status"
            message = spec.message or f"scripted fault: HTTP {spec.status}"
            handler.send_json(spec.status, wire.error_body(spec.status, message, spec.type, spec.code))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], owner: ScriptedModelServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that cut its connection (a timed-out or cancelled request) is no server error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def track(self, conn: socket.socket, *, alive: bool) -> None:
        with self._connections_lock:
            if alive:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def close_connections(self) -> None:
        """Shut down kept-alive connections, or their handler threads would keep answering after stop()."""
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "toolmode-scripted/0.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; don't wait for ACKs
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, alive=True)
        owner = self.server.owner
        with owner._lock:
            owner._connections += 1

    def finish(self) -> None:
        self.server.track(self.connection, alive=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._read_body()
        if self._path() in ("/v1/models", "/models"):
            model = self.server.owner.model
            data = [{"id": model, "object": "model", "created": 0, "owned_by": "toolmode"}]
            self.send_json(200, {"object": "list", "data": data})
        elif self._path() == "/props" and self.server.owner.slots is not None:
            self.send_json(200, {"total_slots": self.server.owner.slots})
        else:
            self._not_found()

    def do_POST(self) -> None:
        raw = self._read_body()
        if self._path() in ("/v1/chat/completions", "/chat/completions"):
            self._responded = False
            try:
                self.server.owner._chat(self, raw)
            except OSError:
                self.close_connection = True  # the client gave up (e.g. timed out during a 'slow' fault)
            except Exception as exc:
                log.exception("scripted server: internal error")
                self.close_connection = True
                if not self._responded:  # a 400, so the client does not retry past the bug
                    message = f"scripted server: internal error: {type(exc).__name__}: {exc}"
                    self.send_json(400, wire.error_body(400, message, code="scripted_server_error"))
        else:
            self._not_found()

    def send_response(self, code: int, message: str | None = None) -> None:
        """Send the status line (and remember that a response has begun)."""
        self._responded = True
        super().send_response(code, message)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def _not_found(self) -> None:
        message = f"scripted server: no route for {self.command} {self.path}"
        self.send_json(404, wire.error_body(404, message, code="unknown_url"))

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_json(
        self, status: int, obj: Any, *, headers: dict[str, str] | None = None, cut: bool = False
    ) -> None:
        """Send `obj` as JSON; with `cut`, promise the full length but close after half the body."""
        body = json.dumps(obj, ensure_ascii=False).encode()
        self.send_bytes(status, body, "application/json", headers=headers, cut=cut)

    def send_bytes(
        self,
        status: int,
        body: bytes,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        cut: bool = False,
    ) -> None:
        """Send a complete response with an exact Content-Length (or half of it, then close, with `cut`)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if cut else body)
        if cut:
            self.close_connection = True

    def open_body(self, length: int, content_type: str = "application/json") -> None:
        """Send a 200's headers promising `length` bytes of body (written by the caller)."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def open_chunked(self, content_type: str) -> None:
        """Send a 200's headers for a chunked body (SSE, or a JSON body of unknown length)."""
        self.send_response(200)
        self.send_header("Content-Type", content_type + ("; charset=utf-8" if "event-stream" in content_type else ""))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_chunk(self, data: bytes) -> None:
        """Write one chunk of a chunked body, at once."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self) -> None:
        """Write the last (empty) chunk."""
        self.wfile.write(b"0\r\n\r\n")

    def client_left(self) -> bool:
        """Whether the client has closed its side of the connection (readable with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def send_sse(self, chunks: list[dict[str, Any]], *, cut: bool = False) -> None:
        """Stream `chunks` as server-sent events over chunked transfer encoding, ending with `[DONE]`.

        With `cut`, send the first half of the events and drop the connection mid-stream.
        """
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [_sse_event(c) for c in chunks]
        if cut:
            events = events[: max(1, len(events) // 2)]
        else:
            events.append(b"data: [DONE]\n\n")
        for event in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        if cut:
            self.close_connection = True
        else:
            self.wfile.write(b"0\r\n\r\n")


def _sse_event(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
