"""`toolmode run --otel` exports over OTLP/HTTP: a receiver on 127.0.0.1 decodes what arrives with
opentelemetry-proto (ExportTraceServiceRequest, ExportMetricsServiceRequest) and the test checks it."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from toolmode.testing import call, reply

KINDS = {"/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
         "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse)}


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP (protobuf) endpoint that keeps every decoded request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: dict[str, list[Any]] = {path: [] for path in KINDS}
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        kinds = KINDS.get(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if kinds is None or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request_type, response_type = kinds
        message = request_type()
        message.ParseFromString(body)
        with self.server.lock:
            self.server.received[self.path].append(message)
        answer = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def value(v: AnyValue) -> Any:
    """The Python value of an OTLP AnyValue."""
    which = v.WhichOneof("value")
    if which == "array_value":
        return tuple(value(x) for x in v.array_value.values)
    return getattr(v, which) if which else None


def attributes(items: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in items}


def toolmode_run(server: Any, receiver: Receiver, workspace: Any, *options: str, **env: str) -> None:
    """`toolmode run --otel` against the scripted `server`, exporting to `receiver`; it answers 42."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLMODE_OTEL"))}
    environ.update(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.server_address[1]}", **env)
    done = subprocess.run(
        [sys.executable, "-m", "toolmode", "run", "what is 6*7?", "--mode", "react", "--model", "m",
         "--base-url", server.base_url, "--no-trace", "--quiet", "--workspace", str(workspace), *options],
        env=environ, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"
    assert done.stderr == ""


def test_toolmode_run_with_otel_exports_spans_and_metrics_over_otlp_http(scripted, receiver, tmp_path) -> None:
    server = scripted([call("calculator", expression="6*7"), reply("42")])
    toolmode_run(server, receiver, tmp_path, "--otel", OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test")

    spans: list[Any] = []
    for request in receiver.received["/v1/traces"]:
        for rs in request.resource_spans:
            resource = attributes(rs.resource.attributes)
            assert resource["service.name"] == "toolmode" and resource["deployment.environment"] == "test"
            for ss in rs.scope_spans:
                assert ss.scope.name == "toolmode"  # (older exporters leave the scope's schema_url out)
                spans += ss.spans
    assert sorted(s.name for s in spans) == ["chat m", "chat m", "execute_tool calculator", "invoke_agent"]
    (run,) = [s for s in spans if s.name == "invoke_agent"]
    (tool_span,) = [s for s in spans if s.name == "execute_tool calculator"]
    chats = [s for s in spans if s.name == "chat m"]
    assert not run.parent_span_id and {s.parent_span_id for s in [*chats, tool_span]} == {run.span_id}
    assert {s.kind for s in chats} == {run.SPAN_KIND_CLIENT} and tool_span.kind == run.SPAN_KIND_INTERNAL
    assert len({s.trace_id for s in spans}) == 1
    run_attrs = attributes(run.attributes)
    chat_attrs = [attributes(s.attributes) for s in chats]
    assert run_attrs["gen_ai.operation.name"] == "invoke_agent" and run_attrs["toolmode.stopped"] == "answer"
    assert {a["gen_ai.operation.name"] for a in chat_attrs} == {"chat"}
    assert {a["gen_ai.request.model"] for a in chat_attrs} == {"m"}
    assert sorted(a["gen_ai.response.finish_reasons"] for a in chat_attrs) == [("stop",), ("tool_call",)]
    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens"):
        assert run_attrs[key] == sum(a[key] for a in chat_attrs)  # the run's usage is the sum over its requests
    assert run_attrs["gen_ai.usage.input_tokens"] > 0
    tool_attrs = attributes(tool_span.attributes)
    assert tool_attrs["gen_ai.tool.name"] == "calculator" and tool_attrs["gen_ai.operation.name"] == "execute_tool"
    assert "gen_ai.tool.call.arguments" not in tool_attrs  # content stays off

    metrics = {}
    for request in receiver.received["/v1/metrics"]:
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    metrics[metric.name] = metric
    tokens = metrics["gen_ai.client.token.usage"]
    assert tokens.unit == "{token}"
    by_type = {attributes(p.attributes)["gen_ai.token.type"]: p for p in tokens.histogram.data_points}
    assert by_type["input"].count == 2 and by_type["input"].sum == run_attrs["gen_ai.usage.input_tokens"]
    assert by_type["output"].sum == run_attrs["gen_ai.usage.output_tokens"]
    assert list(by_type["input"].explicit_bounds)[:3] == [1, 4, 16]
    assert metrics["gen_ai.client.operation.duration"].unit == "s"


def test_the_standard_variables_turn_it_on_and_leave_a_signal_out(scripted, receiver, tmp_path) -> None:
    server = scripted([call("calculator", expression="6*7"), reply("42")])
    toolmode_run(server, receiver, tmp_path, TOOLMODE_OTEL="1", OTEL_METRICS_EXPORTER="none",
                 OTEL_SERVICE_NAME="my-agents")
    assert receiver.received["/v1/metrics"] == []
    batches = [rs for request in receiver.received["/v1/traces"] for rs in request.resource_spans]
    assert {attributes(rs.resource.attributes)["service.name"] for rs in batches} == {"my-agents"}
    assert sorted(s.name for rs in batches for ss in rs.scope_spans for s in ss.spans) == [
        "chat m", "chat m", "execute_tool calculator", "invoke_agent"]


def test_without_otel_the_command_exports_nothing(scripted, receiver, tmp_path) -> None:
    server = scripted([call("calculator", expression="6*7"), reply("42")])
    toolmode_run(server, receiver, tmp_path)
    assert receiver.received == {"/v1/traces": [], "/v1/metrics": []}
