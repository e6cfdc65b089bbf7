"""Export set-up for the `toolmode` command: OTLP over HTTP, configured by OpenTelemetry's own variables.

A library application configures its own providers; the command is the application here, so when no
provider is set (the process was not started by `opentelemetry-instrument`, say) it sets up the SDK with
the OTLP/HTTP exporters, which read OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318),
OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME (default here: toolmode), OTEL_RESOURCE_ATTRIBUTES and
the other standard variables. OTEL_TRACES_EXPORTER=none or OTEL_METRICS_EXPORTER=none leave one signal out
(a backend that takes traces only, such as Langfuse or Phoenix, would refuse the metrics).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from opentelemetry import metrics, trace

SERVICE_NAME = "toolmode"


def _service_named() -> bool:
    """Whether the environment names the service (then it wins over toolmode's default name)."""
    given = os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    return bool(os.environ.get("OTEL_SERVICE_NAME")) or any(
        part.split("=", 1)[0].strip() == "service.name" for part in given.split(","))


def _wanted(signal: str) -> bool:
    """Whether OTEL_<SIGNAL>_EXPORTER leaves this signal on (anything but `none`)."""
    return os.environ.get(f"OTEL_{signal}_EXPORTER", "").strip().lower() != "none"


def configure_from_environment() -> Callable[[], None]:
    """Set up OTLP/HTTP export of spans and metrics unless a provider is already set; return the function
    that flushes what is pending and shuts down what this set up (call it before the process exits)."""
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create({} if _service_named() else {"service.name": SERVICE_NAME})
    shutdowns: list[Callable[[], object]] = []
    if _wanted("TRACES") and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(tracer_provider)
        shutdowns.append(tracer_provider.shutdown)
    if _wanted("METRICS") and type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider":  # none set yet
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        meter_provider = MeterProvider(resource=resource,
                                       metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
        metrics.set_meter_provider(meter_provider)
        shutdowns.append(meter_provider.shutdown)

    def shutdown() -> None:
        # side by side: with the collector down, each waits out its exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT)
        threads = [threading.Thread(target=stop, name="toolmode-otel-flush", daemon=True) for stop in shutdowns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return shutdown
